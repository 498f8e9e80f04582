"""Figures of drift, cues, multi-module decoding and shuffled gridness (``ax=None``, figure
returned, no global matplotlib state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_diffusion_ratios", "plot_anchoring", "plot_conflict", "plot_against_noise",
           "plot_null"]


def _axes(ax):
    return new_axes(ax, (5.6, 3.8))


def plot_diffusion_ratios(rows: list[dict], ax: Axes | None = None) -> Figure:
    """Measured D over theory with 95% intervals, one point per (N, noise).

    Parameters
    ----------
    rows : list of dict
        Rows with ``n``, ``noise``, ``ratio``, ``ratio_low``, ``ratio_high``.
    """
    fig, ax = _axes(ax)
    ns = sorted({r["n"] for r in rows})
    for i, n in enumerate(ns):
        sel = [r for r in rows if r["n"] == n]
        x = np.arange(len(sel)) + 0.15 * (i - 1)
        y = np.array([r["ratio"] for r in sel])
        err = np.array([[r["ratio"] - r["ratio_low"] for r in sel],
                        [r["ratio_high"] - r["ratio"] for r in sel]])
        ax.errorbar(x, y, yerr=err, fmt="o", capsize=3, label=f"N = {n}")
        ax.set_xticks(np.arange(len(sel)), [f"sigma={r['noise']:g}" for r in sel])
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.axhspan(0.9, 1.1, color="0.9", zorder=0)
    ax.set_ylabel("D measured / D theory (95% interval)")
    ax.set_title("ring bump diffusion vs one-neuron-noise theory (grey: +-10%)",
                 fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_anchoring(result, ax: Axes | None = None) -> Figure:
    """RMS heading error with and without a landmark, with ``sqrt(2 D t)`` and ``sqrt(D/k)``."""
    fig, ax = _axes(ax)
    t = result.t
    ax.plot(t, result.rms_free, color="C3", label="no cue (measured)")
    ax.plot(t, np.sqrt(2 * result.D * t), color="C3", linestyle="--",
            label=r"$\sqrt{2 D t}$")
    ax.plot(t, result.rms_cue, color="C0", label="landmark (measured)")
    ax.axhline(result.bound, color="C0", linestyle="--", label=r"$\sqrt{D / k}$")
    ax.set_xlabel("time (tau)")
    ax.set_ylabel("RMS heading error (rad)")
    ax.set_title(f"landmark anchoring (A = {result.metrics['strength']:g}, "
                 f"sigma = {result.metrics['noise']:g})", fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_conflict(result, ax: Axes | None = None) -> Figure:
    """Fraction of a cue rotation followed against cue strength, with the phase-equation curve."""
    fig, ax = _axes(ax)
    ax.errorbar(result.strengths, result.followed, yerr=result.followed_sd, fmt="o",
                capsize=3, label="measured")
    ax.plot(result.strengths, result.theory, "k--", label="phase equation, linear pull rate")
    ax.set_xscale("log")
    ax.set_xlabel("cue strength A")
    ax.set_ylabel("fraction of the rotation followed")
    ax.set_title(f"cue conflict: rotation {np.degrees(result.rotation):.0f} deg, window "
                 f"{result.window:g} tau", fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_against_noise(noise, series: dict, ylabel: str, title: str,
                       ax: Axes | None = None) -> Figure:
    """One line per named series against the noise level."""
    fig, ax = _axes(ax)
    for k, (label, values) in enumerate(series.items()):
        ax.plot(noise, values, "o-", color=f"C{k}", label=label)
    ax.set_xlabel("noise sigma on u")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_null(classification, ax: Axes | None = None, label: str = "") -> Figure:
    """Histogram of the cells' gridness against the shuffled null and its threshold."""
    fig, ax = _axes(ax)
    null = classification.null[np.isfinite(classification.null)]
    sc = classification.scores[np.isfinite(classification.scores)]
    bins = np.linspace(-1.5, 2.0, 36)
    ax.hist(null, bins=bins, density=True, color="0.7", label="shuffled null")
    ax.hist(sc, bins=bins, density=True, histtype="step", color="C0", linewidth=1.5,
            label="cells")
    ax.axvline(classification.threshold, color="k", linestyle="--",
               label=f"95th percentile {classification.threshold:.2f}")
    ax.set_xlabel("gridness (smoothed maps)")
    ax.set_ylabel("density")
    ax.set_title(f"{label}: {100 * classification.fraction:.0f}% grid cells", fontsize="small")
    ax.legend(fontsize="small")
    return fig
