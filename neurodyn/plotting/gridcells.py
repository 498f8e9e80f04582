"""Figures of a grid-cell run: connectivity on the sheet, decoding error, modules compared."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from _runkit import BadInput
from _runkit.notebook import notebook_figure

from ..geometry.populations import LATTICES, sheet_corners
from ..spatial.gridcells.results import GridCellsResult
from ..spatial.gridscores import gridness
from ..spatial.ratemaps import autocorrelogram
from . import new_axes
from .agent import plot_trajectory
from .ratemaps import plot_autocorrelogram, plot_rate_maps

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_connectivity_sheet", "plot_error", "plot_modules", "run_figures"]


def plot_connectivity_sheet(row: np.ndarray, lattice: str, ax: Axes | None = None,
                            label: str | None = None) -> Figure:
    """Draw a connectivity row on the sheet's own geometry.

    Neuron ``(i, j)`` at offset ``(a, b)`` from the centre neuron sits at ``a e1 + b e2`` with
    ``e1 = (1, 0)`` and ``e2 = (-1/2, sqrt(3)/2)`` (hex) or ``(0, 1)`` (square), in units of the
    neuron spacing; offsets are wrapped so the centre neuron is in the middle.

    Parameters
    ----------
    row : numpy.ndarray, shape (n1, n2)
        Weights from every neuron onto neuron ``(0, 0)``.
    lattice : str
        ``'hex'`` or ``'square'``.
    ax : Axes or None
        Axes to draw into (a new figure otherwise).
    label : str or None
        What the weights are (colour bar and title); default: the effective connectivity
        ``-d^2 F / dr_0 dr_j`` at the bump centred on the centre neuron (a state-dependent row).

    Returns
    -------
    Figure, with a diverging colour scale centred at 0.
    """
    row = np.asarray(row, dtype=float)
    if row.ndim != 2:
        raise BadInput(f"row: shape {row.shape}; expected (n1, n2)", param="row")
    if lattice not in LATTICES:
        raise BadInput(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}",
                       param="lattice")
    fig, ax = new_axes(ax, (5.6, 4.2))
    centred = np.roll(row, (row.shape[0] // 2, row.shape[1] // 2), axis=(0, 1))
    x, y = sheet_corners(row.shape, lattice, centred=True)
    lim = float(np.abs(row).max()) or 1.0
    mesh = ax.pcolormesh(x, y, centred, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="flat")
    default = label is None
    label = (r"$W_\mathrm{eff} = -\partial^2 F/\partial r_0 \partial r_j$" if default
             else label)
    fig.colorbar(mesh, ax=ax, label=label)
    ax.set_aspect("equal")
    ax.set_xlabel("sheet x (neuron spacings)")
    ax.set_ylabel("sheet y (neuron spacings)")
    what = "effective connectivity at the bump on the centre neuron" if default else label
    ax.set_title(f"{what} ({lattice} sheet)", fontsize="small")
    return fig


def plot_error(result: GridCellsResult, ax: Axes | None = None) -> Figure:
    """Decoding error ``|x_hat(t) - x(t)|`` (m) over time (s) for every module.

    The modules' errors often agree to the pixel, so each is drawn narrower and more opaque
    than the one before: where they coincide they show as nested bands, not as the last one.

    Parameters
    ----------
    result : GridCellsResult
        A :class:`GridCellsResult`.
    ax : Axes or None
        Axes to draw into (a new figure otherwise).

    Returns
    -------
    Figure
    """
    fig, ax = new_axes(ax, (6.0, 3.4))
    count = len(result.modules)
    for k, mod in enumerate(result.modules):
        color = f"C{k}"
        ax.plot(result.t, mod.error, color=color, linewidth=0.8 + 2.4 * (count - 1 - k),
                alpha=0.35 + 0.65 * (k + 1) / count, label=f"spacing {mod.spacing:g} m")
        ax.axhline(0.05 * mod.spacing, color=color, linestyle=":", linewidth=0.8)
    ax.set_yscale("log")  # errors of 1e-4 m beside a 5% line at 0.025 m: a linear axis hides them
    ax.set_xlabel("time (s)")
    ax.set_ylabel("decoded position error (m)")
    ax.set_title("path integration error (dotted: 5% of the spacing)", fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_modules(result: GridCellsResult, cell: int = 0, fig: Figure | None = None) -> Figure:
    """Compare modules: one cell's rate map and autocorrelogram per module.

    Parameters
    ----------
    result : GridCellsResult
        A :class:`GridCellsResult`.
    cell : int
        Index into the panel.
    fig : Figure or None
        Figure to draw into (cleared; a new one otherwise).

    Returns
    -------
    Figure
    """
    from matplotlib.figure import Figure

    mods = result.modules
    if not 0 <= cell < result.cells.shape[0]:
        raise BadInput(f"cell={cell}: must be in [0, {result.cells.shape[0] - 1}]", param="cell")
    if fig is None:
        fig = notebook_figure(Figure(figsize=(4.2 * len(mods), 7.0), layout="constrained"))
    else:
        fig.clear()
    axes = fig.subplots(2, len(mods), squeeze=False)
    for k, mod in enumerate(mods):
        m = mod.maps
        ext = (m.x_edges[0], m.x_edges[-1], m.y_edges[0], m.y_edges[-1])
        im = axes[0, k].imshow(m.maps[cell], origin="lower", extent=ext, cmap="viridis",
                               interpolation="nearest")
        fig.colorbar(im, ax=axes[0, k], label="rate (a.u.)", shrink=0.8)
        axes[0, k].set_title(f"module {mod.spacing:g} m, cell {cell}\n"
                             f"{100 * mod.fraction_grid:.0f}% grid cells, final error "
                             f"{1000 * mod.error[-1]:.2f} mm", fontsize="small")
        axes[0, k].set_xlabel("x (m)")
        axes[0, k].set_ylabel("y (m)")
        ac = autocorrelogram(m.maps[cell])
        plot_autocorrelogram(ac, m.bin_size, gridness(autocorr=ac, bin_size=m.bin_size),
                             ax=axes[1, k])
    return fig


def run_figures(result: GridCellsResult):
    from matplotlib.figure import Figure

    maps = result.maps
    fig = plot_rate_maps(maps, cells=np.arange(min(32, maps.maps.shape[0])),
                         title=f"rate maps (spacing {result.modules[0].spacing:g} m, "
                               f"{result.lattice})")
    yield "ratemaps.png", fig

    shown = min(4, maps.maps.shape[0])
    fig = notebook_figure(Figure(figsize=(3.6 * shown, 3.2), layout="constrained"))
    axes = fig.subplots(1, shown, squeeze=False)[0]
    for k in range(shown):
        ac = autocorrelogram(maps.maps[k])
        plot_autocorrelogram(ac, maps.bin_size, gridness(autocorr=ac, bin_size=maps.bin_size),
                             ax=axes[k])
    yield "autocorrelograms.png", fig

    fig = plot_trajectory(result.trajectory, result.decoded)
    fig.axes[0].set_title(f"true vs decoded position (final error "
                          f"{1000 * result.error[-1]:.2f} mm)",
                          fontsize="small")
    yield "trajectory.png", fig
    yield "error.png", plot_error(result)
    yield "connectivity.png", plot_connectivity_sheet(result.connectivity, result.lattice,
                                                      label="best fixed circulant weight")
    if len(result.modules) > 1:
        yield "modules.png", plot_modules(result)
