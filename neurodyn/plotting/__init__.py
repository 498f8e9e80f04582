"""Figures for attractor networks.

This module draws a network and its runs (bump, Jacobian spectrum, connectivity, distance,
energy, path integration, fit loss, activity); its submodules draw the rest:
:mod:`.manifold` (activity embeddings, energy landscape, the bump's path),
:mod:`.embedding` (PCA / Isomap scatter plots), :mod:`.topology` (barcode, persistence diagram)
and :mod:`.animation` (GIFs of a moving bump). Computation lives in the library modules; writing
figures into run directories lives in :mod:`neurodyn.runs`.

Every function takes ``ax=None`` (a new figure is made, never through pyplot's global state) and
returns the :class:`matplotlib.figure.Figure`, which a Jupyter notebook shows once, as a PNG,
whether the function made it or drew into the caller's axes. Axes carry labels with units; time
is in units of ``tau``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from _runkit.cli import notebook_figure
from _runkit.files import atomic_save_figure

from ..analysis.diagnostics import ConnectivityProfile
from ..dynamics.simulation import SimulationResult
from ..network import HopfieldNetwork

__all__ = ["new_axes", "plot_bump", "plot_spectrum", "plot_connectivity", "plot_distance",
           "plot_energy", "manifold_energy", "plot_path_integration", "plot_loss",
           "plot_activity", "plot_sweep", "save_figure"]


def new_axes(ax: Axes | None = None, figsize=(5.0, 3.6)) -> tuple[Figure, Axes]:
    """Return ``(figure, axes)``: the given axes' figure, or a new stand-alone figure; either
    shows once in a notebook (:func:`_runkit.cli.notebook_figure`)."""
    if ax is not None:
        return notebook_figure(ax.figure, created=False), ax
    fig = notebook_figure(Figure(figsize=figsize, layout="constrained"))
    return fig, fig.add_subplot()


def save_figure(fig: Figure, path, dpi: int = 120) -> None:
    """Save a figure to ``path`` (PNG) atomically (:func:`_runkit.files.atomic_save_figure`:
    a reader never sees a partial file); the figure is not registered with pyplot."""
    atomic_save_figure(fig, path, dpi=dpi)


def _np(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def plot_bump(network: HopfieldNetwork, psi: float = math.pi, ax: Axes | None = None) -> Figure:
    """Target bump of a ring: potentials ``u*`` and rates ``r*`` versus preferred angle."""
    fig, ax = new_axes(ax)
    m = network.manifold
    if m is None or network.geometry.dim != 1:
        raise ValueError("network: plot_bump needs a ring network with a manifold")
    theta = _np(network.geometry.coords()[0])
    u = m.u_star(torch.tensor([psi], dtype=torch.float64))
    ax.plot(theta, _np(u), color="tab:blue", label="potential $u^*$")
    ax.set_xlabel("preferred angle $\\theta$ (rad)")
    ax.set_ylabel("potential $u^*$ (a.u.)", color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(theta, _np(network.rates(u)), color="tab:orange", label="rate $r^*$")
    ax2.set_ylabel("rate $r^* = \\phi(u^*)$ (a.u.)", color="tab:orange")
    ax.set_title(f"target bump at $\\psi$ = {psi:.2f} rad")
    return fig


def plot_spectrum(eigenvalues, zero_tol: float = 1e-3, ax: Axes | None = None) -> Figure:
    """Jacobian eigenvalues at the manifold, sorted, with the neutral ones marked."""
    fig, ax = new_axes(ax)
    ev = _np(eigenvalues)
    idx = np.arange(len(ev))
    near = np.abs(ev) <= zero_tol
    ax.plot(idx[~near], ev[~near], ".", color="tab:blue", label="decaying")
    ax.plot(idx[near], ev[near], "o", color="tab:red", label=f"neutral (|λ| ≤ {zero_tol:g})")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel("eigenvalue index")
    ax.set_ylabel("eigenvalue λ (1/τ)")
    ax.set_title("Jacobian spectrum at the manifold")
    ax.legend(frameon=False)
    return fig


def plot_connectivity(profile, ax: Axes | None = None) -> Figure:
    """A connectivity profile ``w`` versus distance between preferred phases.

    Parameters
    ----------
    profile : ConnectivityProfile or CirculantFit
        A kernel's profile, or the best fixed circulant network
        (:func:`~neurodyn.analysis.connectivity.fit_circulant`): then its profile, titled with
        its errors.
    ax : Axes or None
        Axes to draw into (a new figure otherwise).

    Returns
    -------
    Figure
    """
    fig, ax = new_axes(ax)
    title = "connectivity profile $w(\\delta)$"
    if not isinstance(profile, ConnectivityProfile):
        title = (f"best fixed circulant W: recurrent-input error {profile.relative_error:.2g}, "
                 f"field error {profile.field_error:.2g}")
        profile = profile.profile
    d, w = _np(profile.distance), _np(profile.weight)
    ax.plot(d, w, "-", color="tab:purple")
    ax.fill_between(d, w, 0, where=w > 0, color="tab:red", alpha=0.25, label="excitation")
    ax.fill_between(d, w, 0, where=w < 0, color="tab:blue", alpha=0.25, label="inhibition")
    ax.axhline(0, color="0.5", lw=0.8)
    for z in profile.zero_crossings():
        ax.axvline(z, color="0.3", ls=":", lw=1)
    ax.set_xlabel("distance between preferred phases $|\\delta|$ (rad)")
    ax.set_ylabel("weight $w(\\delta)$ (a.u.)")
    ax.set_title(title, fontsize="small")
    ax.legend(frameon=False)
    return fig


def plot_distance(trajectory: SimulationResult, threshold: float | None = 0.01,
                  ax: Axes | None = None, max_lines: int = 64) -> Figure:
    """Relative distance to the manifold over time, one line per run (log scale)."""
    fig, ax = new_axes(ax)
    t = _np(trajectory.t)
    dist = _np(trajectory.distance)
    dist = np.maximum(dist, 1e-16)
    for b in range(min(dist.shape[1], max_lines)):
        ax.semilogy(t, dist[:, b], color="tab:blue", alpha=0.3, lw=0.8)
    if threshold is not None:
        ax.axhline(threshold, color="tab:red", ls="--", lw=1, label=f"threshold {threshold:g}")
        ax.legend(frameon=False)
    ax.set_xlabel("time (τ)")
    ax.set_ylabel("relative distance to manifold")
    return fig


def plot_energy(trajectory: SimulationResult, ax: Axes | None = None,
                max_lines: int = 64, reference: float | None = None) -> Figure:
    """Energy over time, one line per run.

    With ``reference`` (the energy on the manifold, :func:`manifold_energy`) the gap
    ``E(t) - E*`` on a log scale: how far above the attractor's energy each run still is;
    without it ``E(t)`` itself on a linear scale. (The gap to a run's own last value would
    fall to 0 at the end by construction, whatever the run did.)
    """
    fig, ax = new_axes(ax)
    t = _np(trajectory.t)
    e = _np(trajectory.energy)
    lines = min(e.shape[1], max_lines)
    if reference is None:
        ax.plot(t, e[:, :lines], color="tab:green", alpha=0.3, lw=0.8)
        ax.set_ylabel("energy $E(t)$ (a.u.)")
    else:
        gap = e[:, :lines] - reference
        floor = 1e-12 * max(1.0, abs(reference))  # round-off of E near the manifold
        ax.semilogy(t, np.maximum(gap, floor), color="tab:green", alpha=0.3, lw=0.8)
        ax.axhline(floor, color="0.5", lw=0.8, ls=":", label="round-off of $E^*$")
        ax.set_ylabel("$E(t) - E^*$ (a.u.)")
        ax.legend(fontsize="small")
    ax.set_xlabel("time (τ)")
    ax.set_title("energy descent" if reference is None
                 else "energy descent to $E^*$, the energy on the manifold")
    return fig


def manifold_energy(network: HopfieldNetwork) -> float | None:
    """The energy ``E*`` of the target bump (the same at every point of the manifold).

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.

    Returns
    -------
    float or None
        None for a network without a manifold.
    """
    m = network.manifold
    if m is None:
        return None
    with torch.no_grad():
        return float(network.energy(m.u0.unsqueeze(0)).min())


def plot_path_integration(trajectory: SimulationResult, runs: int = 4,
                          ax: Axes | None = None) -> Figure:
    """Decoded phase (solid) against the integrated input velocity (dashed) for a few runs."""
    fig, ax = new_axes(ax)
    t = _np(trajectory.t)
    dec = _np(trajectory.decoded)[..., 0]
    ref = _np(trajectory.reference)[..., 0]
    for b in range(min(runs, dec.shape[1])):
        line = ax.plot(t, np.unwrap(dec[:, b]), lw=1.2)[0]
        ax.plot(t, ref[:, b], "--", color=line.get_color(), lw=1)
    ax.set_xlabel("time (τ)")
    ax.set_ylabel("bump phase (rad, unwrapped)")
    ax.set_title("path integration: decoded (solid) vs input (dashed)")
    return fig


def plot_loss(history: dict, ax: Axes | None = None) -> Figure:
    """Training losses per step (log scale)."""
    fig, ax = new_axes(ax)
    for key, values in history.items():
        v = np.asarray(values, dtype=float)
        if v.size and np.any(v > 0):
            ax.semilogy(np.maximum(v, 1e-30), label=key, lw=1)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss")
    ax.legend(frameon=False)
    return fig


def plot_activity(trajectory: SimulationResult, run: int = 0, ax: Axes | None = None) -> Figure:
    """Rates of a ring population over time (neurons by preferred angle), viridis."""
    fig, ax = new_axes(ax)
    r = _np(trajectory.r)[:, run]
    if r.ndim != 2:
        raise ValueError("trajectory: plot_activity needs a ring (T, B, N) run")
    t = _np(trajectory.t)
    n = r.shape[1]
    mesh = ax.pcolormesh(t, 2 * np.pi * np.arange(n) / n, r.T, cmap="viridis", shading="auto")
    fig.colorbar(mesh, ax=ax, label="rate (a.u.)")
    ax.set_xlabel("time (τ)")
    ax.set_ylabel("preferred angle (rad)")
    return fig


def plot_sweep(rows: list, x: str, y: str, series: str, ax: Axes | None = None) -> Figure:
    """A sweep's result ``y`` against axis ``x``, one line per value of ``series``.

    Parameters
    ----------
    rows : list of dict
        The sweep table, one dict per cell.
    x, y, series : str
        Column names: the horizontal axis, the plotted value, and the column whose values
        give one line each.
    ax : matplotlib.axes.Axes, optional
        Axes to draw in (a new figure when omitted).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = new_axes(ax)
    for value in sorted({r[series] for r in rows}):
        pts = sorted((float(r[x]), float(r[y])) for r in rows if r[series] == value)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"{series}={value}")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.legend(frameon=False)
    return fig
