"""Figures of an attractor manifold: activity embeddings, the energy landscape, the bump's path."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from _runkit import BadInput
from _runkit.notebook import notebook_figure

from .._util import to_numpy
from ..analysis.activity import ManifoldActivity
from ..analysis.embedding import Embedding, pca
from ..analysis.landscape import EnergyLandscape
from ..dynamics.simulation import SimulationResult
from .embedding import plot_embedding_2d, plot_embedding_3d

__all__ = ["plot_activity_pca", "plot_activity_isomap", "plot_energy_landscape",
           "plot_manifold_path", "phase_labels", "POLAR_TICKS"]

_PHASE = "decoded phase"
#: Tick labels of a polar axis at 0, pi/2, pi, 3 pi/2.
POLAR_TICKS = ["0", "π/2", "π", "3π/2"]


def phase_labels(dim: int) -> list[str]:
    """Axis labels of the manifold coordinates: ``ψ`` or ``ψ1``, ``ψ2``."""
    return ["ψ (rad)"] if dim == 1 else [f"ψ{a + 1} (rad)" for a in range(dim)]


def plot_activity_pca(activity: ManifoldActivity, emb: Embedding | None = None,
                      path: np.ndarray | None = None, fig: Figure | None = None) -> Figure:
    """PCA (3-D) of activity, coloured by each decoded phase (cyclic ``twilight``).

    One 3-D panel per manifold coordinate. ``coords = (R - mean) V_3^T`` (see
    :func:`~neurodyn.analysis.embedding.pca`).

    Parameters
    ----------
    activity : ManifoldActivity
        Samples with ``rates (samples, N)`` and ``decoded (samples, dim)``.
    emb : Embedding or None
        A PCA of ``activity.rates`` with >= 3 components (computed when ``None``).
    path : numpy.ndarray or None, shape (T, N)
        Optional rates of one run, projected and drawn as a black line.
    fig : Figure or None
        Figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    emb = pca(activity.rates, 3) if emb is None else emb
    dim = activity.decoded.shape[1]
    if fig is None:
        fig = notebook_figure(Figure(figsize=(5.2 * dim, 4.4), layout="constrained"))
    for a in range(dim):
        ax = fig.add_subplot(1, dim, a + 1, projection="3d")
        plot_embedding_3d(emb, activity.decoded[:, a], ax=ax,
                          color_label=f"{_PHASE} {phase_labels(dim)[a]}", s=3.0)
        if path is not None:
            xyz = emb.transform(np.asarray(path, dtype=np.float64))
            ax.plot(xyz[:, 0], xyz[:, 1], xyz[:, 2], color="k", lw=1.0,
                    label="one path-integration run")
            ax.legend(loc="upper left", fontsize="small", frameon=False)
    fig.suptitle("population activity, first three principal components")
    return fig


def plot_activity_isomap(activity: ManifoldActivity, emb: Embedding,
                         index: np.ndarray | None = None, fig: Figure | None = None) -> Figure:
    """Isomap (2-D) of activity, coloured by each decoded phase (cyclic ``twilight``).

    Parameters
    ----------
    activity : ManifoldActivity
        The samples.
    emb : Embedding
        An Isomap embedding of ``activity.rates[index]`` with >= 2 coordinates.
    index : numpy.ndarray or None, shape (points,)
        Rows of the activity that ``emb`` embeds (all when ``None``).
    fig : Figure or None
        Figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    dec = activity.decoded if index is None else activity.decoded[index]
    if dec.shape[0] != emb.coords.shape[0]:
        raise BadInput(f"emb: {emb.coords.shape[0]} points, but {dec.shape[0]} decoded phases",
                       param="emb")
    dim = dec.shape[1]
    if fig is None:
        fig = notebook_figure(Figure(figsize=(5.6 * dim, 4.2), layout="constrained"))
    for a in range(dim):
        ax = fig.add_subplot(1, dim, a + 1)
        plot_embedding_2d(emb, dec[:, a], ax=ax, color_label=f"{_PHASE} {phase_labels(dim)[a]}")
    fig.suptitle("population activity, Isomap")
    return fig


def plot_energy_landscape(landscape: EnergyLandscape, fig: Figure | None = None) -> Figure:
    """Energy along the manifold (flat) and along its normal directions (a valley at 0).

    Left: ``E(u*(psi)) - E(u*(0))`` versus ``psi``. Right: ``E(u*(0) + s ||u*|| n) - E(u*(0))``
    versus ``s``, one line per normal direction ``n``.

    Parameters
    ----------
    landscape : EnergyLandscape
        From :func:`energy_landscape`.
    fig : Figure or None
        Figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    fig = notebook_figure(Figure(figsize=(10.0, 3.8), layout="constrained")) if fig is None else fig
    ax_t, ax_n = fig.subplots(1, 2)
    for name, e in zip(landscape.tangent_names, landscape.tangent, strict=True):
        ax_t.plot(landscape.psi, e, lw=1.2, label=f"along {name}")
    ax_t.set_xlabel("manifold coordinate ψ (rad)")
    ax_t.set_ylabel("$E(u^*(ψ)) - E(u^*(0))$ (a.u.)")
    depth = abs(landscape.normal_depth) or 1.0
    ax_t.set_ylim(-depth, depth)
    ax_t.set_title(f"tangent: range {landscape.tangent_range:.2g} "
                   f"({landscape.tangent_relative:.1g} of the normal depth)", fontsize="small")
    ax_t.legend(frameon=False, fontsize="small")
    colours = _sampled_colours("viridis", len(landscape.normal_names))
    for name, e, c in zip(landscape.normal_names, landscape.normal, colours, strict=True):
        ax_n.plot(landscape.s, e, lw=1.2, color=c, label=name)
    ax_n.axvline(0.0, color="0.5", lw=0.8, ls=":")
    ax_n.set_xlabel("normal displacement $s$ (relative distance $\\|δu\\| / \\|u^*\\|$)")
    ax_n.set_ylabel("$E(u^*(0) + s\\|u^*\\| n) - E(u^*(0))$ (a.u.)")
    ax_n.set_title("normal directions at $u^*(0)$", fontsize="small")
    ax_n.legend(frameon=False, fontsize="small")
    return fig


def _sampled_colours(cmap: str, count: int) -> list:
    from matplotlib import colormaps

    cm = colormaps[cmap]
    return [cm(x) for x in np.linspace(0.0, 0.85, max(count, 1))]


def _wrapped_segments(x: np.ndarray, y: np.ndarray | None = None) -> list[np.ndarray]:
    """Split a wrapped path at its jumps across the period (so no line crosses the plot)."""
    pts = np.c_[x] if y is None else np.c_[x, y]
    jump = np.any(np.abs(np.diff(pts, axis=0)) > math.pi, axis=1)
    cuts = np.flatnonzero(jump) + 1
    return [p for p in np.split(pts, cuts) if len(p) > 1]


def plot_manifold_path(trajectory: SimulationResult, runs: int = 4, fig: Figure | None = None,
                       shown: int = 1) -> Figure:
    """The bump's path on the manifold during path integration and its error.

    Left: ring, the decoded angle on a circle with radius growing with time (polar); torus, the
    decoded phases on the unit cell ``[0, 2 pi)^2``, coloured by time (``viridis``). Dashed: the
    integrated input velocity. Right: the wrapped error ``decoded - reference`` (rad) over time.

    Parameters
    ----------
    trajectory : SimulationResult
        A run with velocity input (``reference`` is set).
    runs : int
        How many runs' errors to draw.
    fig : Figure or None
        Figure to draw into (a new one otherwise).
    shown : int
        How many runs' paths to draw on the manifold (the first ones).

    Returns
    -------
    Figure
    """
    if trajectory.reference is None:
        raise BadInput("trajectory: plot_manifold_path needs a run with velocity input",
                       param="trajectory")
    t = to_numpy(trajectory.t)
    dec = to_numpy(trajectory.decoded)
    ref = np.mod(to_numpy(trajectory.reference), 2 * math.pi)
    err = to_numpy(trajectory.path_error())
    dim = dec.shape[-1]
    n = min(runs, dec.shape[1])
    fig = notebook_figure(Figure(figsize=(10.0, 4.4), layout="constrained")) if fig is None else fig
    colours = [f"C{b}" for b in range(n)]
    if dim == 1:
        _draw_ring_path(fig, t, dec, ref, colours[:min(shown, n)])
    else:
        _draw_torus_path(fig, t, dec, ref, min(shown, n))
    ax_e = fig.add_subplot(1, 2, 2)
    for b in range(n):
        for a in range(dim):
            ax_e.plot(t, err[:, b, a], color=colours[b], lw=1.0, ls="-" if a == 0 else ":")
    ax_e.axhline(0.0, color="0.5", lw=0.8)
    ax_e.set_xlabel("time (τ)")
    ax_e.set_ylabel("path error, decoded − integrated (rad)")
    ax_e.set_title("path-integration error" + (" (solid ψ1, dotted ψ2)" if dim == 2 else ""),
                   fontsize="small")
    return fig


def _draw_ring_path(fig: Figure, t: np.ndarray, dec: np.ndarray, ref: np.ndarray,
                    colours: list[str]) -> None:
    """Left panel for a ring: decoded (solid) and integrated (dashed) angles of the first runs
    (one colour each) against time as the radius."""
    ax = fig.add_subplot(1, 2, 1, projection="polar")
    for b, colour in enumerate(colours):
        ax.plot(dec[:, b, 0], t, color=colour, lw=1.2)
        ax.plot(ref[:, b, 0], t, color=colour, lw=0.8, ls="--")
    ax.set_xticks(np.arange(4) * math.pi / 2, POLAR_TICKS)
    ax.set_title("decoded angle ψ (rad; solid) and integrated velocity (dashed);\n"
                 "radius: time (τ)", fontsize="small")


def _draw_torus_path(fig: Figure, t: np.ndarray, dec: np.ndarray, ref: np.ndarray,
                     runs: int) -> None:
    """Left panel for a torus: the first ``runs`` decoded paths in the phase unit cell,
    coloured by time and cut where they wrap, over the integrated paths (dashed)."""
    ax = fig.add_subplot(1, 2, 1)
    mappable = None
    for b in range(runs):
        for seg in _wrapped_segments(ref[:, b, 0], ref[:, b, 1]):
            ax.plot(seg[:, 0], seg[:, 1], color="0.6", lw=0.8, ls="--")
        pts = np.c_[dec[:, b, 0], dec[:, b, 1]]
        jump = np.any(np.abs(np.diff(pts, axis=0)) > math.pi, axis=1)
        segs = np.stack([pts[:-1], pts[1:]], axis=1)[~jump]
        lc = LineCollection(segs, cmap="viridis", lw=1.4)
        lc.set_array(0.5 * (t[:-1] + t[1:])[~jump])
        lc.set_clim(t[0], t[-1])
        mappable = ax.add_collection(lc)
    fig.colorbar(mappable, ax=ax, label="time (τ)")
    ax.set_xlim(0, 2 * math.pi)
    ax.set_ylim(0, 2 * math.pi)
    ax.set_aspect("equal")
    ax.set_xlabel(phase_labels(2)[0])
    ax.set_ylabel(phase_labels(2)[1])
    ax.set_title("bump path on the torus (phase unit cell);\ndashed: integrated velocity",
                 fontsize="small")
