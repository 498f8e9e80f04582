r"""The Hopfield energy along an attractor manifold (flat) and across it (a valley).

:func:`energy_landscape` evaluates ``E`` on the tangent lines of the manifold and along
directions normal to it at ``u*(0)``; :class:`EnergyLandscape` holds the result and its
summary numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import check_positive
from _runkit.results import Result

from .._util import check_int, require_manifold, to_numpy
from ..network import HopfieldNetwork

__all__ = ["EnergyLandscape", "energy_landscape"]


@dataclass(frozen=True)
class EnergyLandscape(Result):
    """Hopfield energy along the manifold and across it, relative to ``E(u*(0))``.

    Attributes
    ----------
    psi : ndarray ``(P,)``, manifold coordinate along each tangent line (rad).
    tangent_names : names of the tangent lines (``"psi"``; or ``"psi1"``, ``"psi2"``,
        ``"psi1 = psi2"`` on a torus).
    tangent : ndarray ``(L, P)``, ``E(u*(psi e_l)) - E(u*(0))`` along line ``l`` with unit
        direction ``e_l`` in phase coordinates.
    s : ndarray ``(S,)``, signed relative distance along the normal directions (contains 0).
    normal_names : names of the normal directions.
    normal : ndarray ``(D, S)``, ``E(u*(0) + s ||u*|| n_d) - E(u*(0))`` for unit normals
        ``n_d`` orthogonal to the tangent space at ``psi = 0``.
    """

    psi: np.ndarray
    tangent_names: tuple[str, ...]
    tangent: np.ndarray
    s: np.ndarray
    normal_names: tuple[str, ...]
    normal: np.ndarray

    @property
    def tangent_range(self) -> float:
        """``max - min`` of the energy over all tangent lines."""
        return float(self.tangent.max() - self.tangent.min())

    def valleys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The valley around ``s = 0`` along each normal direction.

        Walking outwards from ``s = 0`` on each side while the energy keeps increasing gives the
        valley's edges (the first local maximum on that side, or the end of the grid).

        Returns
        -------
        local_min : bool ``(D,)``, ``E(s_{-1}) > E(0) < E(s_1)`` (the grid neighbours of 0).
        halfwidth : ``(D,)``, ``min(|s|)`` of the two edges.
        depth : ``(D,)``, the lower of the two edge energies (relative to ``E(0)``).
        """
        c = len(self.s) // 2
        local, width, depth = [], [], []
        for e in self.normal:
            right = c
            while right + 1 < len(e) and e[right + 1] > e[right]:
                right += 1
            left = c
            while left > 0 and e[left - 1] > e[left]:
                left -= 1
            local.append(bool(e[c + 1] > e[c] and e[c - 1] > e[c]))
            width.append(min(abs(self.s[right]), abs(self.s[left])))
            depth.append(min(e[right], e[left]))
        return np.array(local), np.array(width), np.array(depth)

    @property
    def normal_depth(self) -> float:
        """Depth of the shallowest valley over the normal directions (see :meth:`valleys`)."""
        return float(self.valleys()[2].min())

    @property
    def tangent_relative(self) -> float:
        """Tangent variation relative to the normal depth, ``tangent_range / |normal_depth|``."""
        depth = abs(self.normal_depth)
        return self.tangent_range / depth if depth > 0 else math.inf

    def argmin_s(self) -> np.ndarray:
        """Position ``s`` of the lowest energy on the grid along each normal direction, ``(D,)``."""
        return self.s[np.argmin(self.normal, axis=1)]

    def metrics(self) -> dict:
        """JSON-ready numbers: flatness, valley depth and width, where the minima are.

        ``normal_local_min``: ``s = 0`` is a local minimum along every normal direction;
        ``normal_min_at_zero``: it is also the lowest point of the whole grid ``|s| <= s_max``.
        """
        local, width, depth = self.valleys()
        return {"tangent_range": self.tangent_range, "normal_depth": self.normal_depth,
                "tangent_relative": self.tangent_relative,
                "normal_local_min": bool(local.all()),
                "normal_min_at_zero": bool(np.all(self.argmin_s() == 0.0)),
                "normal_argmin_s": [float(x) for x in self.argmin_s()],
                "valley_halfwidth": [float(x) for x in width],
                "valley_depth": [float(x) for x in depth],
                "s_max": float(self.s.max()), "normal_directions": list(self.normal_names)}


def energy_landscape(network: HopfieldNetwork, points: int = 128, s_max: float = 0.3,
                     steps: int = 41, directions: int = 3, seed: int = 0) -> EnergyLandscape:
    """Energy along the manifold's tangent lines and along normal directions at ``u*(0)``.

    Tangent: ``E(u*(psi))`` for ``psi`` on an even grid of ``[0, 2 pi)`` along each phase axis
    (and the diagonal of a torus). A continuous attractor makes it flat: exactly for shifts by
    whole neurons, and up to the aliasing of ``phi(u*)``'s harmonics beyond the grid's Nyquist
    mode for shifts in between (relative to the normal depth: ~1e-14 on a 64-neuron ring or a
    32 x 32 sheet, ~1e-6 on a 16 x 16 sheet).

    Normal: ``E(u*(0) + s ||u*|| n)`` for ``s`` in ``[-s_max, s_max]`` and unit directions ``n``
    orthogonal to the tangent space ``span{d u*/d psi_a}`` at ``psi = 0``: the bump's amplitude
    ``u* - mean(u*)``, a uniform offset, and ``directions`` random smooth directions (low Fourier
    modes with random coefficients, seeded). At a stable fixed point the energy has a valley
    there with its minimum at ``s = 0``: with ``D = diag phi'(u*)`` the Hessian of ``E(phi(u))``
    is ``D (H_F + D^{-1}) D``, which is positive on the normal space exactly when the Jacobian
    ``-(I + H_F D)/tau`` is stable there.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    points : int
        Grid points along each tangent line (>= 2).
    s_max : float
        Largest relative distance along the normals (> 0).
    steps : int
        Grid points in ``s``; made odd so that ``s = 0`` is on the grid (>= 3).
    directions : int
        Number of random smooth normal directions (>= 0).
    seed : int
        Seeds the random directions.

    Returns
    -------
    EnergyLandscape

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> land = energy_landscape(fit(FitConfig(n=32, steps=0)).network, points=16, directions=1)
    >>> land.tangent.shape, land.normal.shape, bool(land.tangent_relative < 1e-6)
    ((1, 16), (3, 41), True)
    """
    m = require_manifold(network)
    points, steps, directions, s_max = _checked_grid(points, steps, directions, s_max)
    g = network.geometry
    psi = torch.arange(points, dtype=torch.float64) * (2 * math.pi / points)
    lines, names = _tangent_lines(g.dim)
    zero = torch.zeros(g.dim, dtype=torch.float64)
    with torch.no_grad():
        e0 = network.energy(m.u_star(zero))
        tangent = torch.stack([network.energy(m.u_star(psi[:, None] * e[None, :])) - e0
                               for e in lines])
        normals, nnames = _normal_directions(m, directions, seed)
        s, normal = _normal_profiles(network, m, normals, s_max, steps, e0)
    return EnergyLandscape(to_numpy(psi), names, to_numpy(tangent), to_numpy(s), nnames,
                           to_numpy(normal))


def _checked_grid(points: int, steps: int, directions: int, s_max: float
                  ) -> tuple[int, int, int, float]:
    """The checked grid sizes (``steps`` made odd) and ``s_max`` (``BadInput`` otherwise)."""
    points = check_int(points, "points", 2)
    steps = check_int(steps, "steps", 3)
    directions = check_int(directions, "directions", 0)
    s_max = check_positive("s_max", s_max)
    return points, steps + 1 - steps % 2, directions, s_max


def _tangent_lines(dim: int) -> tuple[list[torch.Tensor], tuple[str, ...]]:
    """Directions in phase of the tangent lines (a ring's one, a torus's two axes and diagonal)
    and their names."""
    if dim == 1:
        return [torch.tensor([1.0])], ("ψ",)
    return ([torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0])],
            ("ψ1", "ψ2", "ψ1 = ψ2"))


def _normal_profiles(network: HopfieldNetwork, m, normals: torch.Tensor, s_max: float,
                     steps: int, e0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The relative distances ``s`` ``(steps,)`` (0 exactly in the middle) and the energy
    change along each normal direction at ``u*(0)``, ``(directions, steps)``."""
    g = network.geometry
    zero = torch.zeros(g.dim, dtype=torch.float64)
    s = torch.linspace(-s_max, s_max, steps, dtype=torch.float64)
    s[steps // 2] = 0.0
    u0 = m.u_star(zero)
    states = u0 + s.reshape((1, steps) + (1,) * g.dim) * m.norm * normals[:, None]
    return s, network.energy(states) - e0


def _normal_directions(m, count: int, seed: int) -> tuple[torch.Tensor, tuple[str, ...]]:
    """Unit directions ``(D, *shape)`` orthogonal to the tangent space at ``psi = 0``."""
    g = m.geometry
    zero = torch.zeros(g.dim, dtype=torch.float64)
    u0 = m.u_star(zero)
    tang = m.tangents(zero).reshape(g.size, g.dim)
    q, _ = torch.linalg.qr(tang)
    cands = [u0 - u0.mean(), torch.ones(g.shape, dtype=torch.float64)]
    names = ["amplitude", "offset"]
    gen = torch.Generator().manual_seed(seed)
    k = g.wavevectors()
    low = (k.abs().amax(0) <= 3) & (k.abs().sum(0) > 0)  # smooth: fundamental to third modes
    for i in range(count):
        z = torch.complex(torch.randn(g.spectral_shape, generator=gen, dtype=torch.float64),
                          torch.randn(g.spectral_shape, generator=gen, dtype=torch.float64))
        cands.append(g.idft(z * low))
        names.append(f"random {i + 1}")
    out = []
    for c in cands:
        v = c.reshape(-1)
        v = v - q @ (q.T @ v)
        out.append((v / v.norm()).reshape(g.shape))
    return torch.stack(out), tuple(names)
