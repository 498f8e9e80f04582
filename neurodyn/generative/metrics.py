"""Judging generated population states against held-out data, each number beside its floor.

- Normal distance: the median relative distance of the states' potentials to the manifold,
  divided by the same median of held-out data (the data's own noise floor): 1 is as noisy as
  the data, below 1 cleaner, far above 1 off the attractor.
- Topology: Betti numbers of the states (:func:`neurodyn.analysis.topology.persistent_homology`,
  long bars by the widest gap).
- Rate distribution: the W2 between generated and held-out rate vectors in the neurons' (ambient)
  space, against its floor: the same W2 of real training states of the held-out size (data
  against data). It needs no decoding and no manifold, so it measures the states as they are.
- Coordinate distribution: the intrinsic W2 on the circle / torus between the decoded
  coordinates of generated and held-out states, against its i.i.d. floor (two real samples of
  the same size).
- Tuning curves (mean rate of each neuron per coordinate bin) and pairwise correlations: the
  relative error against held-out data, beside the same error of a fresh real sample.
- Memorization: :func:`flows.memorization` against the training states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, Result

from ..analysis.topology import ATTRACTOR_BETTI  # re-exported: the judge's expected topology
from ..network import HopfieldNetwork
from .states import PopulationStates, locate

__all__ = ["GeneratedMetrics", "judge_states", "state_homology", "state_betti", "rate_floor",
           "ATTRACTOR_BETTI", "RATE_FLOOR_PAIRS"]

#: real training samples the rate W2's floor averages over
RATE_FLOOR_PAIRS = 5


@dataclass(frozen=True)
class GeneratedMetrics(Result):
    """Numbers of one set of generated states (see the module docstring).

    Attributes
    ----------
    normal_distance, distance_floor, distance_ratio : float
    betti : tuple of int
    rate_w2, rate_w2_floor, rate_w2_floor_std, rate_w2_ratio : float
        W2 of the rate vectors against the held-out states' (ambient space); the floor and its
        spread over :data:`RATE_FLOOR_PAIRS` real training samples of the held-out size against
        the held-out states.
    w2, w2_floor, w2_floor_std, w2_ratio : float
        ``w2_floor`` and its spread over 20 pairs of real samples; at a few hundred states on a
        nearly uniform coordinate the spread is a fifth of the floor or more, so a ratio within
        ``1 + 2 w2_floor_std / w2_floor`` is as close as two real samples.
    tuning_error, tuning_floor : float
    correlation_error, correlation_floor : float
    memorized, memorized_baseline : float
    """

    normal_distance: float
    distance_floor: float
    distance_ratio: float
    betti: tuple
    rate_w2: float
    rate_w2_floor: float
    rate_w2_floor_std: float
    rate_w2_ratio: float
    w2: float
    w2_floor: float
    w2_floor_std: float
    w2_ratio: float
    tuning_error: float
    tuning_floor: float
    correlation_error: float
    correlation_floor: float
    memorized: float
    memorized_baseline: float


def _tuning(rates: torch.Tensor, phases: torch.Tensor, bins: int) -> torch.Tensor:
    """Mean rate per neuron per coordinate bin, ``(bins**dim, N)``; empty bins are nan."""
    idx = torch.zeros(len(phases), dtype=torch.long)
    for a in range(phases.shape[1]):
        b = (phases[:, a] / (2 * math.pi) * bins).long().clamp(0, bins - 1)
        idx = idx * bins + b
    total = torch.zeros(bins ** phases.shape[1], rates.shape[1], dtype=torch.float64)
    total.index_add_(0, idx, rates.to(torch.float64))
    count = torch.bincount(idx, minlength=total.shape[0]).to(torch.float64)[:, None]
    return total / count.where(count > 0, torch.tensor(math.nan, dtype=torch.float64))


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    ok = torch.isfinite(a) & torch.isfinite(b)
    return float((a[ok] - b[ok]).norm() / b[ok].norm().clamp_min(1e-300))


def _corr(rates: torch.Tensor) -> torch.Tensor:
    c = torch.corrcoef(rates.to(torch.float64).T)
    return torch.nan_to_num(c)


def state_homology(rates: torch.Tensor, maxdim: int = 2, seed: int = 0):
    """Persistent homology of population states ``(n, N)`` as the judge computes it (Rips on
    at most 200 landmark states, to ``maxdim``): a :class:`~neurodyn.analysis.topology.Homology`
    whose ``betti_numbers`` are the ``betti`` of :func:`judge_states`."""
    from ..analysis.topology import persistent_homology

    return persistent_homology(rates.to(torch.float64).numpy(), maxdim=maxdim, max_points=200,
                               seed=seed)


def state_betti(rates: torch.Tensor, maxdim: int = 2, seed: int = 0) -> tuple:
    """Betti numbers ``(b0, ..., b_maxdim)`` of states ``(n, N)`` by the judge's rule
    (:func:`state_homology`, long bars by the widest gap)."""
    from ..analysis.topology import betti_numbers

    return tuple(int(b) for b in betti_numbers(state_homology(rates, maxdim, seed)))


def rate_floor(train: torch.Tensor, held: torch.Tensor, pairs: int = RATE_FLOOR_PAIRS,
               seed: int = 0) -> tuple[float, float]:
    """The floor of the rate W2: mean and standard deviation, over ``pairs`` draws, of the W2
    between ``len(held)`` random real training states ``train`` ``(m, N)`` and the held-out
    states ``held`` ``(n, N)`` (``m >= n``): what a generator that draws real states scores.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> x = torch.randn(600, 3, generator=g, dtype=torch.float64)
    >>> mean, std = rate_floor(x[200:], x[:200])
    >>> 0 < std < mean < 1
    True
    """
    from _runkit.seeds import derive_seed
    from flows import w2

    if len(train) < len(held):
        raise BadInput(f"train: {len(train)} states; the floor needs {len(held)} (held)",
                       param="train")
    g = torch.Generator().manual_seed(derive_seed(seed, "rate floor"))
    vals = [w2(train[torch.randperm(len(train), generator=g)[:len(held)]].to(torch.float64),
               held.to(torch.float64)) for _ in range(pairs)]
    t = torch.tensor(vals, dtype=torch.float64)
    return float(t.mean()), float(t.std(unbiased=False))


def judge_states(network: HopfieldNetwork, rates: torch.Tensor, held: PopulationStates,
                 train: PopulationStates, maxdim: int | None = None, bins: int | None = None,
                 seed: int = 0) -> GeneratedMetrics:
    """Judge generated ``rates`` ``(n, N)`` against held-out and training states.

    ``maxdim`` (default 2) bounds the homology; ``bins`` (default 16 ring, 6 torus) the tuning
    curves' coordinate bins per axis. ``train`` needs at least ``2 len(held)`` states (the
    floors draw real samples of the held-out size from it).
    """
    from flows import memorization, w2
    from flows.riemannian import intrinsic_floor, intrinsic_w2

    dim = held.phases.shape[1]
    bins = bins or (16 if dim == 1 else 6)
    psi, dist = locate(network, rates)
    floor_d = float(held.distance.median())
    betti = state_betti(rates, 2 if maxdim is None else maxdim, seed)
    rate_w2 = w2(rates.to(torch.float64), held.rates.to(torch.float64))
    rate_floor_, rate_std = rate_floor(train.rates, held.rates, seed=seed)
    w2_ = intrinsic_w2(psi, held.phases)
    w2_floor, w2_std = intrinsic_floor(train.phases, len(held), pairs=20, seed=seed)
    fresh = train.subset(torch.arange(len(held)))
    t_held = _tuning(held.rates, held.phases, bins)
    c_held = _corr(held.rates)
    mem = memorization(rates.to(torch.float32), train.rates.to(torch.float32), seed=seed)
    return GeneratedMetrics(
        float(dist.median()), floor_d, float(dist.median()) / floor_d,
        betti, rate_w2, rate_floor_, rate_std, rate_w2 / rate_floor_,
        w2_, w2_floor, w2_std, w2_ / w2_floor,
        _relative(_tuning(rates, psi, bins), t_held),
        _relative(_tuning(fresh.rates, fresh.phases, bins), t_held),
        _relative(_corr(rates), c_held), _relative(_corr(fresh.rates), c_held),
        float(mem.fraction), float(mem.baseline))
