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
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.signal import lfilter
from scipy.special import log_ndtr

from _runkit import BadInput, BadType, check_positive
from _runkit.results import Result
from _runkit.seeds import check_seed

__all__ = ["LATTICES", "Box", "Trajectory", "generate_trajectory"]

LATTICES: tuple[str, ...] = ("hex", "square")


# --------------------------------------------------------------------------------------------------
# validation helpers


def _check_nonnegative(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise BadType(f"{name} must be a real number >= 0, got {value!r}", param=name)
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise BadInput(f"{name} must be a finite number >= 0, got {value!r}", param=name)
    return value


def _check_lattice(lattice: str) -> str:
    if lattice not in LATTICES:
        raise BadInput(f"lattice must be one of {list(LATTICES)}, got {lattice!r}", param="lattice")
    return lattice


def _as_rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise BadType(f"seed must be an int or a numpy.random.Generator, got {seed!r}",
                      param="seed")
    return np.random.default_rng(check_seed("seed", seed))


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
        object.__setattr__(self, "size", check_positive("size", self.size))

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
            raise BadInput(
                f"positions must have shape (..., 2), got shape {positions.shape}",
                param="positions"
            )
        return np.all((positions >= 0.0) & (positions <= self.size), axis=-1)


@dataclass(frozen=True)
class Trajectory(Result):
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
    duration = check_positive("duration", duration)
    dt = check_positive("dt", dt)
    box = Box() if box is None else box
    if not isinstance(box, Box):
        raise BadType(f"box must be a Box, got {box!r}", param="box")
    speed_mean = check_positive("speed_mean", speed_mean)
    speed_timescale = check_positive("speed_timescale", speed_timescale)
    rotation_sd = _check_nonnegative("rotation_sd", rotation_sd)
    rotation_timescale = check_positive("rotation_timescale", rotation_timescale)
    wall_distance = check_positive("wall_distance", wall_distance)
    if wall_distance >= box.size / 2:
        raise BadInput(
            f"wall_distance must be < box.size / 2 = {box.size / 2}, got {wall_distance}",
            param="wall_distance"
        )
    wall_turn_rate = _check_nonnegative("wall_turn_rate", wall_turn_rate)
    steps = int(round(duration / dt))
    if steps < 2:
        raise BadInput(
            f"duration / dt must give at least 2 steps, got duration={duration}, dt={dt}"
        )
    rng = _as_rng(seed)
    start_xy = _start_position(start, box, rng)
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


def _start_position(start, box: Box, rng: np.random.Generator) -> np.ndarray:
    """The start ``(2,)``: drawn uniformly in ``box`` from ``rng`` when ``start`` is None, else
    ``start`` checked to be finite and inside the box (``BadInput``)."""
    if start is None:
        return rng.uniform(0.0, box.size, size=2)
    start_xy = np.asarray(start, dtype=float)
    if start_xy.shape != (2,) or not np.all(np.isfinite(start_xy)):
        raise BadInput(f"start must be a finite array of shape (2,), got {start!r}", param="start")
    if not box.contains(start_xy):
        raise BadInput(
            f"start must lie inside the box [0, {box.size}]^2, got {start_xy.tolist()}",
            param="start"
        )
    return start_xy


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
