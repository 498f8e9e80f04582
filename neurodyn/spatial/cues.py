r"""Sensory cues: a landmark input that pulls the bump towards a cue location on the manifold.

A landmark seen at a known place tells the network where it should be: for head direction the
heading implied by the landmark's bearing, for grid cells the lattice phase of a recognised place
(a boundary or landmark encounter). The cue is an input current shaped like the bump,

.. math:: I_j(t) = A\, s(t)\, q(\theta_j - \phi(t)), \qquad
          q = \frac{u^*(0) - \overline{u^*(0)}}{\max u^*(0) - \overline{u^*(0)}}

(peak 1 at the cue location ``phi``; for a cosine bump ``q = cos``), with strength ``A`` (units
of ``u``), an on/off schedule ``s(t)`` and a cue location that may follow a track (the true
heading) and be rotated from a time on (cue conflict).

Projected on the manifold (left null vectors ``l_a = phi'(u*) t_a``) a cue near the bump pulls
the phase linearly, ``dpsi/dt = -k (psi - phi)`` with the pull rate

.. math:: k = \frac{1}{\tau} M^{-1} L\, \frac{\partial I}{\partial \phi}, \qquad
          M_{ab} = l_a \cdot t_b

(:func:`pull_rate`; ``k = A / (c tau)`` for a cosine bump of height ``c``). With noise of
diffusion ``D`` the anchored error is an Ornstein-Uhlenbeck process of stationary variance
``D / k`` per axis; without the cue it grows like ``sqrt(2 D t)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import BadInput

from ..network import HopfieldNetwork

__all__ = ["Landmark", "cue_profile", "cue_current", "pull_rate"]


@dataclass(frozen=True)
class Landmark:
    """A landmark cue: strength, schedule, and an optional rotation (cue conflict).

    Attributes
    ----------
    strength : peak input current ``A`` (units of ``u``), >= 0.
    windows : ``((start, stop), ...)`` times at which the cue is on (network time units);
        ``None``: always on.
    rotation : angle(s) added to the cue location from ``rotate_at`` on (radians, one per
        manifold axis or one for all).
    rotate_at : time of the rotation (``None``: never rotated).
    """

    strength: float
    windows: tuple[tuple[float, float], ...] | None = None
    rotation: float | tuple[float, ...] = 0.0
    rotate_at: float | None = None

    def __post_init__(self):
        a = self.strength
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) \
                or a < 0:
            raise BadInput(f"strength={a!r}: must be a finite number >= 0", param="strength")
        if self.windows is not None:
            for w in self.windows:
                if len(w) != 2 or not (math.isfinite(w[0]) and math.isfinite(w[1])) \
                        or w[1] <= w[0]:
                    raise BadInput(f"windows: {w!r} must be (start, stop) with stop > start",
                                   param="windows")
        if self.rotate_at is not None and not math.isfinite(self.rotate_at):
            raise BadInput(f"rotate_at={self.rotate_at!r}: must be finite or None",
                           param="rotate_at")

    def on(self, t: float) -> bool:
        """Whether the cue is on at time ``t``."""
        if self.windows is None:
            return True
        return any(a <= t < b for a, b in self.windows)

    def offset(self, t: float, dim: int) -> np.ndarray:
        """Rotation in effect at time ``t``: ``(dim,)``."""
        rot = np.broadcast_to(np.asarray(self.rotation, dtype=float), (dim,))
        if self.rotate_at is None or t < self.rotate_at:
            return np.zeros(dim)
        return rot.copy()


def cue_profile(network: HopfieldNetwork) -> torch.Tensor:
    """The cue shape ``q`` centred at phase 0: the bump's profile scaled to peak 1, mean 0.

    Returns
    -------
    Tensor of shape ``geometry.shape``.
    """
    if network.manifold is None:
        raise BadInput("network: a cue needs the network's target manifold (its bump)",
                       param="network")
    u0 = network.manifold.u0
    centred = u0 - u0.mean()
    return centred / centred.max()


def cue_current(network: HopfieldNetwork, landmark: Landmark, phase, dt: float
                ) -> Callable[[float], torch.Tensor]:
    """The input current of a landmark as a function of time, for :func:`simulate`.

    .. math:: I(t) = A\\, s(t)\\, q(\\theta - \\phi(t) - \\mathrm{rotation}(t))

    Parameters
    ----------
    network : HopfieldNetwork
        The network (its geometry and bump).
    landmark : Landmark
        Strength, schedule and rotation.
    phase : array_like, shape (dim,) or (steps, B, dim) or (steps, B)
        The cue location: constant, or a track (``(steps, B)`` on a ring) sampled every ``dt``
        from time 0 (held between samples).
    dt : float
        Sampling interval of the track.

    Returns
    -------
    callable ``current(t) -> (B or 1, *shape)``.
    """
    g = network.geometry
    q = cue_profile(network)
    track = np.asarray(phase, dtype=float)
    if track.ndim <= 1:
        track = np.broadcast_to(track.reshape(1, 1, -1), (1, 1, g.dim))
    elif track.ndim == 2 and g.dim == 1:
        track = track[..., None]
    if track.ndim != 3 or track.shape[-1] != g.dim:
        raise BadInput(f"phase: shape {np.shape(phase)}; expected (dim,), (steps, B) on a "
                       f"ring or (steps, B, {g.dim})", param="phase")
    if not np.all(np.isfinite(track)):
        raise BadInput("phase: non-finite cue locations", param="phase")
    steps = track.shape[0]
    zero = torch.zeros((1,) + g.shape, dtype=torch.float64)
    amp = float(landmark.strength)

    def current(t: float) -> torch.Tensor:
        if amp == 0 or not landmark.on(t):
            return zero
        i = min(max(int(math.floor(t / dt + 1e-9)), 0), steps - 1)
        phi = track[i] + landmark.offset(t, g.dim)
        return amp * g.shift(q, torch.as_tensor(phi, dtype=torch.float64))

    return current


def pull_rate(network: HopfieldNetwork, strength: float) -> np.ndarray:
    """Linear pull of a landmark on the bump phase: ``dpsi/dt = -k (psi - phi)``.

    .. math:: k = \\frac{1}{\\tau} M^{-1} L \\frac{\\partial I}{\\partial \\phi}\\Big|_{\\phi=0},
              \\qquad l_a = \\phi'(u^*) t_a, \\quad M_{ab} = l_a \\cdot t_b

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    strength : float
        Cue strength ``A``.

    Returns
    -------
    array ``(dim, dim)`` (per time unit; ``A / (c tau)`` on a cosine ring of bump height ``c``).

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(geometry="ring", n=64, steps=1)).network  # the bump sets k
    >>> round(float(pull_rate(net, 0.4)[0, 0]), 4)  # A / c with c = 4
    0.1
    """
    g = network.geometry
    m = network.manifold
    if m is None:
        raise BadInput("network: has no target manifold", param="network")
    psi = torch.zeros(g.dim, dtype=torch.float64)
    q = cue_profile(network)
    with torch.no_grad():
        u = m.u_star(psi).reshape(-1)
        tang = torch.stack([m.tangent(psi, a).reshape(-1) for a in range(g.dim)])
        left = network.activation.derivative(u) * tang
        # d I / d phi_b = -strength * d q / d theta_b
        dcur = torch.stack([-strength * g.derivative(q, b).reshape(-1) for b in range(g.dim)])
        mm = (left @ tang.T).numpy()
        proj = (left @ dcur.T).numpy()
    return np.linalg.solve(mm, proj) / network.tau
