r"""Agents in a square box and the map from physical motion to grid-lattice phases.

Units are metres and seconds throughout. The box is the square ``[0, size] x [0, size]``.

Trajectories
------------
:func:`generate_trajectory` produces rodent-like random exploration. Three processes drive it:

- forward speed: an Ornstein-Uhlenbeck (OU) variable ``z`` with unit stationary variance and time
  constant ``speed_timescale`` mapped through its Gaussian CDF onto a Rayleigh distribution of mean
  ``speed_mean``, ``v = sigma_v * sqrt(-2 log(1 - Phi(z)))`` with ``sigma_v = speed_mean /
  sqrt(pi/2)``. The speed is therefore always positive, temporally correlated and Rayleigh
  distributed (standard deviation ``sqrt((4 - pi) / pi) * speed_mean ~= 0.52 * speed_mean``);
- rotational velocity: an OU process ``omega`` with zero mean, standard deviation ``rotation_sd``
  (rad/s) and time constant ``rotation_timescale``; the heading integrates it;
- walls: within ``wall_distance`` of a wall and moving towards it, the heading turns away from the
  wall (towards the wall-parallel direction) at a rate ``wall_turn_rate * (1 - d / wall_distance)
  * cos(a)`` rad/s, where ``d`` is the distance to the wall and ``a`` the angle between heading and
  wall normal, and the velocity component towards the wall is scaled by ``d / wall_distance``, so
  the agent slows its approach and never crosses a wall while ``speed * dt < wall_distance``
  (a mirror reflection is the fallback beyond that).

The defaults follow the statistics fitted to open-field rat data (Sargolini et al. 2006) as used by
RatInABox (George et al. 2024): speed coherence time 0.7 s, rotational velocity s.d. 120 deg/s with
coherence time 0.08 s, wall distance 0.1 m; the mean speed default, 0.16 m/s, is that of a rat
foraging in a 1 m box.

Velocity convention: ``velocity[i] = (position[i + 1] - position[i]) / dt``, so that
``position[i] = position[0] + dt * sum_{j < i} velocity[j]`` exactly (up to rounding). For a
generated trajectory the last velocity is the one the agent actually took after the last sample;
for loaded positions the last velocity repeats the one before it.

Lattice phases
--------------
A grid module of spacing ``s`` and orientation ``theta`` has wave vectors

- ``hex``: ``|k| = 4 pi / (sqrt(3) s)``, ``k1`` at angle ``theta``, ``k2`` at ``theta + 60 deg``,
  and ``k3 = k1 - k2`` (same length, at ``theta - 60 deg``). The firing pattern is
  ``g(x) = cos(k1.x) + cos(k2.x) + cos((k1 - k2).x)``; its peaks form a triangular lattice with
  nearest-neighbour distance ``s`` whose nearest peaks lie at angles
  ``theta + 30 deg (mod 60 deg)``.
- ``square``: ``|k| = 2 pi / s``, ``k1`` at ``theta``, ``k2`` at ``theta + 90 deg``,
  ``g(x) = cos(k1.x) + cos(k2.x)``; peaks on a square lattice of side ``s`` at angles
  ``theta (mod 90 deg)``.

The two lattice phases are ``psi_a = k_a . x`` (``a = 1, 2``), i.e. ``psi = K x`` with
``K = [k1; k2]`` (2 x 2). Hence the phase velocity on the torus is

    dpsi/dt = K v = (k1 . v, k2 . v)    [rad/s],

and the inverse map ``dx = K^{-1} dpsi`` turns phase increments back into displacements in metres.
For the ``hex`` lattice the third phase is ``psi_1 - psi_2``, which matches the torus network's
fundamental DFT modes (1, 0), (0, 1), (1, -1).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from scipy.signal import lfilter
from scipy.special import log_ndtr

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "LATTICES",
    "Box",
    "Trajectory",
    "generate_trajectory",
    "load_positions",
    "check_positions",
    "wave_vectors",
    "position_to_phase",
    "phase_velocity",
    "phase_to_position_delta",
    "phase_track_to_positions",
    "grid_pattern",
    "plot_trajectory",
]

LATTICES: tuple[str, ...] = ("hex", "square")


# --------------------------------------------------------------------------------------------------
# validation helpers


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number > 0, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def _check_nonnegative(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number >= 0, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def _check_lattice(lattice: str) -> str:
    if lattice not in LATTICES:
        raise ValueError(f"lattice must be one of {list(LATTICES)}, got {lattice!r}")
    return lattice


def _as_rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


# --------------------------------------------------------------------------------------------------
# box and trajectory


@dataclass(frozen=True)
class Box:
    """A square open-field arena ``[0, size] x [0, size]`` (metres).

    Parameters
    ----------
    size : float
        Side length in metres, > 0.
    """

    size: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", _check_positive("size", self.size))

    def contains(self, positions: np.ndarray) -> np.ndarray:
        """Whether each position lies in the closed box.

        ``inside_i = (0 <= x_i <= size) and (0 <= y_i <= size)``

        Parameters
        ----------
        positions : array, shape (..., 2)
            Positions in metres.

        Returns
        -------
        inside : bool array, shape (...)
        """
        positions = np.asarray(positions, dtype=float)
        if positions.ndim < 1 or positions.shape[-1] != 2:
            raise ValueError(
                f"positions must have shape (..., 2), got shape {positions.shape}"
            )
        return np.all((positions >= 0.0) & (positions <= self.size), axis=-1)


@dataclass(frozen=True)
class Trajectory:
    """Positions and velocities of an agent sampled every ``dt`` seconds.

    ``velocity[i] = (position[i + 1] - position[i]) / dt`` (see the module docstring for the last
    sample).

    Attributes
    ----------
    t : array, shape (steps,)
        Sample times in seconds.
    position : array, shape (steps, 2)
        Positions in metres, inside ``box``.
    velocity : array, shape (steps, 2)
        Velocities in m/s.
    dt : float
        Sampling interval in seconds.
    box : Box
        The arena.
    """

    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    dt: float
    box: Box

    @property
    def steps(self) -> int:
        """Number of samples."""
        return int(self.position.shape[0])

    @property
    def speed(self) -> np.ndarray:
        """Speed ``|velocity|`` in m/s, shape (steps,)."""
        return np.linalg.norm(self.velocity, axis=-1)


def _ou(
    rng: np.random.Generator, steps: int, dt: float, timescale: float, sd: float
) -> np.ndarray:
    """Exact discretisation of a stationary OU process, shape (steps,).

    ``x_{n+1} = a x_n + sd * sqrt(1 - a^2) * xi_n``, ``a = exp(-dt / timescale)``,
    ``x_0 ~ N(0, sd^2)``.
    """
    a = math.exp(-dt / timescale)
    noise = rng.standard_normal(steps)
    x0 = sd * noise[0]
    drive = sd * math.sqrt(1.0 - a * a) * noise[1:]
    rest, _ = lfilter([1.0], [1.0, -a], drive, zi=[a * x0])
    return np.concatenate(([x0], rest))


def _rayleigh_from_gaussian(z: np.ndarray, mean: float) -> np.ndarray:
    """Map standard normal values onto a Rayleigh distribution of the given mean.

    ``v = sigma * sqrt(-2 log(1 - Phi(z)))``, ``sigma = mean / sqrt(pi / 2)``.
    """
    sigma = mean / math.sqrt(math.pi / 2.0)
    return sigma * np.sqrt(-2.0 * log_ndtr(-z))


def generate_trajectory(
    duration: float,
    dt: float = 0.02,
    box: Box | None = None,
    seed: int | np.random.Generator = 0,
    *,
    speed_mean: float = 0.16,
    speed_timescale: float = 0.7,
    rotation_sd: float = 2.0 * math.pi / 3.0,
    rotation_timescale: float = 0.08,
    wall_distance: float = 0.1,
    wall_turn_rate: float = 6.0,
    start: np.ndarray | None = None,
) -> Trajectory:
    """Random rodent-like exploration of a square box.

    Speed ``v_t = Rayleigh(OU_t)``, heading ``dh/dt = omega_t + wall turning``, ``omega`` an OU
    process, ``dx/dt = v_t (cos h_t, sin h_t)`` with the wall slow-down; see the module docstring.

    Parameters
    ----------
    duration : float
        Length in seconds, > 0; ``steps = round(duration / dt)`` must be >= 2.
    dt : float
        Sampling interval in seconds, > 0.
    box : Box, optional
        The arena (default ``Box(1.0)``).
    seed : int or numpy.random.Generator
        Source of all randomness.
    speed_mean : float
        Mean forward speed in m/s (Rayleigh distributed), > 0.
    speed_timescale : float
        Coherence time of the speed in seconds, > 0.
    rotation_sd : float
        Standard deviation of the rotational velocity in rad/s, >= 0.
    rotation_timescale : float
        Coherence time of the rotational velocity in seconds, > 0.
    wall_distance : float
        Distance from a wall (m) within which the agent turns away and slows down, > 0 and less
        than half the box size.
    wall_turn_rate : float
        Gain of the turn away from a wall in rad/s, >= 0.
    start : array, shape (2,), optional
        Initial position in metres; uniform in the box when omitted.

    Returns
    -------
    Trajectory
        ``t`` (steps,), ``position`` (steps, 2), ``velocity`` (steps, 2).

    Examples
    --------
    >>> traj = generate_trajectory(60.0, dt=0.02, seed=1)
    >>> traj.position.shape, bool(traj.box.contains(traj.position).all())
    ((3000, 2), True)
    """
    duration = _check_positive("duration", duration)
    dt = _check_positive("dt", dt)
    box = Box() if box is None else box
    if not isinstance(box, Box):
        raise TypeError(f"box must be a Box, got {box!r}")
    speed_mean = _check_positive("speed_mean", speed_mean)
    speed_timescale = _check_positive("speed_timescale", speed_timescale)
    rotation_sd = _check_nonnegative("rotation_sd", rotation_sd)
    rotation_timescale = _check_positive("rotation_timescale", rotation_timescale)
    wall_distance = _check_positive("wall_distance", wall_distance)
    if wall_distance >= box.size / 2:
        raise ValueError(
            f"wall_distance must be < box.size / 2 = {box.size / 2}, got {wall_distance}"
        )
    wall_turn_rate = _check_nonnegative("wall_turn_rate", wall_turn_rate)
    steps = int(round(duration / dt))
    if steps < 2:
        raise ValueError(
            f"duration / dt must give at least 2 steps, got duration={duration}, dt={dt}"
        )
    rng = _as_rng(seed)

    if start is None:
        start_xy = rng.uniform(0.0, box.size, size=2)
    else:
        start_xy = np.asarray(start, dtype=float)
        if start_xy.shape != (2,) or not np.all(np.isfinite(start_xy)):
            raise ValueError(f"start must be a finite array of shape (2,), got {start!r}")
        if not box.contains(start_xy):
            raise ValueError(
                f"start must lie inside the box [0, {box.size}]^2, got {start_xy.tolist()}"
            )
    heading0 = rng.uniform(-math.pi, math.pi)
    # one extra step so that the last velocity is the one actually taken
    speed = _rayleigh_from_gaussian(_ou(rng, steps, dt, speed_timescale, 1.0), speed_mean)
    omega = _ou(rng, steps, dt, rotation_timescale, rotation_sd)

    position = _integrate_walk(
        speed, omega, dt, box.size, start_xy, heading0, wall_distance, wall_turn_rate
    )
    velocity = np.diff(position, axis=0) / dt
    t = np.arange(steps) * dt
    return Trajectory(t=t, position=position[:-1], velocity=velocity, dt=dt, box=box)


def _integrate_walk(
    speed: np.ndarray,
    omega: np.ndarray,
    dt: float,
    size: float,
    start: np.ndarray,
    heading: float,
    wall_distance: float,
    wall_turn_rate: float,
) -> np.ndarray:
    """Integrate heading and position with wall avoidance; returns (steps + 1, 2) positions."""
    steps = speed.shape[0]
    out = np.empty((steps + 1, 2))
    x, y = float(start[0]), float(start[1])
    out[0] = (x, y)
    wd = wall_distance
    cos, sin = math.cos, math.sin
    speed_l = speed.tolist()
    omega_l = omega.tolist()
    for i in range(steps):
        turn = omega_l[i]
        # repulsion direction: proximity-weighted sum of the inward normals of the near walls
        rx = (1.0 - x / wd if x < wd else 0.0) - (1.0 - (size - x) / wd if size - x < wd else 0.0)
        ry = (1.0 - y / wd if y < wd else 0.0) - (1.0 - (size - y) / wd if size - y < wd else 0.0)
        proximity = math.hypot(rx, ry)
        if proximity > 0.0:
            hx, hy = cos(heading), sin(heading)
            approach = -(hx * rx + hy * ry) / proximity  # cos of angle to the walls
            if approach > 0.0:
                # rotate the heading away from the walls, towards the wall-parallel direction:
                # counter-clockwise when the heading lies counter-clockwise of -r
                cross = ry * hx - rx * hy
                side = 1.0 if cross > 0.0 else -1.0 if cross < 0.0 else math.copysign(1.0, turn)
                turn += side * wall_turn_rate * min(proximity, 1.0) * approach
        heading += turn * dt
        heading = (heading + math.pi) % (2.0 * math.pi) - math.pi
        vx, vy = speed_l[i] * cos(heading), speed_l[i] * sin(heading)
        # slow the approach: the component towards a near wall is scaled by d / wall_distance
        if x < wd and vx < 0.0:
            vx *= x / wd
        elif size - x < wd and vx > 0.0:
            vx *= (size - x) / wd
        if y < wd and vy < 0.0:
            vy *= y / wd
        elif size - y < wd and vy > 0.0:
            vy *= (size - y) / wd
        x += vx * dt
        y += vy * dt
        # fallback for steps longer than the wall distance: mirror reflection
        if x < 0.0 or x > size:
            x = -x if x < 0.0 else 2.0 * size - x
            heading = math.pi - heading
        if y < 0.0 or y > size:
            y = -y if y < 0.0 else 2.0 * size - y
            heading = -heading
        x = min(max(x, 0.0), size)
        y = min(max(y, 0.0), size)
        out[i + 1, 0] = x
        out[i + 1, 1] = y
    return out


def check_positions(position: np.ndarray, box: Box) -> None:
    """Raise ``ValueError`` unless every position ``(steps, 2)`` is finite and inside ``box``.

    The message names the first offending index and value (and how many lie outside).
    """
    bad = ~np.isfinite(position)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"positions must be finite, got {position[i, j]} at index [{i}, {j}]"
        )
    outside = ~box.contains(position)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"positions must lie inside the box [0, {box.size}] x [0, {box.size}] m, got "
            f"{position[i].tolist()} at index {i} ({int(outside.sum())} positions outside)"
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
        ``position`` (and optionally ``t``, used as ``times`` when ``times`` is not given).
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
    ValueError
        Wrong shape, fewer than 2 steps, non-finite values, a position outside the box, a
        non-positive ``dt``, non-monotone or non-uniform ``times``, an unsupported file type.
    """
    box = Box() if box is None else box
    if not isinstance(box, Box):
        raise TypeError(f"box must be a Box, got {box!r}")
    if isinstance(source, (str, os.PathLike)):
        position, file_times = _read_positions_file(source)
        if times is None:
            times = file_times
    else:
        position = np.asarray(source)
    if position.dtype.kind not in "iuf":
        raise TypeError(f"positions must be a real numeric array, got dtype {position.dtype}")
    position = np.array(position, dtype=float)
    if position.ndim != 2 or position.shape[1] != 2:
        raise ValueError(f"positions must have shape (steps, 2), got shape {position.shape}")
    steps = position.shape[0]
    if steps < 2:
        raise ValueError(f"positions must have at least 2 steps, got {steps}")
    check_positions(position, box)
    if dt is not None:
        dt = _check_positive("dt", dt)
    if times is not None:
        t = _check_times(times, steps, dt)
        dt = float(np.mean(np.diff(t))) if dt is None else dt
    elif dt is None:
        raise ValueError("dt must be given (a float > 0) when times is not given, got None")
    else:
        t = np.arange(steps) * dt
    velocity = np.empty_like(position)
    velocity[:-1] = np.diff(position, axis=0) / dt
    velocity[-1] = velocity[-2]
    return Trajectory(t=t, position=position, velocity=velocity, dt=dt, box=box)


def _read_positions_file(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray | None]:
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npy":
        return np.load(path, allow_pickle=False), None
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            if "position" not in data:
                raise ValueError(
                    f"source {path!r} must hold an array named 'position', has {sorted(data)}"
                )
            return data["position"], (data["t"] if "t" in data else None)
    raise ValueError(f"source must be a .npy or .npz file or an array, got {path!r}")


def _check_times(times: np.ndarray, steps: int, dt: float | None) -> np.ndarray:
    t = np.asarray(times, dtype=float)
    if t.shape != (steps,):
        raise ValueError(f"times must have shape ({steps},) like positions, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        i = int(np.flatnonzero(~np.isfinite(t))[0])
        raise ValueError(f"times must be finite, got {t[i]} at index {i}")
    step = np.diff(t)
    if np.any(step <= 0):
        i = int(np.flatnonzero(step <= 0)[0])
        raise ValueError(
            f"times must be strictly increasing, got times[{i}]={t[i]} then "
            f"times[{i + 1}]={t[i + 1]}"
        )
    mean = float(np.mean(step))
    if np.max(np.abs(step - mean)) > 1e-6 * mean:
        raise ValueError(
            f"times must be uniformly spaced (relative tolerance 1e-6), got spacings from "
            f"{step.min()} to {step.max()} s; resample the positions first"
        )
    if dt is not None and abs(mean - dt) > 1e-6 * dt:
        raise ValueError(f"dt must equal the spacing of times ({mean} s), got {dt}")
    return t


# --------------------------------------------------------------------------------------------------
# lattice phases


def wave_vectors(spacing: float, orientation: float = 0.0, lattice: str = "hex") -> np.ndarray:
    """Wave vectors of a grid module.

    ``hex``: ``|k| = 4 pi / (sqrt(3) s)``, angles ``theta, theta + 60 deg, theta - 60 deg``
    (the third is ``k1 - k2``). ``square``: ``|k| = 2 pi / s``, angles ``theta, theta + 90 deg``.

    Parameters
    ----------
    spacing : float
        Grid spacing ``s`` (nearest-neighbour peak distance) in metres, > 0.
    orientation : float
        Angle ``theta`` of ``k1`` in radians.
    lattice : {'hex', 'square'}

    Returns
    -------
    k : array, shape (3, 2) for 'hex' or (2, 2) for 'square'
        Rows are wave vectors in rad/m.
    """
    spacing = _check_positive("spacing", spacing)
    _check_lattice(lattice)
    if isinstance(orientation, bool) or not isinstance(orientation, Real):
        raise TypeError(f"orientation must be a real number (radians), got {orientation!r}")
    if not math.isfinite(orientation):
        raise ValueError(f"orientation must be finite, got {orientation!r}")
    if lattice == "hex":
        norm = 4.0 * math.pi / (math.sqrt(3.0) * spacing)
        angles = orientation + np.array([0.0, math.pi / 3.0])
        k = norm * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        return np.vstack([k, k[0] - k[1]])
    norm = 2.0 * math.pi / spacing
    angles = orientation + np.array([0.0, math.pi / 2.0])
    return norm * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _as_vectors(name: str, value: np.ndarray) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim < 1 or arr.shape[-1] != 2:
        raise ValueError(f"{name} must have shape (..., 2), got shape {arr.shape}")
    return arr


def position_to_phase(
    position: np.ndarray, spacing: float, orientation: float = 0.0, lattice: str = "hex"
) -> np.ndarray:
    """Lattice phases of positions, not wrapped.

    ``psi = (k1 . x, k2 . x)``

    Parameters
    ----------
    position : array, shape (..., 2)
        Positions in metres.
    spacing, orientation, lattice
        As in :func:`wave_vectors`.

    Returns
    -------
    phase : array, shape (..., 2)
        Phases in radians (reduce modulo 2 pi for the torus coordinate).
    """
    k = wave_vectors(spacing, orientation, lattice)[:2]
    return _as_vectors("position", position) @ k.T


def phase_velocity(
    velocity: np.ndarray, spacing: float, orientation: float = 0.0, lattice: str = "hex"
) -> np.ndarray:
    """Lattice phase velocity on the torus from physical velocity.

    ``dpsi/dt = (k1 . v, k2 . v)``

    Parameters
    ----------
    velocity : array, shape (..., 2)
        Velocities in m/s, e.g. ``Trajectory.velocity`` (steps, 2).
    spacing, orientation, lattice
        As in :func:`wave_vectors`.

    Returns
    -------
    phase_velocity : array, shape (..., 2)
        In rad/s.

    Examples
    --------
    >>> import numpy as np
    >>> w = phase_velocity(np.array([[0.1, 0.0]]), spacing=0.5)
    >>> bool(np.isclose(w[0, 0], 0.1 * 4 * np.pi / (np.sqrt(3) * 0.5)))
    True
    """
    k = wave_vectors(spacing, orientation, lattice)[:2]
    return _as_vectors("velocity", velocity) @ k.T


def phase_to_position_delta(
    dphase: np.ndarray, spacing: float, orientation: float = 0.0, lattice: str = "hex"
) -> np.ndarray:
    """Displacement in metres from a phase increment: the inverse of :func:`position_to_phase`.

    ``dx = K^{-1} dpsi``, ``K = [k1; k2]``

    Parameters
    ----------
    dphase : array, shape (..., 2)
        Phase increments (or phase velocities) in radians (rad/s). Increments decoded from a
        periodic phase must be wrapped into ``(-pi, pi]`` first.
    spacing, orientation, lattice
        As in :func:`wave_vectors`.

    Returns
    -------
    delta : array, shape (..., 2)
        Displacements in metres (or velocities in m/s).
    """
    k = wave_vectors(spacing, orientation, lattice)[:2]
    return _as_vectors("dphase", dphase) @ np.linalg.inv(k).T


def phase_track_to_positions(
    phases: np.ndarray,
    start: np.ndarray,
    spacing: float,
    orientation: float = 0.0,
    lattice: str = "hex",
) -> np.ndarray:
    """Unwrap a track of torus phases into positions by integrating phase increments.

    ``x_n = x_0 + sum_{m < n} K^{-1} wrap(psi_{m+1} - psi_m)``, ``wrap`` into ``[-pi, pi)``

    Valid while each phase increment is below pi in magnitude (``|k| * speed * dt < pi``).

    Parameters
    ----------
    phases : array, shape (steps, ..., 2)
        Phases in radians (any branch), e.g. decoded from a torus network.
    start : array, shape (..., 2)
        Known position at the first sample, metres.
    spacing, orientation, lattice
        As in :func:`wave_vectors`.

    Returns
    -------
    positions : array, shape (steps, ..., 2)
        In metres.
    """
    phases = _as_vectors("phases", phases)
    if phases.ndim < 2:
        raise ValueError(f"phases must have shape (steps, ..., 2), got shape {phases.shape}")
    start = _as_vectors("start", start)
    if start.shape != phases.shape[1:]:
        raise ValueError(
            f"start must have shape {phases.shape[1:]} (phases without the steps axis), "
            f"got shape {start.shape}"
        )
    dpsi = np.diff(phases, axis=0)
    dpsi = (dpsi + np.pi) % (2.0 * np.pi) - np.pi
    dx = phase_to_position_delta(dpsi, spacing, orientation, lattice)
    out = np.empty_like(phases)
    out[0] = start
    np.cumsum(dx, axis=0, out=out[1:])
    out[1:] += start
    return out


def grid_pattern(
    position: np.ndarray,
    spacing: float,
    orientation: float = 0.0,
    lattice: str = "hex",
    phase_offset: np.ndarray | tuple[float, float] = (0.0, 0.0),
) -> np.ndarray:
    """Ideal grid pattern at positions.

    ``hex``: ``g = cos(psi1 - c1) + cos(psi2 - c2) + cos(psi1 - psi2 - c1 + c2)`` in [-1.5, 3];
    ``square``: ``g = cos(psi1 - c1) + cos(psi2 - c2)`` in [-2, 2]; ``psi = K x``, ``c`` the offset.

    Parameters
    ----------
    position : array, shape (..., 2)
        Positions in metres.
    spacing, orientation, lattice
        As in :func:`wave_vectors`.
    phase_offset : array, shape (2,) or (cells, 2)
        Phase ``c`` of each cell's pattern in radians (its peak sits where ``psi = c``).

    Returns
    -------
    g : array, shape (...) or (..., cells) when ``phase_offset`` is (cells, 2)
    """
    psi = position_to_phase(position, spacing, orientation, lattice)
    c = np.asarray(phase_offset, dtype=float)
    if c.ndim not in (1, 2) or c.shape[-1] != 2:
        raise ValueError(f"phase_offset must have shape (2,) or (cells, 2), got shape {c.shape}")
    if c.ndim == 2:
        psi = psi[..., None, :]
    a = psi[..., 0] - c[..., 0]
    b = psi[..., 1] - c[..., 1]
    if lattice == "hex":
        return np.cos(a) + np.cos(b) + np.cos(a - b)
    return np.cos(a) + np.cos(b)


# --------------------------------------------------------------------------------------------------
# plotting


def plot_trajectory(
    trajectory: Trajectory,
    decoded: np.ndarray | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Plot a trajectory in its box, optionally with a decoded estimate of it.

    Parameters
    ----------
    trajectory : Trajectory
    decoded : array, shape (steps, 2), optional
        Estimated positions in metres, drawn dashed.
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is created when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``; the caller owns (and closes) it.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"trajectory must be a Trajectory, got {type(trajectory).__name__}")
    if ax is None:
        fig = Figure(figsize=(4.5, 4.5), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    size = trajectory.box.size
    ax.add_patch(Rectangle((0, 0), size, size, fill=False, edgecolor="k", linewidth=1.5))
    ax.plot(*trajectory.position.T, color="0.3", linewidth=0.6, label="true")
    if decoded is not None:
        decoded = np.asarray(decoded, dtype=float)
        if decoded.shape != trajectory.position.shape:
            raise ValueError(
                f"decoded must have shape {trajectory.position.shape} like the trajectory, "
                f"got shape {decoded.shape}"
            )
        ax.plot(*decoded.T, color="tab:red", linewidth=0.8, linestyle="--", label="decoded")
        ax.legend(loc="upper right", fontsize="small")
    ax.plot(*trajectory.position[0], marker="o", color="tab:green", markersize=5)
    pad = 0.03 * size
    ax.set_xlim(-pad, size + pad)
    ax.set_ylim(-pad, size + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return fig
