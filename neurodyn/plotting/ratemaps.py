"""Figures of rate maps and autocorrelograms (``ax=None``/``fig=None``, figures returned)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np

from _runkit import BadInput, BadType
from _runkit.notebook import notebook_figure

from ..spatial.gridscores import GridScore, _check_autocorr
from ..spatial.ratemaps import RateMaps
from . import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_rate_maps", "plot_autocorrelogram"]


#: the colour of the bins the animal never visited (no rate), unlike any of viridis
UNVISITED = "0.82"


def _viridis_blank_nan():
    import matplotlib

    return matplotlib.colormaps["viridis"].with_extremes(bad=UNVISITED)


def plot_rate_maps(
    maps: RateMaps,
    cells: np.ndarray | list[int] | None = None,
    ncols: int = 8,
    fig: Figure | None = None,
    title: str = "",
) -> Figure:
    """Draw a panel of rate maps on one colour scale.

    Parameters
    ----------
    maps : RateMaps
    cells : sequence of int, optional
        Cells to draw (default: the first ``min(cells, 32)``).
    ncols : int
        Panels per row, >= 1.
    fig : Figure or None
        Figure to draw into (it is cleared); a new one is created when omitted.
    title : str
        What the maps are (the title then says which cells and the unvisited bins' share).

    Returns
    -------
    matplotlib.figure.Figure
        Unvisited bins are grey (no rate, unlike a rate of 0, which is dark) and the title
        says what share of the box they are; the colour bar is labelled 'rate'. The caller
        closes it.
    """
    from matplotlib.figure import Figure

    cells, ncols = _checked_panel(maps, cells, ncols)
    nrows = -(-cells.size // ncols)
    if fig is None:
        fig = notebook_figure(Figure(figsize=(1.6 * ncols + 0.8, 1.6 * nrows),
                                     layout="constrained"))
    else:
        fig.clear()
    shown = maps.maps[cells]
    finite = shown[np.isfinite(shown)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    extent = (maps.x_edges[0], maps.x_edges[-1], maps.y_edges[0], maps.y_edges[-1])
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    image = _draw_panels(axes, shown, cells, extent, vmin, vmax)
    fig.colorbar(image, ax=axes, label="mean rate (a.u.)", shrink=0.8)
    unvisited = float(np.mean(~np.isfinite(shown[0])))
    fig.suptitle(f"{title or 'rate maps'} of {cells.size} of {maps.maps.shape[0]} cells; grey: "
                 f"bins never visited ({100 * unvisited:.0f}% of the box), no rate",
                 fontsize="medium")
    return fig


def _checked_panel(maps: RateMaps, cells, ncols) -> tuple[np.ndarray, int]:
    """The cells to draw (default: the first 32) and the panels per row (at most one per
    cell); ``BadInput`` for bad arguments."""
    if not isinstance(maps, RateMaps):
        raise BadType(f"maps must be a RateMaps, got {type(maps).__name__}", param="maps")
    total = maps.maps.shape[0]
    cells = np.arange(min(total, 32)) if cells is None else np.asarray(cells)
    if cells.ndim != 1 or cells.size == 0 or cells.dtype.kind not in "iu":
        raise BadInput(f"cells must be a non-empty sequence of integers, got {cells!r}",
                       param="cells")
    if cells.min() < 0 or cells.max() >= total:
        raise BadInput(f"cells must lie in [0, {total - 1}], got {cells.tolist()}", param="cells")
    if isinstance(ncols, bool) or not isinstance(ncols, Integral) or ncols < 1:
        raise BadInput(f"ncols must be an integer >= 1, got {ncols!r}", param="ncols")
    return cells, min(int(ncols), cells.size)


def _draw_panels(axes: np.ndarray, shown: np.ndarray, cells: np.ndarray, extent: tuple,
                 vmin: float, vmax: float):
    """One map per panel of ``axes`` ``(nrows, ncols)`` (the extra panels hidden), axis labels
    on the outer panels; returns the last image (for the colour bar)."""
    nrows, ncols = axes.shape
    cmap = _viridis_blank_nan()
    image = None
    for k, ax in enumerate(axes.flat):
        if k >= cells.size:
            ax.set_axis_off()
            continue
        image = ax.imshow(shown[k], origin="lower", extent=extent, cmap=cmap, vmin=vmin,
                          vmax=vmax, interpolation="nearest")
        ax.set_title(f"cell {int(cells[k])}", fontsize="small")
        ax.set_aspect("equal")
        if k % ncols == 0:
            ax.set_ylabel("y (m)")
        if k // ncols == nrows - 1 or k + ncols >= cells.size:
            ax.set_xlabel("x (m)")
    return image


def plot_autocorrelogram(
    autocorr: np.ndarray,
    bin_size: float = 1.0,
    score: GridScore | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw an autocorrelogram, optionally with its grid-score annulus.

    Parameters
    ----------
    autocorr : array, shape (2 bins - 1, 2 bins - 1)
    bin_size : float
        Side of a bin in metres (axes show the lag in metres), > 0.
    score : GridScore, optional
        Draws the annulus and writes the scores in the title.
    ax : Axes or None
        Matplotlib Axes, optional A new figure is created when omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.patches import Circle

    a = _check_autocorr(autocorr)
    if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
        raise BadInput(f"bin_size must be a number > 0, got {bin_size!r}", param="bin_size")
    fig, ax = new_axes(ax, (4.2, 3.6))
    half = (a.shape[0] // 2 + 0.5) * bin_size
    cmap = _viridis_blank_nan()
    image = ax.imshow(a, origin="lower", extent=(-half, half, -half, half), cmap=cmap,
                      vmin=-1.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="correlation")
    if score is not None:
        for r in (score.inner_radius, score.outer_radius):
            if math.isfinite(r):
                ax.add_patch(Circle((0, 0), r, fill=False, color="w", linestyle="--", lw=1))
        ax.set_title(f"gridness {score.classic:.2f} (mean {score.mean:.2f}, "
                     f"90: {score.score_90:.2f})", fontsize="small")
    ax.set_aspect("equal")
    ax.set_xlabel("lag x (m)")
    ax.set_ylabel("lag y (m)")
    return fig
