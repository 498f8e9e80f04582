"""Animated figures written as GIF files (one writer for both packages).

A figure built without pyplot is redrawn frame by frame by a caller's ``update(i)`` and written
with matplotlib's :class:`~matplotlib.animation.PillowWriter`; the layout is computed once, on
the first frame, and then held fixed (no jitter between frames, and faster).

Examples
--------
>>> frame_index(100, 5).tolist()
[0, 25, 50, 74, 99]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .checks import check_positive, check_positive_int
from .errors import BadInput

__all__ = ["frame_index", "write_gif"]


def frame_index(count: int, frames: int) -> np.ndarray:
    """At most ``frames`` evenly spaced, distinct indices into ``count`` saved states.

    Returns
    -------
    ndarray of int, shape (min(frames, count),), increasing from 0 to ``count - 1``.
    """
    frames = check_positive_int("frames", frames)
    return np.unique(np.linspace(0, count - 1, min(frames, count)).round().astype(int))


def write_gif(fig: Figure, path: str | Path, fps: float, update: Callable[[int], None],
              frames: np.ndarray, dpi: int) -> Path:
    """Write a GIF: ``update(i)`` draws frame ``i`` into ``fig`` for each ``i`` in ``frames``.

    Parameters
    ----------
    fig : Figure
        The figure (built without pyplot); its layout is computed once, on the first frame.
    path : str or Path
        Output file, ``*.gif``.
    fps : float
        Frames per second, > 0.
    update : callable
        ``update(i: int) -> None``.
    frames : ndarray of int
        The indices passed to ``update``, in order.
    dpi : int
        Resolution of the frames.

    Returns
    -------
    Path
        The written file.
    """
    from matplotlib.animation import PillowWriter

    fps = check_positive("fps", fps)
    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise BadInput(f"path={str(path)!r} is not allowed; it must end with .gif")
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    update(int(frames[0]))
    fig.canvas.draw()
    fig.set_layout_engine("none")
    writer = PillowWriter(fps=fps)
    with writer.saving(fig, str(path), dpi):
        for i in frames:
            update(int(i))
            writer.grab_frame()
    return path
