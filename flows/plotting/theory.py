"""Figures of the theory experiments. Every function takes ``ax=None`` (a new figure is made without
pyplot) and returns the figure; no global matplotlib state is touched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .figures import _axes, _colors

if TYPE_CHECKING:
    from ..theory.results import WidthPoint


def plot_ntk_curves(runs: Sequence[WidthPoint], ax: Axes | None = None) -> Figure:
    """Observed training loss (solid) and the infinite-width NTK prediction (dashed) per width.

    ``runs`` are :func:`flows.theory.sweeps.width_point` results (``losses``, ``ntk_losses``,
    ``width``, ``ntk_gap``).
    """
    fig, ax = _axes(ax, (6.0, 4.2))
    for r, c in zip(runs, _colors(len(runs)), strict=True):
        ax.plot(r.losses, color=c, lw=1.3, label=f"m={r.width} (gap {r.ntk_gap:.3f})")
        ax.plot(r.ntk_losses, color=c, lw=1.0, ls="--")
    ax.set(xlabel="gradient-descent step t", ylabel="training loss",
           title="observed (solid) vs NTK $(I - 2\\,lr\\,H/N)^t$ (dashed)")
    ax.legend(fontsize=8)
    return fig


def plot_ntk_gap(widths: Sequence[int], gaps: Sequence[float], tolerances: Sequence[float],
                 flipped: Sequence[float] | None = None, ax: Axes | None = None) -> Figure:
    """NTK-curve gap and its tolerance K m^{-1/2} against width (log-log), with flipped
    activation fractions."""
    fig, ax = _axes(ax)
    ax.loglog(widths, gaps, "o-", label="max |L_obs - L_NTK| / L_0")
    ax.loglog(widths, tolerances, "k--", lw=1, label="tolerance K m$^{-1/2}$")
    if flipped is not None:
        ax.loglog(widths, flipped, "s:", label="fraction of activations flipped")
    ax.set(xlabel="width m", title="distance from the kernel regime")
    ax.legend(fontsize=8)
    return fig


def plot_excess_vs_n(ns: Sequence[int], means: Sequence[float], halfs: Sequence[float],
                     train: Sequence[float] | None = None, slope: float | None = None,
                     ax: Axes | None = None, gap: Sequence[float] | None = None,
                     gap_halfs: Sequence[float] | None = None) -> Figure:
    """Excess test risk against n with 95% intervals (log-log), the mean excess train risk,
    optionally the excess gap (test minus train excess) with its intervals, and an n^{-1/2}
    reference line through the first point."""
    fig, ax = _axes(ax)
    if gap is not None:
        ax.errorbar(np.asarray(ns, float), gap, yerr=None if gap_halfs is None else
                    np.asarray(gap_halfs), fmt="d-.", capsize=3,
                    label="excess test - excess train")
    ns_a, m = np.asarray(ns, float), np.asarray(means, float)
    ax.errorbar(ns_a, m, yerr=np.asarray(halfs), fmt="o-", capsize=3,
                label="excess test risk" + (f" (slope {slope:.2f})" if slope is not None else ""))
    ax.plot(ns_a, m[0] * (ns_a / ns_a[0]) ** -0.5, "k--", lw=1, label="$n^{-1/2}$ (bound rate)")
    if train is not None:
        ax.plot(ns_a, train, "s:", label="excess train risk (can be < 0)")
    ax.set_xscale("log")
    if (train is None or min(train) > 0) and (gap is None or min(gap) > 0):
        ax.set_yscale("log")
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set(xlabel="training points n", ylabel="objective - population minimum",
           title="excess risk of the conditional objective")
    ax.legend(fontsize=8)
    return fig


def plot_w2_bound(x: Sequence[float], measured: Sequence[float], floors: Sequence[float],
                  bounds: Sequence[float], couplings: Sequence[float] | None = None,
                  xlabel: str = "n", ax: Axes | None = None,
                  trajectory: Sequence[float] | None = None,
                  source: Sequence[float] | None = None,
                  certified_log10: Sequence[float] | None = None) -> Figure:
    """Measured W2 with its floor, the Groenwall bound and the coupling bound against x;
    optionally the bound with the factor along the trajectories, the certified bound (given as
    log10, drawn where a float holds it) and W2(source, data), the line a bound must be under
    to say anything. The legend sits beside the axes: its lines would hide some of the curves
    inside them."""
    fig, ax = _axes(ax, figsize=(8.0, 4.0))
    if certified_log10 is not None:
        ax.loglog(x, [10.0**v if v < 300 else float("nan") for v in certified_log10], "D-",
                  label="certified: mu from the weights (estimated excess)")
    ax.loglog(x, bounds, "o-", label="Groenwall bound G sqrt(excess), mu sampled")
    if trajectory is not None:
        ax.loglog(x, trajectory, "v-", label="same, G along the trajectories")
    if source is not None:
        ax.loglog(x, source, "r:", lw=1.5, label="W2(source, data): a model that does nothing")
    if couplings is not None:
        ax.loglog(x, couplings, "^-", label="coupling (E||X_1 - Y_1||^2)^{1/2}")
    ax.loglog(x, measured, "s-", label="measured W2 to held-out")
    ax.loglog(x, floors, "k--", lw=1, label="floor (two i.i.d. samples)")
    ax.set(xlabel=xlabel, ylabel="W2", title="W2 bound and measured W2")
    _plain_log_ticks(ax)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return fig


def _plain_log_ticks(ax: Axes) -> None:
    """Log-axis ticks written as plain numbers (``2``, ``0.5``) instead of ``2 x 10^0``; minor
    ticks are labelled at 2 and 5 times a power of ten only."""
    import math

    from matplotlib.ticker import FuncFormatter

    def minor(v, _):
        lead = round(v / 10 ** math.floor(math.log10(v))) if v > 0 else 0
        return f"{v:g}" if lead in (2, 5) else ""

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(FuncFormatter(minor))


def plot_generalization_bound(ns: Sequence[int], gap: Sequence[float],
                              gap_halfs: Sequence[float], bound: Sequence[float],
                              lstar: float, ax: Axes | None = None) -> Figure:
    """Measured excess gap (mean, 95% intervals; |gap| on a log axis) and the computed
    generalization bound against n, with L* (above it the bound says nothing)."""
    fig, ax = _axes(ax)
    n = np.asarray(ns, float)
    ax.errorbar(n, np.abs(np.asarray(gap, float)), yerr=np.asarray(gap_halfs), fmt="s-",
                capsize=3, label="|measured excess gap| (test - train excess)")
    ax.plot(n, bound, "o-", label="computed bound (distance from init, Efron-Stein)")
    ax.axhline(lstar, color="r", ls=":", lw=1.5, label=f"L* = {lstar:.2f}")
    ax.set(xscale="log", yscale="log", xlabel="training points n",
           ylabel="excess generalization gap", title="generalization bound and measurement")
    ax.legend(fontsize=8)
    return fig


def plot_memorization(x: Sequence[float], fractions: dict[str, Sequence[float]],
                      baseline: float | None = None, xlabel: str = "training points n",
                      log_x: bool = True, ax: Axes | None = None) -> Figure:
    """Memorized fraction curves against x, with the i.i.d. baseline as a dotted line."""
    fig, ax = _axes(ax)
    for (name, f), c in zip(fractions.items(), _colors(len(fractions)), strict=True):
        ax.plot(x, f, "o-", color=c, label=name)
    if baseline is not None:
        ax.axhline(baseline, color="k", ls=":", lw=1, label="i.i.d. sample (leave-one-out)")
    if log_x:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel="fraction memorized (d1 < c d2)", ylim=(-0.02, 1.02),
           title="memorization")
    ax.legend(fontsize=8)
    return fig


def plot_stopping(summaries: dict[str, object], ax: Axes | None = None) -> Figure:
    """Excess test risk against n (log-log) with 95% intervals, one curve per stopping rule
    (``summaries``: label -> :class:`flows.theory.risk.ProtocolSummary`); controls
    (``targets == "shuffled"``) dashed; an n^{-1/2} line through the first curve's first
    point."""
    fig, ax = _axes(ax, (6.0, 4.2))
    first = None
    for (label, s), c in zip(summaries.items(), _colors(len(summaries)), strict=True):
        ns = np.asarray(s.ns, float)
        ls = "--" if s.targets == "shuffled" else "-"
        ax.errorbar(ns, s.excess_test, yerr=np.asarray(s.excess_test_ci95), fmt="o", ls=ls,
                    color=c, capsize=3,
                    label=f"{label} (slope {s.slope:.2f} ± {s.slope_ci95:.2f})")
        if first is None:
            first = (ns, s.excess_test[0])
    if first is not None:
        ax.plot(first[0], first[1] * (first[0] / first[0][0]) ** -0.5, "k:", lw=1,
                label="$n^{-1/2}$ (bound rate)")
    ax.set(xscale="log", yscale="log", xlabel="training points n",
           ylabel="excess test risk E||v - u*||$^2$", title="excess risk by stopping rule")
    ax.legend(fontsize=7)
    return fig


def plot_gap_seeds(sweep, ax: Axes | None = None) -> Figure:
    """NTK-curve gap per seed (dots) and its mean with 95% intervals against width (log-log),
    for a :class:`flows.theory.ntk_gap.GapSweep`, with its slope and, per width, the fraction
    of seeds passing the end-ratio check."""
    fig, ax = _axes(ax)
    w = np.asarray(sweep.widths, float)
    for row, x in zip(sweep.gaps, w, strict=True):
        ax.plot([x] * len(row), row, ".", color="0.6")
    ax.errorbar(w, sweep.gap_mean, yerr=np.asarray(sweep.gap_ci95), fmt="o-", capsize=3,
                label=f"mean over {len(sweep.seeds)} seeds (paired monotone: {sweep.monotone})")
    ax.plot(w, sweep.gap_mean[0] * (w / w[0]) ** -0.5, "k--", lw=1, label="$m^{-1/2}$")
    if getattr(sweep, "gap_slope", None) is not None:
        ax.plot([], [], " ", label=f"slope {sweep.gap_slope:.2f} ± {sweep.gap_slope_ci95:.2f}"
                                   " (per-seed fits, 95%)")
    if getattr(sweep, "passes", None) is not None:
        for x, p, y in zip(w, sweep.passes, sweep.gap_mean, strict=True):
            ax.annotate(f"pass {p:.0%}", (x, y), textcoords="offset points", xytext=(4, 6),
                        fontsize=7)
    ax.set(xscale="log", yscale="log", xlabel="width m", ylabel="max |L_obs - L_NTK| / L_0",
           title=f"NTK-curve gap, n = {sweep.n}, lr x steps = {sweep.horizon:g}")
    ax.legend(fontsize=8)
    return fig
