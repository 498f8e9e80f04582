"""Perturbations of manifold states, for restoration experiments and for learning.

Each kind builds a direction ``d`` at a manifold point ``u*(psi)``; the perturbed state is

.. math:: u = u^*(\\psi) + s \\|u^*\\| \\frac{d}{\\|d\\|}

so that ``s`` (``strength``) is the relative size of the perturbation. ``noise`` and ``shape``
directions have their tangent component removed, so their initial relative distance to the
manifold is close to ``s``.

Kinds: ``none``, ``noise`` (white Gaussian), ``shape`` (random band-limited change of the bump's
shape), ``amplitude`` (bump height up or down), ``lesion`` (a random 20% of neurons silenced).
"""

from __future__ import annotations

import math

import torch

from _runkit import BadInput
from _runkit.seeds import check_seed

from ..manifold import TargetManifold, oblique_projection

__all__ = ["PERTURBATIONS", "perturb", "perturbation_direction", "perturbed_states",
           "random_strengths"]

PERTURBATIONS = ("none", "noise", "shape", "amplitude", "lesion")


def perturbation_direction(manifold: TargetManifold, psi: torch.Tensor, kind: str,
                           generator: torch.Generator, bandwidth: int = 4,
                           lesion_fraction: float = 0.2) -> torch.Tensor:
    """Unnormalised perturbation directions at ``u*(psi)``.

    Parameters
    ----------
    manifold : TargetManifold
        The target manifold.
    psi : torch.Tensor, shape (B, dim)
        Manifold coordinates.
    kind : str
        One of :data:`PERTURBATIONS` other than ``none``.
    generator : torch.Generator
        Source of randomness.
    bandwidth : int
        Highest wave number of a ``shape`` perturbation.
    lesion_fraction : float
        Fraction of neurons silenced by ``lesion``.

    Returns
    -------
    Tensor ``(B, *shape)``.
    """
    g = manifold.geometry
    us = manifold.u_star(psi)
    batch = us.shape[0]
    dt = us.dtype
    if kind == "noise":
        d = torch.randn(us.shape, generator=generator, dtype=dt)
    elif kind == "shape":
        k = g.wavevectors()
        band = (k.abs().amax(0) <= bandwidth) & (k.abs().amax(0) >= 1)
        spec = torch.complex(torch.randn((batch,) + g.spectral_shape, generator=generator,
                                         dtype=dt),
                             torch.randn((batch,) + g.spectral_shape, generator=generator,
                                         dtype=dt))
        d = g.idft(spec * band)
    elif kind == "amplitude":
        sign = torch.where(torch.rand(batch, generator=generator) < 0.5, -1.0, 1.0).to(dt)
        centred = us - us.flatten(1).mean(-1).reshape((batch,) + (1,) * g.dim)
        d = sign.reshape((batch,) + (1,) * g.dim) * centred
    elif kind == "lesion":
        if not 0 < lesion_fraction < 1:
            raise BadInput(f"lesion_fraction={lesion_fraction}: must be in (0, 1)",
                           param="lesion_fraction")
        count = max(1, round(lesion_fraction * g.size))
        scores = torch.rand((batch, g.size), generator=generator)
        idx = scores.argsort(dim=-1)[:, :count]
        mask = torch.zeros((batch, g.size), dtype=dt).scatter_(1, idx, 1.0).reshape(us.shape)
        low = us.flatten(1).min(-1).values.reshape((batch,) + (1,) * g.dim)
        d = -mask * (us - low + 1.0)
    else:
        raise BadInput(f"kind={kind!r}: unknown perturbation; choose one of {PERTURBATIONS}",
                       param="kind")
    if kind in ("noise", "shape"):
        t = manifold.tangents(psi).flatten(1, -2)  # (B, N, dim)
        d = oblique_projection(d.flatten(1), t, t).reshape(d.shape)
    return d


def perturb(manifold: TargetManifold, psi: torch.Tensor, kind: str, strength, generator,
            **kwargs) -> torch.Tensor:
    """Perturbed potentials ``u*(psi) + s ||u*|| d / ||d||``.

    Parameters
    ----------
    manifold : TargetManifold
        The target manifold.
    psi : torch.Tensor, shape (B, dim)
        Manifold coordinates.
    kind : str
        One of :data:`PERTURBATIONS`.
    strength : float or torch.Tensor, shape (B,)
        Relative size ``s``; must be finite and >= 0.
    generator : torch.Generator
        Source of randomness.
    **kwargs : dict
        Forwarded to :func:`perturbation_direction`.

    Returns
    -------
    Tensor ``(B, *shape)``.
    """
    psi = torch.as_tensor(psi, dtype=torch.float64)
    s = torch.as_tensor(strength, dtype=torch.float64)
    if not torch.isfinite(s).all() or (s < 0).any():
        raise BadInput(f"strength={strength!r}: must be finite and >= 0", param="strength")
    us = manifold.u_star(psi)
    if kind == "none":
        return us
    d = perturbation_direction(manifold, psi, kind, generator, **kwargs)
    g = manifold.geometry
    norm = d.flatten(1).norm(dim=-1).clamp(min=1e-300)
    scale = (s * manifold.norm / norm).reshape((-1,) + (1,) * g.dim)
    return us + scale * d


def random_strengths(count: int, low: float, high: float, generator) -> torch.Tensor:
    """``count`` strengths uniform in ``[low, high]``."""
    if not 0 <= low <= high or not math.isfinite(high):
        raise BadInput(f"strength range ({low}, {high}): need 0 <= low <= high < inf")
    return low + (high - low) * torch.rand(count, generator=generator, dtype=torch.float64)


def perturbed_states(manifold: TargetManifold, count: int, kind: str = "noise",
                     strength: float = 0.3, strength_max: float | None = None,
                     seed: int = 0) -> torch.Tensor:
    """``count`` perturbed states at random manifold points (seeded).

    The manifold points are uniform; the strength is ``strength``, or uniform in
    ``[strength, strength_max]`` when ``strength_max`` is given.

    Parameters
    ----------
    manifold : TargetManifold
        The target manifold.
    count : int
        Number of states, >= 1.
    kind : str
        One of :data:`PERTURBATIONS`.
    strength, strength_max : float
        Relative perturbation size (or the range it is drawn from).
    seed : int
        Seed of the draw.

    Returns
    -------
    Tensor, shape (count, *population_shape)
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(f"count={count!r}: must be an integer >= 1", param="count")
    g = manifold.geometry
    gen = torch.Generator().manual_seed(check_seed("seed", seed))
    psi = g.random_phase(count, gen)
    s = torch.full((count,), float(strength), dtype=torch.float64)
    if strength_max is not None:
        s = random_strengths(count, strength, strength_max, gen)
    return perturb(manifold, psi, kind, s, gen)
