r"""Heterogeneous networks: random per-neuron gains and thresholds, a random interaction term.

Real populations are not translation invariant. :func:`heterogeneous` returns a copy of a
network with, seeded and named (:class:`Heterogeneity`):

- per-neuron gains ``phi_i(u) = phi(g_i u)``, ``g_i = exp(gain_sd * xi_i)`` (log-normal, median 1);
- per-neuron thresholds, a bias ``b_i = b + threshold_sd * eta_i`` (units of ``u``);
- a random symmetric interaction ``F'(r) = F(r) - 1/2 r^T W r``,
  ``W = weight_sd (A + A^T) / sqrt(2 N)`` with ``A`` standard normal and zero diagonal.

Every term keeps the Hopfield form (``phi_i`` strictly increasing with
``G_i(phi_i(u)) = G(phi(g_i u)) / g_i``; ``W`` symmetric), so the energy still decreases along
every autonomous trajectory; what is lost is the continuous symmetry: the bump drifts towards
the few positions the disorder favours, even without noise. The copy keeps the original's
target manifold, so distances and decoded phases are measured against the ideal bump.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from _runkit import BadInput
from _runkit.seeds import check_seed

from ..activation import Activation
from ..energies import InteractionEnergy
from ..network import HopfieldNetwork

__all__ = ["Heterogeneity", "PerNeuronGain", "PerturbedEnergy", "heterogeneous"]


@dataclass(frozen=True)
class Heterogeneity:
    """Sizes of the disorder and its seed (all zero: the network unchanged).

    Attributes
    ----------
    gain_sd : s.d. of ``log g_i`` (>= 0).
    threshold_sd : s.d. of the per-neuron bias shift (>= 0, units of ``u``).
    weight_sd : scale of the random symmetric interaction (>= 0).
    seed : seeds the draws.
    """

    gain_sd: float = 0.0
    threshold_sd: float = 0.0
    weight_sd: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for key in ("gain_sd", "threshold_sd", "weight_sd"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                raise BadInput(f"{key}={v!r}: must be a finite number >= 0", param=key)
        check_seed("seed", self.seed)

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return asdict(self)


class PerNeuronGain(Activation):
    """``phi_i(u) = phi(g_i u)`` for a base rate function and per-neuron gains ``g``.

    Parameters
    ----------
    base : Activation
        The rate function.
    gains : torch.Tensor, shape (*shape)
        Positive gains.
    """

    name = "per_neuron_gain"

    def __init__(self, base: Activation, gains: torch.Tensor):
        g = torch.as_tensor(gains, dtype=torch.float64)
        if not bool((g > 0).all()):
            raise BadInput("gains: must all be > 0", param="gains")
        self.base, self.gains = base, g

    def __call__(self, u):
        return self.base(self.gains.to(u.dtype) * u)

    def derivative(self, u):
        g = self.gains.to(u.dtype)
        return g * self.base.derivative(g * u)

    def inverse(self, r):
        return self.base.inverse(r) / self.gains.to(r.dtype)

    def integral(self, u):
        g = self.gains.to(u.dtype)
        return self.base.integral(g * u) / g

    def config(self) -> dict:
        return {"name": self.name, "base": self.base.config()}


class PerturbedEnergy(InteractionEnergy):
    """``F'(r) = F(r) - 1/2 r^T W r`` with a symmetric ``W`` ``(N, N)``."""

    family = "perturbed"

    def __init__(self, base: InteractionEnergy, weights: torch.Tensor):
        super().__init__(base.geometry)
        w = torch.as_tensor(weights, dtype=torch.float64)
        n = base.geometry.size
        if tuple(w.shape) != (n, n) or not torch.allclose(w, w.T):
            raise BadInput(f"weights: a symmetric ({n}, {n}) matrix is needed", param="weights")
        self.base = base
        self.register_buffer("weights", w.clone())

    def _flat(self, r):
        g = self.geometry
        return r.reshape(r.shape[: r.dim() - g.dim] + (g.size,))

    def forward(self, r):
        x = self._flat(r)
        return self.base(r) - 0.5 * ((x @ self.weights.to(r.dtype)) * x).sum(-1)

    def grad(self, r):
        return self.base.grad(r) - (self._flat(r) @ self.weights.to(r.dtype)).reshape(r.shape)

    def hvp(self, r, v):
        v = v.expand_as(r) if v.shape != r.shape else v
        return self.base.hvp(r, v) - (self._flat(v) @ self.weights.to(r.dtype)).reshape(r.shape)

    def config(self) -> dict:
        return {"family": self.family, "base": self.base.config()}


def heterogeneous(network: HopfieldNetwork, disorder: Heterogeneity) -> HopfieldNetwork:
    """A copy of ``network`` with seeded per-neuron gains, thresholds and a random interaction.

    Parameters
    ----------
    network : HopfieldNetwork
        The homogeneous network.
    disorder : Heterogeneity
        Sizes and seed.

    Returns
    -------
    HopfieldNetwork (the original is not modified).

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(geometry="ring", n=32, steps=20)).network
    >>> het = heterogeneous(net, Heterogeneity(threshold_sd=0.05, seed=1))
    >>> tuple(het.bias.shape)
    (32,)
    """
    if not isinstance(disorder, Heterogeneity):
        raise BadInput(f"disorder: expected a Heterogeneity, got {type(disorder).__name__}",
                       param="disorder")
    g = network.geometry
    gen = torch.Generator().manual_seed(disorder.seed)
    xi = torch.randn(g.shape, generator=gen, dtype=torch.float64)
    eta = torch.randn(g.shape, generator=gen, dtype=torch.float64)
    a = torch.randn((g.size, g.size), generator=gen, dtype=torch.float64)
    act = network.activation
    if disorder.gain_sd > 0:
        act = PerNeuronGain(act, torch.exp(disorder.gain_sd * xi))
    bias = network.bias.detach().clone()
    if disorder.threshold_sd > 0:
        bias = bias + disorder.threshold_sd * eta
    energy = network.energy_fn
    if disorder.weight_sd > 0:
        w = disorder.weight_sd * (a + a.T) / math.sqrt(2 * g.size)
        w.fill_diagonal_(0.0)
        energy = PerturbedEnergy(energy, w)
    return HopfieldNetwork(g, act, energy, bias=bias, tau=network.tau,
                           transport=network.transport, manifold=network.manifold)
