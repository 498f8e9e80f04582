"""One result shape for every evaluation metric: value, floor, p-value.

:class:`EvalReport` is what ``flows eval`` prints and writes: always the keys ``metric``,
``value``, ``floor``, ``floor_std``, ``floor_pairs``, ``p_value``, ``permutations``,
``n_samples`` and ``n_reference`` (null where a metric has none), then the metric's own fields.

- ``floor`` is what a perfect sampler scores: the metric between two true samples of the same
  sizes (:mod:`flows.evaluation.floors`), for memorization the fraction the leave-one-out
  training points score, for the data-copying z its null mean 0.
- ``p_value`` is the permutation two-sample test of :mod:`flows.evaluation.twosample` (with
  ``permutations`` > 0), or for memorization and copying the data-copying test of
  :mod:`flows.evaluation.copying` (small: the samples sit closer to the training set than
  fresh data do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..data import Dataset
from ..errors import FlowsError, check_choice, check_int
from .copying import data_copying
from .distances import METRICS, MetricResult, evaluate, metric_fn
from .entropic import sinkhorn_result
from .floors import noise_floor
from .nearest import NULL_RATE, memorization
from .twosample import STATISTICS, permutation_test, two_sample_statistic

__all__ = ["EvalReport", "report_copying", "report_memorization", "report_statistic"]

EVAL_METRICS = METRICS + tuple(s for s in STATISTICS if s not in METRICS)
"""Metrics between samples and a reference (distances, then the other statistics)."""

TRAIN_METRICS = ("memorization", "copying")
"""Metrics between samples and the training set."""


@dataclass(frozen=True)
class EvalReport(MetricResult):
    """A metric with its floor (the fields of :class:`MetricResult`) and p-value, and the
    metric's own fields in ``details``."""

    p_value: float | None = None
    permutations: int | None = None
    details: dict = field(default_factory=dict)

    @property
    def floor_ratio(self) -> float | None:
        """``value / floor`` (None without a floor or for a floor of 0): 1 for a sampler as
        good as the data's own, for a distance."""
        return self.value / self.floor if self.floor else None

    def to_dict(self) -> dict:
        """The common keys (None where not applicable), then ``details`` flattened."""
        out = {k: getattr(self, k) for k in ("metric", "value", "floor", "floor_std",
                                             "floor_pairs", "floor_method", "floor_ratio",
                                             "p_value", "permutations", "n_samples",
                                             "n_reference")}
        out.update(self.details)
        return out


def report_statistic(samples: torch.Tensor | np.ndarray, reference: torch.Tensor | np.ndarray,
                     metric: str = "w2", seed: int = 0, dataset: Dataset | None = None,
                     pairs: int = 5, permutations: int = 0, reg: float = 0.05,
                     max_iter: int = 5000, k: int = 3) -> EvalReport:
    """metric(samples, reference) with its noise floor (``dataset`` given) and p-value.

    Parameters
    ----------
    samples : array, shape (n, d)
    reference : array, shape (m, d)
        True data.
    metric : str
        One of :data:`EVAL_METRICS`.
    seed : int
        Seed of the floor pairs, the permutations and the sliced projections.
    dataset : Dataset or None
        The true distribution: the floor is the metric's mean and std over ``pairs`` pairs of
        its samples (:func:`flows.evaluation.floors.noise_floor`).
    pairs : int
    permutations : int
        B of the permutation test (0: no p-value).
    reg, max_iter : float, int
        Sinkhorn's relative regularisation and iteration cap; a solve that does not converge
        is reported (``converged`` false, ``marginal_error``), not raised.
    k : int
        Neighbour of precision and recall.

    Returns
    -------
    EvalReport

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.randn(100, 2, generator=g)
    >>> r = report_statistic(y + 1.0, y, "energy", permutations=99)
    >>> r.value > 0.5, r.p_value
    (True, 0.01)
    """
    check_choice("metric", metric, EVAL_METRICS)
    permutations = check_int("permutations", permutations, lo=0)
    n, m = int(np.shape(samples)[0]), int(np.shape(reference)[0])
    details: dict = {}
    if metric == "sinkhorn":
        value, fl, details = _sinkhorn_with_floor(samples, reference, dataset, pairs, seed, reg,
                                                  max_iter)
    elif metric in METRICS:
        r = evaluate(samples, reference, metric, seed=seed, dataset=dataset, pairs=pairs)
        value, fl = r.value, (r.floor, r.floor_std, r.floor_pairs, r.floor_method)
    else:
        value = two_sample_statistic(samples, reference, metric, k, seed)
        fl = (None, None, None, None)
        if dataset is not None:
            f = noise_floor(dataset, lambda a, b: two_sample_statistic(a, b, metric, k, seed),
                            n, m, pairs=pairs, seed=seed)
            fl = (f.mean, f.std, len(f.values), f.method)
        if metric in ("precision", "recall"):
            details["k"] = k
    p = None
    if permutations:  # a distance without a pooled shortcut is recomputed on every split
        stat = metric if metric in STATISTICS else metric_fn(metric, seed)
        p = permutation_test(samples, reference, stat, permutations, seed, k, reg).p_value
    return EvalReport(metric, float(value), n, m, *fl, p, permutations or None, details)


def _sinkhorn_with_floor(samples, reference, dataset, pairs, seed, reg, max_iter):
    """The Sinkhorn divergence (not strict), its floor ``(mean, std, pairs, method)`` and the
    details (reg, eps, iterations, the largest marginal error, whether every solve
    converged)."""
    res = sinkhorn_result(samples, reference, reg, max_iter=max_iter)
    solves = [res]

    def divergence(a, b):
        r = sinkhorn_result(a, b, reg, max_iter=max_iter)
        solves.append(r)
        return r.value

    fl = (None, None, None, None)
    if dataset is not None:
        f = noise_floor(dataset, divergence, int(np.shape(samples)[0]),
                        int(np.shape(reference)[0]), pairs=pairs, seed=seed)
        fl = (f.mean, f.std, len(f.values), f.method)
    details = {"reg": reg, "eps": res.eps, "max_iter": max_iter, "iterations": res.iterations,
               "converged": all(s.converged for s in solves),
               "marginal_error": max(s.marginal_error for s in solves)}
    return res.value, fl, details


def report_memorization(samples: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                        heldout: torch.Tensor | np.ndarray | None = None,
                        criterion: float | str = "calibrated", null_rate: float = NULL_RATE,
                        seed: int = 0, cells: int = 3) -> EvalReport:
    """The memorized fraction (:func:`flows.evaluation.nearest.memorization`) as a report.

    ``value`` is the fraction, ``floor`` the fraction the leave-one-out training points score
    (``baseline``); with ``heldout`` (fresh data never trained on, (M, d)) the data-copying
    test gives ``p_value`` and ``copying_z``. Shapes: samples (N, d), train (n, d).

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> train = torch.randn(500, 2, generator=g)
    >>> r = report_memorization(train[:100], train, torch.randn(200, 2, generator=g))
    >>> r.value, r.p_value < 1e-6
    (1.0, True)
    """
    mem = memorization(samples, train, criterion=criterion, null_rate=null_rate, seed=seed)
    details = {k: v for k, v in mem.to_dict().items() if k not in ("fraction", "baseline",
                                                                   "n_samples")}
    p = None
    if heldout is not None:
        cp = data_copying(samples, train, heldout, cells=cells, seed=seed)
        p = cp.p_value
        details.update(copying_z=cp.z, n_heldout=cp.n_heldout)
    floor = mem.baseline if math.isfinite(mem.baseline) else None
    return EvalReport("memorization", mem.fraction, mem.n_samples, mem.n_train, floor,
                      floor_method=None if floor is None else "leave-one-out training points",
                      p_value=p, details=details)


def report_copying(samples: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                   heldout: torch.Tensor | np.ndarray, cells: int = 3,
                   seed: int = 0) -> EvalReport:
    """Meehan et al.'s data-copying test (:func:`flows.evaluation.copying.data_copying`) as a
    report: ``value`` is z (N(0, 1) under the null, negative for copying), ``floor`` its null
    mean 0, ``p_value`` = Phi(z). Shapes (N, d), (n, d), (M, d).
    """
    if heldout is None:
        raise FlowsError("the data-copying test needs held-out points (fresh data never "
                         "trained on)")
    cp = data_copying(samples, train, heldout, cells=cells, seed=seed)
    details = {k: v for k, v in cp.to_dict().items() if k not in ("z", "p_value", "n_samples")}
    return EvalReport("copying", cp.z, cp.n_samples, cp.n_heldout, 0.0,
                      floor_method="the null's mean", p_value=cp.p_value, details=details)
