"""Figures of SEAL's learning experiments (kappa sweep, capacity sweep, ablation, spectra).

Every function takes ``ax=None`` and returns the figure without touching pyplot's state.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..experiments.seal_results import Ablation, CapacitySweep, KappaSweep
from . import new_axes

__all__ = ["plot_kappa_sweep", "plot_capacity", "plot_ablation", "plot_normal_spectra"]


def plot_kappa_sweep(sweep: KappaSweep, ax=None, title: str = "") -> Figure:
    """Measured normal rates (spectrum range and simulated decay) against prescribed kappa.

    Parameters
    ----------
    sweep : KappaSweep
        Output of :func:`neurodyn.experiments.seal.kappa_sweep`.
    """
    fig, ax = new_axes(ax)
    markers = {"seal": ("C0", "full SEAL"), "spectral": ("C3", "spectral only")}
    top = 0.0
    for family, rows in sweep.families.items():
        colour, label = markers.get(family, ("C2", family))
        k = np.array([float(x) for x in rows])
        lo = np.array([-r.spectrum_min for r in rows.values()])
        hi = np.array([-r.spectrum_max for r in rows.values()])
        ax.vlines(k, hi, lo, colors=colour, lw=4, alpha=0.5)
        ax.plot(k, hi, "o", color=colour, label=f"{label}: normal eigenvalues (range)")
        late = [min(r.decay_late.values()) for r in rows.values() if r.decay_late is not None]
        if late:
            ax.plot(k, late, "x", color=colour, ms=8, label=f"{label}: slowest simulated decay")
        top = max(top, float(k.max()), float(lo.max()))
    ax.plot([0, top], [0, top], "k--", lw=1, label="measured = prescribed")
    ax.set_xlabel("prescribed kappa (1/tau)")
    ax.set_ylabel("measured rate (1/tau)")
    ax.set_title(title or "normal attraction: prescribed vs measured")
    ax.legend(fontsize=7)
    return fig


def plot_capacity(sweep: CapacitySweep, ax=None) -> Figure:
    """Field, energy and spectrum errors per family variant (log scale); ``sweep`` from
    :func:`neurodyn.experiments.seal.capacity_sweep`."""
    fig, ax = new_axes(ax, figsize=(7.0, 3.8))
    rows = sweep.variants
    names = list(rows)
    x = np.arange(len(names))
    for i, (key, label) in enumerate((("worst_relative", "normal spectrum"),
                                      ("field_error", "restoring field"),
                                      ("energy_error", "energy vs kappa B"))):
        vals = np.array([max(getattr(rows[n], key), 1e-6) for n in names])
        ax.bar(x + (i - 1) * 0.27, vals, 0.27, label=label)
    ax.axhline(0.05, color="k", lw=0.8, ls="--")
    ax.axhline(0.10, color="k", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel("worst relative error")
    ax.set_title("capacity: what each part of the family buys")
    ax.legend(fontsize=7)
    fig.subplots_adjust(bottom=0.38)
    return fig


def plot_ablation(result: Ablation, ax=None) -> Figure:
    """Simulated late decay rate per perturbation kind for each network, against kappa;
    ``result`` from :func:`neurodyn.experiments.seal.ablation`."""
    fig, ax = new_axes(ax, figsize=(6.5, 3.6))
    rows = result.networks
    names = list(rows)
    kinds = list(rows[names[0]].decay_late)
    x = np.arange(len(kinds))
    w = 0.8 / len(names)
    for i, n in enumerate(names):
        ax.bar(x + (i - (len(names) - 1) / 2) * w, [rows[n].decay_late[k] for k in kinds],
               w, label=n)
    ax.axhline(result.kappa, color="k", ls="--", lw=1, label="prescribed kappa")
    ax.set_xticks(x)
    ax.set_xticklabels(kinds)
    ax.set_ylabel("decay rate (1/tau)")
    ax.set_title("ablation: the same small perturbations")
    ax.legend(fontsize=7)
    return fig


def plot_normal_spectra(spectra: dict, kappa: float, ax=None) -> Figure:
    """Sorted Jacobian eigenvalues (times tau) of several networks beside ``-kappa``.

    The reference line is drawn first and each network's eigenvalues in decreasing marker
    size, so eigenvalues that sit on ``-kappa`` or on another network's stay visible."""
    fig, ax = new_axes(ax)
    ax.axhline(-kappa, color="k", ls="--", lw=1, label="-kappa", zorder=1)
    count = len(spectra)
    for k, (name, ev) in enumerate(spectra.items()):
        ev = np.sort(np.asarray(ev))[::-1]
        ax.plot(ev, "o", ms=3 + 2.5 * (count - 1 - k), mfc="none" if k < count - 1 else None,
                label=name, zorder=2 + k)
    ax.set_xlabel("eigenvalue index (largest first)")
    ax.set_ylabel("eigenvalue x tau")
    ax.set_title(f"Jacobian eigenvalues at the bump, prescribed kappa = {kappa:g}",
                 fontsize="medium")
    ax.legend(fontsize=7)
    return fig
