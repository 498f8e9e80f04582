"""Noise floors: a distance between two independent samples of the true distribution.

A distance between generated samples (N points) and a reference (N' points) is only
meaningful beside its floor: the same distance between an independent sample of N points of
the true distribution and an independent reference of N' points. A perfect sampler scores at
the floor, not at zero; a value below it means the metric is saturated at these sizes.

The floor is itself random; :func:`noise_floor` draws ``pairs`` independent (sample,
reference) pairs and reports the mean and the standard deviation over them.

- Generated data sets (:mod:`flows.data`, i.i.d. generators): each pair is two fresh draws.
- Finite data sets (digits, user arrays): each pair is two disjoint random subsets of the
  rows, of sizes min(N, R - N') and N' = min(N', R // 2) for R rows; the sizes used are
  reported, since a finite pool cannot supply two large independent samples.
- Data sets with held-out splits (MNIST): each pair is a random subset of the test images
  (in the samples' place) and one of the validation images (in the reference's), images no
  training saw. The reference of a metric against such a data set is random validation images
  (:func:`flows.runs.measure.reference_for`), so real images never trained on score about
  1x the floor, and ``bench/mnist14_acceptance.py`` uses the same reference and floor.

The method is named in :attr:`Floor.method` (and as ``floor_method`` where a metric is
reported). Random subsets, not the first rows: MNIST's splits are ordered (the test set's
second half is another population of writers), so blocks of rows are not samples of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

from _runkit.results import Result

from ..data import Dataset
from ..errors import FlowsError, as_generator, check_positive_int, derive_seed

__all__ = ["Floor", "noise_floor"]

Metric = Callable[[torch.Tensor, torch.Tensor], float]

#: :attr:`Floor.method` of a data set with held-out splits (MNIST)
HELD_OUT = "test vs validation images"


@dataclass(frozen=True)
class Floor(Result):
    """A noise floor with its spread.

    Attributes
    ----------
    mean, std : float
        Mean and standard deviation (ddof = 1; 0 for one pair) over the pairs.
    values : tuple of float
        The distance of each pair.
    n_samples, n_reference : int
        Sizes of the two samples of each pair.
    method : str
        "independent draws", "disjoint subsets" or "test vs validation images".
    """

    mean: float
    std: float
    values: tuple
    n_samples: int
    n_reference: int
    method: str

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        d = asdict(self)
        d["values"] = list(self.values)
        return d


def floor_pairs(ds: Dataset, n_samples: int, n_reference: int, pairs: int,
                seed: int) -> tuple[list[tuple[torch.Tensor, torch.Tensor]], str]:
    """``pairs`` independent (sample, reference) pairs of the true distribution of ``ds``.

    Shapes (n_samples, d) and (n_reference, d), reduced for a finite pool as described in
    the module docstring. Returns the pairs and the method used.
    """
    n_samples = check_positive_int("n_samples", n_samples)
    n_reference = check_positive_int("n_reference", n_reference)
    pairs = check_positive_int("pairs", pairs)
    out = []
    if ds.held_out is not None:
        valid, test = ds.held_out()
        for i in range(pairs):
            g = as_generator(derive_seed(seed, f"floor-pair-{i}"))
            out.append((test[torch.randperm(test.shape[0], generator=g)[:n_samples]],
                        valid[torch.randperm(valid.shape[0], generator=g)[:n_reference]]))
        return out, HELD_OUT
    if ds.pool is None:
        for i in range(pairs):
            g = as_generator(derive_seed(seed, f"floor-pair-{i}"))
            out.append((ds.sample(n_samples, g), ds.sample(n_reference, g)))
        return out, "independent draws"
    rows = ds.pool.shape[0]
    if rows < 2:
        raise FlowsError(f"data={ds.name!r} has {rows} row; a floor needs at least 2")
    n_ref = min(n_reference, rows // 2)
    n_s = min(n_samples, rows - n_ref)
    for i in range(pairs):
        perm = torch.randperm(rows, generator=as_generator(derive_seed(seed, f"floor-pair-{i}")))
        out.append((ds.pool[perm[:n_s]], ds.pool[perm[n_s:n_s + n_ref]]))
    return out, "disjoint subsets"


def noise_floor(ds: Dataset, metric: Metric, n_samples: int, n_reference: int | None = None,
                pairs: int = 5, seed: int = 0) -> Floor:
    """Mean and spread of metric(sample, reference) over independent true-data pairs.

    floor = (1/P) sum_p metric(X_p, Y_p), X_p (n_samples, d) and Y_p (n_reference, d) drawn
    independently from the data distribution (or disjoint row subsets of a finite pool).

    Parameters
    ----------
    ds : Dataset
    metric : callable (x, y) -> float
    n_samples : int
    n_reference : int or None
        Defaults to n_samples.
    pairs : int
        Number P of independent pairs (>= 2 gives a spread).
    seed : int

    Returns
    -------
    Floor

    Examples
    --------
    >>> from flows.data import load_dataset
    >>> from flows.evaluation.distances import w2
    >>> f = noise_floor(load_dataset("moons"), w2, 200, pairs=3)
    >>> 0.1 < f.mean < 0.6 and f.std > 0
    True
    """
    n_reference = n_samples if n_reference is None else n_reference
    ps, method = floor_pairs(ds, n_samples, n_reference, pairs, seed)
    vals = [float(metric(x, y)) for x, y in ps]
    mean = sum(vals) / len(vals)
    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0.0
    return Floor(mean, std, tuple(vals), ps[0][0].shape[0], ps[0][1].shape[0], method)
