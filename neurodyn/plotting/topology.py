"""Figures of persistent homology: the barcode and the persistence diagram."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from _runkit.notebook import notebook_figure

from ..analysis.topology import Homology, _check_int, betti_numbers, long_bar_thresholds
from . import new_axes

__all__ = ["plot_barcode", "plot_persistence_diagram", "DIMENSION_COLOURS"]

#: One colour per homology dimension, sampled from the perceptually uniform 'viridis' map.
DIMENSION_COLOURS = ("#440154", "#21918c", "#e3a000", "#5ec962")


def _resolve_thresholds(
    homology: Homology, threshold: float | Sequence[float] | None | bool
) -> tuple[float, ...] | None:
    if threshold is False:
        return None
    if threshold is None or threshold is True:
        return long_bar_thresholds(homology)
    if np.ndim(threshold) == 0:
        return (float(threshold),) * (homology.maxdim + 1)
    return tuple(float(t) for t in threshold)


def plot_barcode(
    homology: Homology,
    ax: Axes | None = None,
    threshold: float | Sequence[float] | None | bool = None,
    max_bars: int = 25,
    units: str = "a.u.",
) -> Figure:
    """Persistence barcode: one horizontal bar per feature, ``[birth, death)``, per dimension.

    One panel per dimension (stacked, shared scale) when ``ax`` is None; the infinite H0 bar is
    drawn to the diameter and ends in an arrow. The long-bar threshold (dashed) is drawn from
    the birth of each bar's row start: a bar counts if its length exceeds it.

    Parameters
    ----------
    homology : Homology
    ax : matplotlib.axes.Axes, optional
        Draw all dimensions stacked in this one axes instead of one panel each.
    threshold : float or sequence of float or bool or None
        As in :func:`betti_numbers` (None: the default thresholds); False draws none.
    max_bars : int
        Longest bars shown per dimension (the short noise bars are many).
    units : str
        Units of the filtration scale (those of the activity).

    Returns
    -------
    matplotlib.figure.Figure
    """
    max_bars = _check_int(max_bars, "max_bars", 1)
    taus = _resolve_thresholds(homology, threshold)
    betti = betti_numbers(homology, taus) if taus is not None else None
    n = homology.maxdim + 1
    xmax = 1.05 * homology.diameter if homology.diameter > 0 else 1.0
    if ax is None:
        fig = notebook_figure(Figure(figsize=(6.0, 1.0 + 1.3 * n), layout="constrained"))
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    else:
        fig = ax.get_figure()
        axes = [ax] * n
    row0 = 0
    for k in range(n):
        label = f"H{k}"
        if betti is not None:
            label += f" (β{k} = {betti[k]})"
        tau = taus[k] if taus is not None else None
        shown = _draw_bars(axes[k], homology.diagrams[k], k, row0 if ax is not None else 0,
                           max_bars, xmax, label, tau, stacked=ax is not None)
        row0 += shown + 1
    axes[-1].set_xlim(0, xmax)
    axes[-1].set_xlabel(f"filtration scale (distance, {units})")
    if ax is not None:
        ax.set_yticks([])
        ax.set_ylabel("bars (longest first per dimension)")
        ax.set_ylim(-1, row0)
        ax.legend(loc="lower right", fontsize="small", frameon=False)
    if taus is not None:
        axes[0].set_title("bars; grey ticks: birth + long-bar threshold", fontsize="small")
    return fig


def _draw_bars(a: Axes, dgm: np.ndarray, k: int, start: int, max_bars: int, xmax: float,
               label: str, tau: float | None, stacked: bool) -> int:
    """Draw the ``max_bars`` longest bars of dimension ``k`` (``dgm`` ``(bars, 2)``) from row
    ``start`` of ``a``, with the threshold ticks at birth + ``tau`` (unless None); ``stacked``:
    ``a`` holds every dimension (the label goes to the legend, else to the y axis). Returns the
    number of bars drawn."""
    life = dgm[:, 1] - dgm[:, 0]
    order = np.argsort(-life, kind="stable")[:max_bars]
    colour = DIMENSION_COLOURS[k % len(DIMENSION_COLOURS)]
    for j, i in enumerate(order):
        b, d = dgm[i]
        y = start + j
        if np.isfinite(d):
            a.plot([b, d], [y, y], color=colour, lw=2.5, solid_capstyle="butt")
        else:
            a.annotate(
                "",
                xy=(xmax, y),
                xytext=(b, y),
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 2.5},
            )
    if stacked:
        a.plot([], [], color=colour, lw=2.5, label=label)
    if tau is not None and order.size:
        births = dgm[order, 0]
        ys = start + np.arange(order.size)
        a.plot(births + tau, ys, ls="none", marker="|", ms=6, color="0.35")
    if not stacked:
        a.set_ylabel(label, color=colour)
        a.set_yticks([])
        a.set_ylim(-1, max(order.size, 1))
    return order.size


def plot_persistence_diagram(
    homology: Homology,
    ax: Axes | None = None,
    threshold: float | Sequence[float] | None | bool = None,
    units: str = "a.u.",
) -> Figure:
    """Persistence diagram: each bar as a point (birth, death), one colour per dimension.

    Points far above the diagonal ``death = birth`` are long-lived features; dashed lines
    ``death = birth + tau_k`` mark the long-bar thresholds. Infinite deaths are drawn on a
    line above the diameter.

    Parameters
    ----------
    homology : Homology
    ax : matplotlib.axes.Axes, optional
    threshold : float or sequence of float or bool or None
        As in :func:`betti_numbers` (None: the default thresholds); False draws none.
    units : str
        Units of the filtration scale.

    Returns
    -------
    matplotlib.figure.Figure
    """
    taus = _resolve_thresholds(homology, threshold)
    fig, ax = new_axes(ax, (4.8, 4.5))
    top = homology.diameter if homology.diameter > 0 else 1.0
    inf_y = 1.08 * top
    lim = (-0.03 * top, 1.13 * top)
    ax.plot(lim, lim, color="0.5", lw=1)
    ax.axhline(inf_y, color="0.7", lw=0.8, ls=":")
    ax.text(0.02 * top, inf_y, "∞", va="bottom", fontsize="small", color="0.4")
    for k, dgm in enumerate(homology.diagrams):
        colour = DIMENSION_COLOURS[k % len(DIMENSION_COLOURS)]
        deaths = np.where(np.isfinite(dgm[:, 1]), dgm[:, 1], inf_y)
        ax.scatter(dgm[:, 0], deaths, s=12, color=colour, label=f"H{k}", alpha=0.8, linewidths=0)
        if taus is not None:
            ax.plot(lim, np.asarray(lim) + taus[k], color=colour, lw=0.8, ls="--")
    ax.set_xlim(lim)
    ax.set_ylim(lim)
    ax.set_aspect("equal")
    ax.set_xlabel(f"birth (filtration scale, {units})")
    ax.set_ylabel(f"death (filtration scale, {units})")
    ax.legend(loc="lower right", fontsize="small")
    return fig
