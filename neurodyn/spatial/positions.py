"""User positions as trajectories: checks, files (``.npy``, ``.npz``, RatInABox histories).

``velocity[i] = (position[i + 1] - position[i]) / dt``; the last velocity repeats the previous.
"""

from __future__ import annotations

import json
import os

import numpy as np

from _runkit import BadInput, BadType, check_positive
from _runkit.files import load_arrays

from .agent import Box, Trajectory

__all__ = ["check_positions", "load_positions", "ratinabox_arrays"]


def check_positions(position: np.ndarray, box: Box) -> None:
    """Raise ``BadInput`` unless every position ``(steps, 2)`` is finite and inside ``box``.

    The message names the first offending index and value (and how many lie outside).
    """
    bad = ~np.isfinite(position)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise BadInput(
            f"positions must be finite, got {position[i, j]} at index [{i}, {j}]", param="positions"
        )
    outside = ~box.contains(position)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise BadInput(
            f"positions must lie inside the box [0, {box.size}] x [0, {box.size}] m, got "
            f"{position[i].tolist()} at index {i} ({int(outside.sum())} positions outside)",
            param="positions"
        )


def load_positions(
    source: str | os.PathLike | np.ndarray,
    dt: float | None = None,
    box: Box | None = None,
    *,
    times: np.ndarray | None = None,
) -> Trajectory:
    """Wrap user positions sampled every ``dt`` seconds as a :class:`Trajectory`.

    ``velocity[i] = (position[i + 1] - position[i]) / dt``; the last velocity repeats the previous.

    Parameters
    ----------
    source : path or array, shape (steps, 2)
        Positions in metres, or a ``.npy`` file holding them, or a ``.npz`` file with an array
        ``position`` (and optionally ``t``, used as ``times`` when ``times`` is not given), or
        a RatInABox history (``.npz`` of ``get_history_arrays()`` or ``.json`` of
        ``Agent.history``, with ``t`` and ``pos``).
    dt : float, optional
        Sampling interval in seconds, > 0. Required unless ``times`` is given.
    box : Box, optional
        The arena (default ``Box(1.0)``); every position must lie inside it.
    times : array, shape (steps,), optional
        Sample times in seconds: finite, strictly increasing and uniformly spaced (relative
        tolerance 1e-6); their spacing must equal ``dt`` when both are given.

    Returns
    -------
    Trajectory

    Raises
    ------
    BadInput
        Wrong shape, fewer than 2 steps, non-finite values, a position outside the box, a
        non-positive ``dt``, non-monotone or non-uniform ``times``, an unsupported file type.
    """
    box = Box() if box is None else box
    if not isinstance(box, Box):
        raise BadType(f"box must be a Box, got {box!r}", param="box")
    if isinstance(source, (str, os.PathLike)):
        position, file_times = _read_positions_file(source)
        if times is None:
            times = file_times
    else:
        position = np.asarray(source)
    position = _checked_positions(position, box)
    t, dt = _sample_times(times, dt, position.shape[0])
    velocity = np.empty_like(position)
    velocity[:-1] = np.diff(position, axis=0) / dt
    velocity[-1] = velocity[-2]
    return Trajectory(t=t, position=position, velocity=velocity, dt=dt, box=box)


def _checked_positions(position: np.ndarray, box: Box) -> np.ndarray:
    """``position`` as a float ``(steps, 2)`` array of at least 2 steps inside ``box``
    (``BadInput`` otherwise)."""
    if position.dtype.kind not in "iuf":
        raise BadType(f"positions must be a real numeric array, got dtype {position.dtype}",
                      param="positions")
    position = np.array(position, dtype=float)
    if position.ndim != 2 or position.shape[1] != 2:
        raise BadInput(f"positions must have shape (steps, 2), got shape {position.shape}",
                       param="positions")
    steps = position.shape[0]
    if steps < 2:
        raise BadInput(f"positions must have at least 2 steps, got {steps}", param="positions")
    check_positions(position, box)
    return position


def _sample_times(times, dt: float | None, steps: int) -> tuple[np.ndarray, float]:
    """The ``(steps,)`` sample times and the interval: checked ``times`` (their mean step
    unless ``dt`` is given), or multiples of ``dt``; ``BadInput`` when neither is given."""
    if dt is not None:
        dt = check_positive("dt", dt)
    if times is not None:
        t = _check_times(times, steps, dt)
        dt = float(np.mean(np.diff(t))) if dt is None else dt
    elif dt is None:
        raise BadInput("dt must be given (a float > 0) when times is not given, got None",
                       param="dt")
    else:
        t = np.arange(steps) * dt
    return t, dt


def ratinabox_arrays(source) -> tuple[np.ndarray, np.ndarray]:
    """Times ``(steps,)`` and positions ``(steps, 2)`` of a RatInABox history.

    Parameters
    ----------
    source : Agent or dict or str or Path
        A RatInABox ``Agent``, its ``history`` dict (lists) or ``get_history_arrays()`` dict, or a
        path to a ``.npz`` / ``.json`` file holding ``t`` and ``pos``.

    Returns
    -------
    t, pos : arrays.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        suffix = os.path.splitext(path)[1].lower()
        if suffix == ".npz":
            hist = load_arrays(path, "source")
        elif suffix == ".json":
            try:
                with open(path, encoding="utf-8") as fh:
                    hist = json.load(fh)
            except RecursionError:
                raise BadInput(f"source {path!r} is JSON nested too deeply to read") from None
        else:
            raise BadInput(f"source {path!r}: a RatInABox history must be a .npz or .json file")
    elif hasattr(source, "history") and isinstance(source.history, dict):
        hist = source.history
    elif isinstance(source, dict):
        hist = source
    else:
        raise BadInput(f"source: expected a RatInABox Agent, a history dict or a file, got "
                       f"{type(source).__name__}", param="source")
    missing = [k for k in ("t", "pos") if k not in hist]
    if missing:
        raise BadInput(f"source: a RatInABox history needs keys 't' and 'pos'; missing "
                       f"{missing} (has {sorted(hist)})", param="source")
    t = np.asarray(hist["t"], dtype=float)
    pos = np.asarray(hist["pos"], dtype=float)
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise BadInput(f"pos: shape {pos.shape}; a 2-D environment's positions are (steps, 2)",
                       param="pos")
    return t, pos


def _read_positions_file(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray | None]:
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".npy", ".npz"):
        data = load_arrays(path, "source")
        if not isinstance(data, dict):
            return data, None
        if "position" in data:
            return data["position"], data.get("t")
        if "pos" in data and "t" in data:  # RatInABox Agent.get_history_arrays()
            return data["pos"], data["t"]
        raise BadInput(
            f"source {path!r} must hold an array named 'position' (or RatInABox's 't' and "
            f"'pos'), has {sorted(data)}"
        )
    if suffix == ".json":  # a RatInABox Agent.history dict
        t, pos = ratinabox_arrays(path)
        return pos, t
    raise BadInput(f"source must be a .npy or .npz file, a RatInABox .json history or an "
                   f"array, got {path!r}", param="source")


def _check_times(times: np.ndarray, steps: int, dt: float | None) -> np.ndarray:
    t = np.asarray(times, dtype=float)
    if t.shape != (steps,):
        raise BadInput(f"times must have shape ({steps},) like positions, got shape {t.shape}",
                       param="times")
    if not np.all(np.isfinite(t)):
        i = int(np.flatnonzero(~np.isfinite(t))[0])
        raise BadInput(f"times must be finite, got {t[i]} at index {i}", param="times")
    step = np.diff(t)
    if np.any(step <= 0):
        i = int(np.flatnonzero(step <= 0)[0])
        raise BadInput(
            f"times must be strictly increasing, got times[{i}]={t[i]} then "
            f"times[{i + 1}]={t[i + 1]}", param="times"
        )
    mean = float(np.mean(step))
    if np.max(np.abs(step - mean)) > 1e-6 * mean:
        raise BadInput(
            f"times must be uniformly spaced (relative tolerance 1e-6), got spacings from "
            f"{step.min()} to {step.max()} s; resample the positions first", param="times"
        )
    if dt is not None and abs(mean - dt) > 1e-6 * dt:
        raise BadInput(f"dt must equal the spacing of times ({mean} s), got {dt}", param="dt")
    return t
