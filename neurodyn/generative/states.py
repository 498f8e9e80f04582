"""Noisy population states of a fitted network: the data a generative model learns from."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, check_int
from _runkit.results import Result
from _runkit.seeds import derive_seed

from ..network import HopfieldNetwork

__all__ = ["PopulationStates", "population_states", "shuffled_states"]


@dataclass(frozen=True)
class PopulationStates(Result):
    """States of a population and their coordinate on the attractor.

    Attributes
    ----------
    rates : torch.Tensor, shape (n, N)
        Rates ``phi(u)`` of each state (neurons flattened).
    phases : torch.Tensor, shape (n, dim)
        The nearest manifold coordinate of each state, in ``[0, 2 pi)``.
    distance : torch.Tensor, shape (n,)
        Relative distance of each state's potentials to the manifold (its normal noise).
    noise : float
        ``sigma`` of the noise that drove the states (nan for states given from elsewhere).
    covariate : torch.Tensor or None, shape (n, dim)
        The coordinate the states should carry, known from outside the network: the driving
        trajectory's heading or lattice phase (:func:`~.sources.driven_states`), or the
        coordinate decoded from recorded counts by maximum likelihood
        (:func:`~.sources.recorded_states`); None for noise-driven states.
    """

    rates: torch.Tensor
    phases: torch.Tensor
    distance: torch.Tensor
    noise: float
    covariate: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.rates.shape[0])

    def __repr__(self) -> str:
        return (f"PopulationStates(n={len(self)}, neurons={self.rates.shape[1]}, "
                f"dim={self.phases.shape[1]}, noise={self.noise:g})")

    def subset(self, index: torch.Tensor) -> PopulationStates:
        """The states at ``index`` (a 1-D integer tensor)."""
        cov = None if self.covariate is None else self.covariate[index]
        return PopulationStates(self.rates[index], self.phases[index], self.distance[index],
                                self.noise, cov)


def locate(network: HopfieldNetwork, rates: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest manifold coordinate ``(n, dim)`` and relative distance ``(n,)`` of rates
    ``(n, N)``; rates are clipped into the activation's open range before its inverse."""
    g = network.geometry
    lo, hi = _rate_range(network)
    eps = 1e-6 * (hi - lo)
    u = network.activation.inverse(rates.to(torch.float64).clamp(lo + eps, hi - eps))
    d = network.manifold.distance(u.reshape(-1, *g.shape))
    return d.psi, d.distance


def _rate_range(network: HopfieldNetwork) -> tuple[float, float]:
    r = network.activation(torch.tensor([-1e3, 1e3], dtype=torch.float64))
    return float(r[0]), float(r[1])


def population_states(network: HopfieldNetwork, count: int = 2000, noise: float = 0.2,
                      runs: int = 200, burn: float = 10.0, dt: float = 0.05,
                      seed: int = 0) -> PopulationStates:
    """States of ``network`` driven by noise, one per tau after a burn-in, from ``runs`` runs
    started at random manifold points (Euler-Maruyama, ``sigma = noise`` on ``u``).

    Parameters
    ----------
    network : HopfieldNetwork
        A fitted network with a target manifold.
    count : int
        States returned (in a seeded random order).
    noise : float
        Noise ``sigma`` on ``u``, > 0.
    runs : int
        Independent runs the states come from (the default gives about ten states per run at
        2,000 states: states of one run share its slowly diffusing coordinate, so few runs
        give a clumped sample of the coordinate and unstable floors).
    burn, dt : float
        Time discarded at the start of each run and the step (tau).
    seed : int
        Seeds the starting points, the noise and the order.

    Returns
    -------
    PopulationStates
    """
    from ..analysis.bump_motion import from_manifold

    count, runs = check_int("count", count, lo=2), check_int("runs", runs, lo=1)
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise > 0):
        raise BadInput(f"noise={noise!r} is not allowed; it must be a finite number > 0")
    if network.manifold is None:
        raise BadInput("network: needs a target manifold (a fitted network)")
    per_run = -(-count // runs)
    tr = from_manifold(network, runs, burn + per_run, dt, derive_seed(seed, "states"),
                       noise=float(noise), method="euler", diagnostics=False, progress=False)
    keep = tr.t >= burn - 1e-9
    u = tr.u[keep].reshape(-1, network.geometry.size)
    order = torch.randperm(len(u), generator=torch.Generator().manual_seed(
        derive_seed(seed, "order") % 2**63))[:count]
    rates = network.activation(u[order].to(torch.float64))
    psi, dist = locate(network, rates)
    return PopulationStates(rates, psi, dist, float(noise))


def shuffled_states(states: PopulationStates, seed: int = 0) -> PopulationStates:
    """The control with no attractor: each neuron's rates permuted independently across states
    (single-neuron statistics kept, the population's joint structure destroyed). Phases and
    distances are left as they were and mean nothing for the result."""
    g = torch.Generator().manual_seed(derive_seed(seed, "shuffle") % 2**63)
    n, cells = states.rates.shape
    idx = torch.argsort(torch.rand(n, cells, generator=g), dim=0)
    return PopulationStates(torch.gather(states.rates, 0, idx), states.phases,
                            states.distance, math.nan, states.covariate)
