"""GIF animations of a moving bump, on a ring or on a torus sheet.

Frames are drawn on figures built without pyplot and written with matplotlib's
:class:`~matplotlib.animation.PillowWriter`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from _runkit import BadInput
from _runkit.files import frame_index, write_gif

from .._util import to_numpy
from ..geometry.populations import sheet_corners
from .manifold import POLAR_TICKS, phase_labels

__all__ = ["animate_ring_bump", "animate_sheet_bump", "write_gif"]


def _trajectory_arrays(trajectory, run: int, dim: int) -> tuple[np.ndarray, ...]:
    t = to_numpy(trajectory.t).astype(float)
    r = to_numpy(trajectory.r)
    dec = to_numpy(trajectory.decoded)
    if r.ndim != 2 + dim:
        raise BadInput(f"trajectory: rates of shape {r.shape}; expected (T, B, "
                       + ("N)" if dim == 1 else "n1, n2)"), param="trajectory")
    if not 0 <= run < r.shape[1]:
        raise BadInput(f"run={run}: must be in [0, {r.shape[1]})", param="run")
    if len(t) != r.shape[0]:
        raise BadInput(f"trajectory: {len(t)} times but {r.shape[0]} saved states",
                       param="trajectory")
    return t, r[:, run], dec[:, run].reshape(len(t), -1)


def animate_ring_bump(trajectory, path: str | Path, fps: float = 15.0, frames: int = 60,
                      run: int = 0, dpi: int = 80) -> Path:
    """GIF of a moving bump on a ring: the rate profile and its decoded angle.

    Left: rates ``r_j(t)`` versus the preferred angle ``theta_j = 2 pi j / N``; right: the
    decoded angle ``psi(t) = -arg z_1(r(t))`` on the unit circle with its recent trail.

    Parameters
    ----------
    trajectory : SimulationResult
        A :class:`~neurodyn.dynamics.simulation.SimulationResult` (or any object with ``t (T,)``,
        ``r (T, B, N)`` and ``decoded (T, B, 1)``).
    path : str or Path
        Output file, ``*.gif``.
    fps : float
        Frames per second (> 0).
    frames : int
        At most this many frames, evenly spaced over the saved states (>= 1).
    run : int
        Which run of the batch.
    dpi : int
        Resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, T)`` frames).
    """
    t, r, dec = _trajectory_arrays(trajectory, run, 1)
    idx = frame_index(len(t), frames)
    n = r.shape[1]
    theta = 2 * math.pi * np.arange(n) / n
    fig = Figure(figsize=(8.0, 3.4), layout="constrained")
    ax, ax_c = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2, projection="polar")
    line, = ax.plot(theta, r[0], color="#21918c", lw=1.8)
    marker = ax.axvline(dec[0, 0], color="0.3", ls=":", lw=1)
    ax.set_xlim(0, 2 * math.pi)
    top = float(r.max())
    ax.set_ylim(min(0.0, float(r.min())), 1.05 * top if top > 0 else 1.0)
    ax.set_xlabel("preferred angle θ (rad)")
    ax.set_ylabel("rate r (a.u.)")
    trail, = ax_c.plot([], [], color="0.6", lw=1)
    dot, = ax_c.plot([], [], "o", color="#440154", ms=8)
    ax_c.set_ylim(0, 1.1)
    ax_c.set_yticks([])
    ax_c.set_xticks(np.arange(4) * math.pi / 2, POLAR_TICKS)
    ax_c.set_title("decoded angle ψ (rad)", fontsize="small")
    title = fig.suptitle("")

    def update(i: int) -> None:
        line.set_ydata(r[i])
        marker.set_xdata([dec[i, 0], dec[i, 0]])
        lo = max(0, i - 20)
        trail.set_data(dec[lo:i + 1, 0], np.ones(i + 1 - lo))
        dot.set_data([dec[i, 0]], [1.0])
        title.set_text(f"bump on the ring, t = {t[i]:.1f} τ")

    return write_gif(fig, path, fps, update, idx, dpi)


def animate_sheet_bump(trajectory, path: str | Path, lattice: str = "hex", fps: float = 15.0,
                       frames: int = 60, run: int = 0, dpi: int = 80) -> Path:
    """GIF of a moving bump on a torus sheet: the rates on the sheet and the decoded phases.

    Left: rates of neuron ``(i, j)`` drawn at ``i e1 + j e2`` with ``e2`` at 60 degrees (hex) or
    90 degrees (square), ``viridis`` on a fixed scale; right: decoded phases
    ``(psi1, psi2)`` on the unit cell with their recent trail.

    Parameters
    ----------
    trajectory : SimulationResult
        A :class:`~neurodyn.dynamics.simulation.SimulationResult` (or any object with ``t (T,)``,
        ``r (T, B, n1, n2)`` and ``decoded (T, B, 2)``).
    path : str or Path
        Output file, ``*.gif``.
    lattice : str
        ``"hex"`` or ``"square"``, the sheet's geometry.
    fps : float
        Frames per second (> 0).
    frames : int
        At most this many frames, evenly spaced over the saved states (>= 1).
    run : int
        Which run of the batch.
    dpi : int
        Resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, T)`` frames).
    """
    if lattice not in ("hex", "square"):
        raise BadInput(f"lattice={lattice!r}: unknown; choose one of ('hex', 'square')",
                       param="lattice")
    t, r, dec = _trajectory_arrays(trajectory, run, 2)
    idx = frame_index(len(t), frames)
    x, y = sheet_corners(r.shape[1:], lattice)
    fig = Figure(figsize=(8.4, 3.6), layout="constrained")
    ax, ax_p = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    mesh = ax.pcolormesh(x, y, r[0], cmap="viridis", vmin=float(r.min()), vmax=float(r.max()),
                         shading="flat")
    fig.colorbar(mesh, ax=ax, label="rate r (a.u.)")
    ax.set_aspect("equal")
    ax.set_xlabel("sheet x (neuron spacings)")
    ax.set_ylabel("sheet y (neuron spacings)")
    trail, dot = _phase_panel(ax_p)
    title = fig.suptitle("")

    def update(i: int) -> None:
        mesh.set_array(r[i].ravel())
        lo = max(0, i - 30)
        trail.set_data(dec[lo:i + 1, 0], dec[lo:i + 1, 1])
        dot.set_data([dec[i, 0]], [dec[i, 1]])
        title.set_text(f"bump on the {lattice} sheet, t = {t[i]:.1f} τ")

    return write_gif(fig, path, fps, update, idx, dpi)


def _phase_panel(ax_p):
    """The torus's phase unit cell on ``ax_p`` with an empty trail and dot of the decoded
    phases; returns those two lines."""
    trail, = ax_p.plot([], [], ".", color="0.6", ms=2)
    dot, = ax_p.plot([], [], "o", color="#440154", ms=8)
    ax_p.set_xlim(0, 2 * math.pi)
    ax_p.set_ylim(0, 2 * math.pi)
    ax_p.set_aspect("equal")
    ax_p.set_xlabel(phase_labels(2)[0])
    ax_p.set_ylabel(phase_labels(2)[1])
    ax_p.set_title("decoded phases", fontsize="small")
    return trail, dot
