"""GIF animation of flow trajectories from noise to data in the plane."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from _runkit.files import frame_index, write_gif

from ..errors import FlowsError

__all__ = ["animate_flow"]


def animate_flow(trajectories: np.ndarray, path: str | Path, times: np.ndarray | None = None,
                 target: np.ndarray | None = None, fps: float = 15.0, frames: int = 60,
                 trails: int = 64, dpi: int = 80) -> Path:
    """GIF of flow trajectories from noise (t = 0) to data (t = 1) in the plane.

    Each frame shows the points ``x_i(t)``, coloured by the angle of their starting point
    ``atan2(x_i(0))`` (cyclic ``twilight``), so that one sees where each part of the noise goes;
    ``trails`` of them draw their path so far.

    Parameters
    ----------
    trajectories : array ``(steps, n, 2)``, the ODE solution at ``steps`` times.
    path : output file, ``*.gif``.
    times : ``(steps,)`` times of the solution (default ``linspace(0, 1, steps)``).
    target : optional ``(m, 2)`` data samples drawn faintly in the background.
    fps : frames per second (> 0).
    frames : at most this many frames, evenly spaced over the steps (>= 1).
    trails : number of points whose path is drawn (>= 0).
    dpi : resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, steps)`` frames).
    """
    x, t, trails = _checked_flow(trajectories, times, trails)
    idx = frame_index(x.shape[0], frames)
    fig = Figure(figsize=(4.6, 4.4), layout="constrained")
    ax = fig.add_subplot()
    _draw_background(ax, x, target)
    angle = np.mod(np.arctan2(x[0, :, 1], x[0, :, 0]), 2 * math.pi)
    lines = [ax.plot([], [], color="0.4", lw=0.5, alpha=0.6)[0] for _ in range(trails)]
    sc = ax.scatter(x[0, :, 0], x[0, :, 1], c=angle, cmap="twilight", vmin=0, vmax=2 * math.pi,
                    s=4, linewidths=0)
    fig.colorbar(sc, ax=ax, shrink=0.8, label="angle of the starting point (rad)")
    title = ax.set_title("")

    def update(i: int) -> None:
        sc.set_offsets(x[i])
        for j, ln in enumerate(lines):
            ln.set_data(x[: i + 1, j, 0], x[: i + 1, j, 1])
        title.set_text(f"flow from noise to data, t = {t[i]:.2f}")

    return write_gif(fig, path, fps, update, idx, dpi)


def _checked_flow(trajectories, times, trails) -> tuple[np.ndarray, np.ndarray, int]:
    """The trajectories ``(steps, n, 2)`` (finite), their times ``(steps,)`` (default evenly
    spaced in [0, 1]) and the number of trails (at most ``n``); ``FlowsError`` otherwise."""
    x = np.asarray(trajectories, dtype=np.float64)
    if x.ndim != 3 or x.shape[2] != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise FlowsError(f"trajectories: shape {x.shape}; expected (steps, n, 2)",
                         param="trajectories")
    if not np.all(np.isfinite(x)):
        raise FlowsError("trajectories: contains non-finite values", param="trajectories")
    steps = x.shape[0]
    t = np.linspace(0.0, 1.0, steps) if times is None else np.asarray(times, dtype=float)
    if t.shape != (steps,):
        raise FlowsError(f"times: shape {t.shape}; expected ({steps},)", param="times")
    if isinstance(trails, bool) or not isinstance(trails, (int, np.integer)) or trails < 0:
        raise FlowsError(f"trails={trails!r}: must be an int >= 0", param="trails")
    return x, t, min(int(trails), x.shape[1])


def _draw_background(ax, x: np.ndarray, target) -> None:
    """The ``target`` samples ``(m, 2)`` drawn faintly (if any), and equal axes limits that
    hold them and every state of ``x`` ``(steps, n, 2)``."""
    pts = x.reshape(-1, 2)
    if target is not None:
        tg = np.asarray(target, dtype=np.float64)
        if tg.ndim != 2 or tg.shape[1] != 2:
            raise FlowsError(f"target: shape {tg.shape}; expected (m, 2)", param="target")
        ax.scatter(tg[:, 0], tg[:, 1], s=2, color="0.8", linewidths=0, label="data")
        pts = np.r_[pts, tg]
    lo, hi = pts.min(0), pts.max(0)
    pad = 0.05 * (hi - lo) + 1e-9
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$ (data units)")
    ax.set_ylabel("$x_2$ (data units)")
