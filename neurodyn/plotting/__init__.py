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

from _runkit import BadInput
from _runkit.files import atomic_save_figure
from _runkit.notebook import notebook_figure

from ..analysis.diagnostics import ConnectivityProfile
from ..dynamics.simulation import SimulationResult
from ..network import HopfieldNetwork

__all__ = ["new_axes", "plot_bump", "plot_spectrum", "plot_connectivity", "plot_distance",
           "plot_energy", "manifold_energy", "plot_path_integration", "plot_loss",
           "plot_activity", "plot_sweep", "save_figure"]


def new_axes(ax: Axes | None = None, figsize=(5.0, 3.6)) -> tuple[Figure, Axes]:
    """Return ``(figure, axes)``: the given axes' figure, or a new stand-alone figure; either
    shows once in a notebook (:func:`_runkit.notebook.notebook_figure`)."""
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
        raise BadInput("network: plot_bump needs a ring network with a manifold", param="network")
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
    ax.plot(idx[near], ev[near], "o", color="tab:red",
            label=f"neutral (|λ| ≤ {zero_tol:g}): {int(near.sum())}")
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
    # interpolate: each fill reaches the zero crossing instead of stopping a sample short
    ax.fill_between(d, w, 0, where=w > 0, interpolate=True, color="tab:red", alpha=0.25,
                    label="excitation")
    ax.fill_between(d, w, 0, where=w < 0, interpolate=True, color="tab:blue", alpha=0.25,
                    label="inhibition")
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
    """Decoded phase against the integrated input velocity for a few runs.

    The integrated input is a wide pale band and the decoded phase a thin dark line of the
    same colour on top of it, so both stay visible where they agree (a dashed line under a
    solid one disappears); the title gives the largest gap between them."""
    fig, ax = new_axes(ax)
    t = _np(trajectory.t)
    dec = _np(trajectory.decoded)[..., 0]
    ref = _np(trajectory.reference)[..., 0]
    shown = min(runs, dec.shape[1])
    gap = 0.0
    for b in range(shown):
        decoded = np.unwrap(dec[:, b])
        decoded += 2 * np.pi * np.round((ref[0, b] - decoded[0]) / (2 * np.pi))
        band = ax.plot(t, ref[:, b], lw=6, alpha=0.3, solid_capstyle="butt",
                       label="integrated input" if b == 0 else None)[0]
        ax.plot(t, decoded, lw=1.2, color=band.get_color(),
                label="decoded bump phase" if b == 0 else None)
        gap = max(gap, float(np.abs(decoded - ref[:, b]).max()))
    ax.set_xlabel("time (τ)")
    ax.set_ylabel("bump phase (rad, unwrapped)")
    ax.set_title(f"path integration, {shown} runs: decoded phase (line) on the integrated "
                 f"input (band)\nlargest gap {gap:.2g} rad", fontsize="medium")
    ax.legend(frameon=False, fontsize="small")
    return fig


#: what one step of a fit is, per energy family (the x-axis of :func:`plot_loss`)
FIT_STEPS = {"seal": "sampled batches in the least-squares solve",
             "spectral": "sampled batches in the least-squares solve",
             "mlp": "Adam step (one sampled batch each)",
             "template": "Levenberg-Marquardt step (one sampled batch each)"}


def plot_loss(history: dict, ax: Axes | None = None, family: str = "seal",
              unfitted: dict | None = None) -> Figure:
    """Each term's loss after each step of a fit (log scale), and what it fell from.

    Parameters
    ----------
    history : dict[str, list of float]
        Each term's loss per step (:attr:`~neurodyn.fitting.core.FitResult.history`).
    ax : Axes or None
        Axes to draw into (a new figure otherwise).
    family : str
        The energy family, which says what a step is (:data:`FIT_STEPS`): the closed-form
        families solve least squares on every batch drawn so far, so their loss is the
        residual of an exact fit (round-off) and may grow by round-off as batches are added.
    unfitted : dict[str, float], optional
        Each term's loss with no learned energy (``FitResult.unfitted``), drawn dashed: the
        level the fit brought the loss down from.

    Returns
    -------
    Figure
    """
    fig, ax = new_axes(ax, figsize=(7.0, 3.8))
    falls = []
    few = max((len(v) for v in history.values()), default=0) <= 40
    for key, values in history.items():
        v = np.asarray(values, dtype=float)
        if not (v.size and np.any(v > 0)):
            continue
        steps = np.arange(1, v.size + 1)
        line = ax.semilogy(steps, np.maximum(v, 1e-30), "o-" if few else "-", ms=3,
                           label=f"{key}", lw=1)[0]
        if unfitted and unfitted.get(key, 0) > 0:
            ax.axhline(unfitted[key], color=line.get_color(), ls="--", lw=1,
                       label=f"{key}, unfitted (θ = 0)")
            falls.append(unfitted[key] / max(v[-1], 1e-300))
    ax.set_xlabel(FIT_STEPS.get(family, "step"))
    ax.set_ylabel("loss (mean squared residual per batch)")
    if few:
        ax.xaxis.get_major_locator().set_params(integer=True)
    title = f"fit of the {family} energy: loss of each term"
    if falls:
        title += (f"\n{min(falls):.0e} to {max(falls):.0e} times below the network with no "
                  "learned energy (dashed)")
    ax.set_title(title, fontsize="medium")
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_activity(trajectory: SimulationResult, run: int = 0, ax: Axes | None = None) -> Figure:
    """Rates of one run of a ring population over time, centred on the bump.

    The neurons are drawn by their preferred angle relative to the bump's final phase
    ``psi`` (decoded at the last saved time), so the bump sits in the middle instead of
    being split between the top and bottom edges; the dotted line marks the ring's seam
    (preferred angle 0 = 2 pi). The title names the run (of how many).

    Parameters
    ----------
    trajectory : SimulationResult
        A ring run, rates ``(T, B, N)``.
    run : int
        Which of the ``B`` runs.
    ax : Axes or None
        Axes to draw into (a new figure otherwise).

    Returns
    -------
    Figure
    """
    fig, ax = new_axes(ax)
    rates = _np(trajectory.r)
    if rates.ndim != 3:
        raise BadInput("trajectory: plot_activity needs a ring (T, B, N) run", param="trajectory")
    if not 0 <= run < rates.shape[1]:
        raise BadInput(f"run={run}: the trajectory has runs 0..{rates.shape[1] - 1}", param="run")
    r, t, n = rates[:, run], _np(trajectory.t), rates.shape[2]
    psi = float(_np(trajectory.decoded)[-1, run, 0])
    shift = int(round(psi / (2 * np.pi) * n)) - n // 2  # the neuron at psi to the middle
    rel = 2 * np.pi * (np.arange(n) - n // 2) / n
    mesh = ax.pcolormesh(t, rel, np.roll(r, -shift, axis=1).T, cmap="viridis", shading="auto")
    seam = ((-shift) % n - n // 2) * 2 * np.pi / n  # where neuron 0 is drawn
    ax.axhline(seam, color="tab:red", ls="--", lw=1, label="seam: angle 0 = 2π")
    ax.legend(loc="lower right", fontsize="small", framealpha=0.7)
    fig.colorbar(mesh, ax=ax, label="rate (a.u.)")
    ax.set_xlabel("time (τ)")
    ax.set_ylabel(f"preferred angle − {psi:.2f} rad")
    ax.set_title(f"run {run} of {rates.shape[1]}: rates, centred on the bump's final "
                 f"phase ψ = {psi:.2f} rad", fontsize="medium")
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
