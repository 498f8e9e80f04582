r"""Lattice phases of a grid module: wave vectors, phases of positions, phase velocities.

See :mod:`neurodyn.spatial.agent` for the conventions: ``psi = K x`` with ``K = [k1; k2]``, hex
``|k| = 4 pi / (sqrt(3) s)``, square ``|k| = 2 pi / s``.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from _runkit import BadInput, BadType, check_positive

from .agent import _check_lattice

__all__ = ["wave_vectors", "position_to_phase", "phase_velocity", "phase_to_position_delta",
           "phase_track_to_positions", "grid_pattern"]


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
    spacing = check_positive("spacing", spacing)
    _check_lattice(lattice)
    if isinstance(orientation, bool) or not isinstance(orientation, Real):
        raise BadType(f"orientation must be a real number (radians), got {orientation!r}",
                      param="orientation")
    if not math.isfinite(orientation):
        raise BadInput(f"orientation must be finite, got {orientation!r}", param="orientation")
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
        raise BadInput(f"{name} must have shape (..., 2), got shape {arr.shape}", param=name)
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
    spacing, orientation : float
        As in :func:`wave_vectors`.
    lattice : str
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
    spacing, orientation : float
        As in :func:`wave_vectors`.
    lattice : str
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
    spacing, orientation : float
        As in :func:`wave_vectors`.
    lattice : str
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
    spacing, orientation : float
        As in :func:`wave_vectors`.
    lattice : str
        As in :func:`wave_vectors`.

    Returns
    -------
    positions : array, shape (steps, ..., 2)
        In metres.
    """
    phases = _as_vectors("phases", phases)
    if phases.ndim < 2:
        raise BadInput(f"phases must have shape (steps, ..., 2), got shape {phases.shape}",
                       param="phases")
    start = _as_vectors("start", start)
    if start.shape != phases.shape[1:]:
        raise BadInput(
            f"start must have shape {phases.shape[1:]} (phases without the steps axis), "
            f"got shape {start.shape}", param="start"
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
    spacing, orientation : float
        As in :func:`wave_vectors`.
    lattice : str
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
        raise BadInput(f"phase_offset must have shape (2,) or (cells, 2), got shape {c.shape}",
                       param="phase_offset")
    if c.ndim == 2:
        psi = psi[..., None, :]
    a = psi[..., 0] - c[..., 0]
    b = psi[..., 1] - c[..., 1]
    if lattice == "hex":
        return np.cos(a) + np.cos(b) + np.cos(a - b)
    return np.cos(a) + np.cos(b)
