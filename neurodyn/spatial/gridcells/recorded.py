r"""Real rat trajectories for grid-cell runs: RatInABox's sessions, cleaned and resampled.

RatInABox's wheel ships two tracked sessions (``ratinabox/data/<name>.npz`` with ``t`` in s and
``pos`` in m, read by :func:`neurodyn.spatial.positions.ratinabox_arrays`): ``sargolini``
(Sargolini et al. 2006; 600 s at 50 Hz in a 1 m x 1 m box) and ``tanni`` (Tanni et al. 2022;
7,323 s at 30 Hz in a 3.5 m x 2.5 m box). Tracking is not a smooth path sampled on a clock:

- **jumps** -- a sample that the rat could not have reached from the last accepted one at a speed
  of at most ``max_speed`` m/s (a reflection or a swapped LED) is dropped; after ``relock`` s
  of consecutive drops the next sample is accepted again (the tracker has moved on, and the
  path joins it over the gap);
- **gaps** -- an interval between consecutive accepted samples longer than ``1.5`` times the
  median sampling interval (missed frames, and the dropped jumps);
- **the arena** -- positions a few cm outside the arena's walls (the tracked LED is above the
  head) are clipped onto the walls (a rectangle ``width x height`` inside the square box).

The accepted samples are then interpolated linearly onto the run's clock ``t_n = n dt`` from the
first sample, so gaps are crossed on straight lines at constant speed. :class:`TrackingReport`
counts every step.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from importlib import resources

import numpy as np

from _runkit import BadInput
from _runkit.checks import check_installed, check_memory
from _runkit.files import load_arrays

from ..agent import Box, Trajectory
from ..positions import load_positions, ratinabox_arrays

__all__ = ["RECORDED", "ARENAS", "TrackingReport", "clean_tracking", "resample_tracking",
           "recorded_trajectory", "read_tracking", "file_trajectory"]

#: RatInABox's sessions: name -> side of the square box holding the arena (m).
RECORDED = {"sargolini": 1.0, "tanni": 3.5}
#: RatInABox's sessions: name -> the arena's sides along x and y (m); Tanni's is rectangular.
ARENAS = {"sargolini": (1.0, 1.0), "tanni": (3.5, 2.5)}

#: an interval longer than this many median intervals is a gap
GAP_FACTOR = 1.5


@dataclass(frozen=True)
class TrackingReport:
    """What cleaning and resampling did to a tracked trajectory.

    Attributes
    ----------
    source : str
        ``"ratinabox:<name>"`` or the file's path.
    samples : int
        Tracked samples read.
    sampling_s : float
        Median interval between tracked samples (s).
    jumps : int
        Samples dropped as jumps (implied speed above ``max_speed``).
    relocks : int
        Times the jump filter accepted a sample again after ``relock`` s of drops.
    gaps : int
        Intervals between accepted samples longer than :data:`GAP_FACTOR` median intervals.
    longest_gap_s : float
        The longest such interval (s; 0 without gaps).
    gap_time_s : float
        Total time inside gaps (s), crossed by straight lines.
    clipped : int
        Accepted samples moved onto the box's walls.
    max_clip_m : float
        The largest such move (m).
    max_speed : float
        The jump filter's speed (m/s).
    dt : float
        The run's sampling interval (s).
    duration_s : float
        Duration of the resampled trajectory (s).
    arena_m : tuple of float
        The arena's sides ``(width, height)`` (m) the positions were clipped into.
    """

    source: str
    samples: int
    sampling_s: float
    jumps: int
    relocks: int
    gaps: int
    longest_gap_s: float
    gap_time_s: float
    clipped: int
    max_clip_m: float
    max_speed: float
    dt: float
    duration_s: float
    arena_m: tuple = ()

    def to_dict(self) -> dict:
        """The report as a JSON-ready dict."""
        return asdict(self)


def clean_tracking(t, position, max_speed: float = 2.0, relock: float = 1.0
                   ) -> tuple[np.ndarray, dict]:
    """Which tracked samples to keep: those reachable from the last kept one at ``max_speed``.

    Sample ``i`` is kept when ``|x_i - x_j| <= max_speed (t_i - t_j)`` for the last kept sample
    ``j``; the first sample is kept; after more than ``relock`` s of consecutive drops the next
    sample is kept whatever its distance (a relock).

    Parameters
    ----------
    t : array_like, shape (T,)
        Strictly increasing times (s).
    position : array_like, shape (T, 2)
        Finite positions (m).
    max_speed : float
        Largest believable speed (m/s), > 0.
    relock : float
        Seconds of consecutive drops after which the filter follows the tracker again, > 0.

    Returns
    -------
    keep : ndarray of bool, shape (T,)
    counts : dict
        ``jumps`` (dropped samples), ``relocks``, ``gaps``, ``longest_gap_s``, ``gap_time_s``
        (intervals between kept samples longer than :data:`GAP_FACTOR` median intervals of
        ``t``).

    Examples
    --------
    >>> t = np.arange(6) * 0.02
    >>> x = np.c_[t * 0.1, 0 * t]
    >>> x[2] = (0.5, 0.5)                      # one reflection 0.7 m away for one frame
    >>> keep, counts = clean_tracking(t, x, max_speed=2.0)
    >>> keep.tolist(), counts["jumps"], counts["gaps"], round(counts["longest_gap_s"], 3)
    ([True, True, False, True, True, True], 1, 1, 0.04)
    """
    t, pos = _checked_track(t, position)
    for name, v in (("max_speed", max_speed), ("relock", relock)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not \
                (math.isfinite(v) and v > 0):
            raise BadInput(f"{name}={v!r}: must be a finite number > 0", param=name)
    keep = np.zeros(t.size, dtype=bool)
    keep[0] = True
    tl, xl, yl = t.tolist(), pos[:, 0].tolist(), pos[:, 1].tolist()
    j, relocks = 0, 0
    for i in range(1, t.size):
        reach = max_speed * (tl[i] - tl[j])
        near = (xl[i] - xl[j]) ** 2 + (yl[i] - yl[j]) ** 2 <= reach * reach
        if near or tl[i - 1] - tl[j] > relock:
            relocks += not near
            keep[i], j = True, i
    step = np.diff(t[keep])
    gap = step > GAP_FACTOR * float(np.median(np.diff(t)))
    return keep, {"jumps": int((~keep).sum()), "relocks": int(relocks), "gaps": int(gap.sum()),
                  "longest_gap_s": float(step[gap].max()) if gap.any() else 0.0,
                  "gap_time_s": float(step[gap].sum())}


def _checked_track(t, position) -> tuple[np.ndarray, np.ndarray]:
    """``t`` (T,) and ``position`` (T, 2) as float arrays, ``BadInput`` unless finite, at
    least 2 samples and strictly increasing in time."""
    t = np.asarray(t, dtype=float)
    pos = np.asarray(position, dtype=float)
    if t.ndim != 1 or t.size < 2 or pos.shape != (t.size, 2):
        raise BadInput(f"tracking: t {t.shape} and position {pos.shape}; expected (T,) and "
                       "(T, 2) with T >= 2", param="tracking")
    if not (np.isfinite(t).all() and np.isfinite(pos).all()):
        raise BadInput("tracking: times and positions must be finite", param="tracking")
    if np.any(np.diff(t) <= 0):
        i = int(np.flatnonzero(np.diff(t) <= 0)[0])
        raise BadInput(f"tracking: times must be strictly increasing, got t[{i}]={t[i]} "
                       f"then t[{i + 1}]={t[i + 1]}", param="tracking")
    return t, pos


def resample_tracking(t, position, dt: float, box: Box, *, max_speed: float = 2.0,
                      relock: float = 1.0, duration: float | None = None,
                      source: str = "array", arena: tuple[float, float] | None = None
                      ) -> tuple[Trajectory, TrackingReport]:
    """A tracked trajectory cleaned (:func:`clean_tracking`), clipped into ``box`` and
    interpolated onto the clock ``n dt`` from its first sample.

    Parameters
    ----------
    t : array_like, shape (T,)
        Strictly increasing tracking times (s), any spacing.
    position : array_like, shape (T, 2)
        Tracked positions (m).
    dt : float
        The run's sampling interval (s), > 0.
    box : Box
        The square box holding the arena.
    max_speed, relock : float
        The jump filter's speed (m/s) and relock time (s).
    duration : float or None
        Keep the first ``duration`` s (default: all).
    source : str
        Where the tracking came from (recorded in the report).
    arena : tuple of float or None
        The arena's sides ``(width, height)`` (m, at most the box's side; default the box):
        accepted positions outside ``[0, width] x [0, height]`` are clipped onto its walls.

    Returns
    -------
    Trajectory
        ``steps = floor(duration / dt) + 1`` samples.
    TrackingReport

    Examples
    --------
    >>> t = np.array([0.0, 0.02, 0.04, 0.5, 0.52])   # a 0.46 s gap
    >>> x = np.c_[np.linspace(0.2, 0.3, 5), np.full(5, 0.5)]
    >>> tr, rep = resample_tracking(t, x, 0.01, Box(1.0))
    >>> tr.steps, rep.gaps, round(rep.longest_gap_s, 2), rep.jumps
    (53, 1, 0.46, 0)
    """
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not \
            (math.isfinite(dt) and dt > 0):
        raise BadInput(f"dt={dt!r}: must be a finite number > 0", param="dt")
    t, pos = _checked_track(t, position)
    sides = check_arena(arena, box)
    t = t - t[0]
    if duration is not None:
        if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
            raise BadInput(f"duration={duration!r}: must be a finite number > 0", param="duration")
        if duration > t[-1] + 1e-9:
            raise BadInput(f"duration={duration:g}: longer than the tracking ({t[-1]:g} s)",
                           param="duration")
        within = t <= duration + 1e-9
        t, pos = t[within], pos[within]
    keep, counts = clean_tracking(t, pos, max_speed, relock)
    tk = t[keep]
    clipped = np.clip(pos[keep], 0.0, np.asarray(sides))
    moved = np.linalg.norm(clipped - pos[keep], axis=1)
    end = t[-1] if duration is None else float(duration)
    steps = int(math.floor(end / dt + 1e-9)) + 1
    if steps < 2:
        raise BadInput(f"dt={dt:g}: the tracking ({end:g} s) is shorter than one sample",
                       param="dt")
    # the times the file declares, at dt: the grid, the positions and the trajectory's arrays
    check_memory(f"the tracking's {end:g} s at dt={dt:g} s", 8.0 * 10.0 * steps)
    grid = np.arange(steps) * dt
    resampled = np.stack([np.interp(grid, tk, clipped[:, k]) for k in range(2)], axis=1)
    traj = load_positions(resampled, dt, box)
    report = TrackingReport(
        source=source, samples=int(t.size), sampling_s=float(np.median(np.diff(t))),
        clipped=int((moved > 0).sum()), max_clip_m=float(moved.max()),
        max_speed=float(max_speed), dt=float(dt), duration_s=float(grid[-1]),
        arena_m=tuple(sides), **counts)
    return traj, report


def check_arena(arena, box: Box) -> tuple[float, float]:
    """The arena's sides ``(width, height)`` (m): ``arena`` checked to be two finite numbers in
    ``(0, box.size]`` (``BadInput`` naming it), or the box's when None.

    Examples
    --------
    >>> check_arena(None, Box(2.0)), check_arena((2.0, 1.5), Box(2.0))
    ((2.0, 2.0), (2.0, 1.5))
    """
    if arena is None:
        return (box.size, box.size)
    try:
        sides = tuple(float(x) for x in arena)
    except (TypeError, ValueError):
        sides = ()
    if len(sides) != 2 or not all(math.isfinite(x) and 0 < x <= box.size + 1e-12
                                  for x in sides):
        raise BadInput(f"arena={arena!r}: needs (width, height) in metres, each > 0 and at "
                       f"most the box's side {box.size:g}", param="arena")
    return sides


def recorded_trajectory(name: str, dt: float = 0.02, *, duration: float | None = None,
                        max_speed: float = 2.0, relock: float = 1.0
                        ) -> tuple[Trajectory, TrackingReport]:
    """RatInABox's ``name`` session on the run's clock, with its tracking report.

    Parameters
    ----------
    name : {'sargolini', 'tanni'}
        The session (:data:`RECORDED` gives its box).
    dt : float
        The run's sampling interval (s).
    duration : float or None
        Keep the first ``duration`` s (default: the whole session).
    max_speed, relock : float
        The jump filter (:func:`clean_tracking`).

    Returns
    -------
    Trajectory, TrackingReport

    Raises
    ------
    BadInput
        RatInABox is not installed (one line naming the extra ``data``), an unknown name or bad
        numbers.

    Examples
    --------
    >>> tr, rep = recorded_trajectory("sargolini", 0.02, duration=10.0)  # doctest: +SKIP
    >>> tr.steps, tr.box.size, rep.source                                # doctest: +SKIP
    (501, 1.0, 'ratinabox:sargolini')
    """
    if name not in RECORDED:
        raise BadInput(f"name={name!r}: choose one of {sorted(RECORDED)}", param="name")
    check_installed("ratinabox", "data", f"the recorded trajectory {name!r}")
    path = resources.files("ratinabox") / "data" / f"{name}.npz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the installed ratinabox does not ship {name}.npz")
    t, pos = ratinabox_arrays(str(path))
    return resample_tracking(t, pos, dt, Box(RECORDED[name]), max_speed=max_speed,
                             relock=relock, duration=duration, source=f"ratinabox:{name}",
                             arena=ARENAS[name])


def read_tracking(path) -> tuple[np.ndarray, np.ndarray]:
    r"""Tracking times and positions from a file: a ``.npz`` with ``t`` (s) and ``pos`` or
    ``position`` (m), or a ``.csv`` with columns ``t, x, y`` (a header naming them is optional;
    without one the first three columns are taken in that order).

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    t : ndarray, shape (T,)
    position : ndarray, shape (T, 2)

    Raises
    ------
    BadInput
        Another suffix, missing arrays or columns, text that is not numbers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "track.csv"
    >>> _ = f.write_text("t,x,y\n0,0.1,0.2\n0.03,0.11,0.2\n")
    >>> t, x = read_tracking(f)
    >>> t.tolist(), x.shape
    ([0.0, 0.03], (2, 2))
    """
    path = str(path)
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix == "npz":
        data = load_arrays(path, "tracking")  # BadInput: too large, damaged, not arrays
        data = data if isinstance(data, dict) else {}
        key = "pos" if "pos" in data else "position"
        if "t" not in data or key not in data:
            raise BadInput(f"{path}: a tracking .npz needs arrays 't' and 'pos' (or "
                           f"'position'), found {sorted(data)}")
        return np.asarray(data["t"], dtype=float), np.asarray(data[key], dtype=float)
    if suffix != "csv":
        raise BadInput(f"{path}: tracking must be a .npz (t, pos) or .csv (t, x, y) file")
    with open(path, encoding="utf-8") as fh:
        lines = [ln.strip() for ln in fh if ln.strip()]
    head = [c.strip().lower() for c in lines[0].split(",")] if lines else []
    named = bool(head) and not _numeric(head[0])
    cols = [head.index(c) for c in ("t", "x", "y")] if named and {"t", "x", "y"} <= set(head) \
        else [0, 1, 2]
    try:
        rows = np.array([[float(r.split(",")[c]) for c in cols]
                         for r in lines[int(named):]], dtype=float).reshape(-1, 3)
    except (ValueError, IndexError):
        raise BadInput(f"{path}: every row needs numbers in the columns t, x, y") from None
    return rows[:, 0], rows[:, 1:]


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def file_trajectory(path, dt: float | None, box: Box, *, arena=None, max_speed: float = 2.0,
                    relock: float = 1.0, duration: float | None = None
                    ) -> tuple[Trajectory, TrackingReport]:
    """A tracking file (:func:`read_tracking`) cleaned and resampled like RatInABox's sessions.

    Parameters
    ----------
    path : str or Path
        ``.npz`` (``t``, ``pos``) or ``.csv`` (``t, x, y``).
    dt : float or None
        The run's sampling interval (s); None: the file's median interval.
    box : Box
        The square box holding the arena.
    arena : tuple of float or None
        The arena's ``(width, height)`` (m; default the box).
    max_speed, relock : float
        The jump filter (:func:`clean_tracking`).
    duration : float or None
        Keep the first ``duration`` s.

    Returns
    -------
    Trajectory, TrackingReport
        The report's ``source`` is the path.
    """
    t, pos = read_tracking(path)
    t, pos = _checked_track(t, pos)
    step = float(np.median(np.diff(t))) if dt is None else dt
    return resample_tracking(t, pos, step, box, max_speed=max_speed, relock=relock,
                             duration=duration, source=str(path), arena=arena)
