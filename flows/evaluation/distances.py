"""Distances between point clouds, their noise floors, straightness and memorization.

All distances compare two empirical distributions with uniform weights, x of shape (n, d) and
y of shape (n', d). A distance is only meaningful beside its noise floor: the same distance
between two independent samples of the true distribution of the same sizes, reported with its
spread over independent pairs (:mod:`flows.evaluation.floors`). A value below the floor means the
metric is saturated, not that the model beats the data.

The Sinkhorn divergence lives in :mod:`flows.evaluation.entropic` (log domain, relative
regularisation, failures raise) and memorization in :mod:`flows.evaluation.nearest` (against the
whole training set); both are re-exported here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import ot
import torch

from _runkit.results import Result

from ..data import Dataset
from ..errors import (
    FlowsError,
    RunFailed,
    check_choice,
    check_finite,
    check_int,
    check_positive_int,
)
from ..sampling.ode import Field, integrate
from .entropic import sinkhorn_divergence
from .floors import Floor, noise_floor
from .nearest import Memorization, memorization

METRICS = ("w2", "w1", "sinkhorn", "sliced", "fd")
"""Distances by name; ``fd`` is the classifier-feature Frechet distance of images
(:func:`flows.evaluation.features.classifier_fd`: digits, mnist14, mnist)."""


def _np(x: torch.Tensor | np.ndarray, name: str) -> np.ndarray:
    t = torch.as_tensor(x)
    if t.is_complex() or not (t.is_floating_point() or t.dtype in (torch.int32, torch.int64)):
        raise FlowsError(f"{name} has dtype {t.dtype}; real points are required (a cast would "
                         "drop the imaginary part)")
    if t.ndim != 2 or t.shape[0] == 0:
        raise FlowsError(f"{name} has shape {tuple(t.shape)}; a non-empty (n, d) array is required")
    check_finite(name, t)
    return t.detach().double().numpy()


def _pair(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    a, b = _np(x, "samples"), _np(y, "reference")
    if a.shape[1] != b.shape[1]:
        raise FlowsError(f"samples have dimension {a.shape[1]} but the reference has "
                         f"{b.shape[1]}; they must be equal")
    return a, b, np.full(a.shape[0], 1.0 / a.shape[0]), np.full(b.shape[0], 1.0 / b.shape[0])


def _emd2_checked(wa: np.ndarray, wb: np.ndarray, cost: np.ndarray, num_itermax: int) -> float:
    check_positive_int("num_itermax", num_itermax)
    with warnings.catch_warnings():
        # the solver status is checked below and turned into an exception
        warnings.simplefilter("ignore", UserWarning)
        value, log = ot.emd2(wa, wb, cost, numItermax=int(num_itermax), log=True)
    if log.get("warning") is not None or log.get("result_code") != 1:
        raise RunFailed(f"exact OT did not reach the optimum (result_code="
                           f"{log.get('result_code')}, warning={log.get('warning')!r}); "
                           f"raise num_itermax={num_itermax}")
    return float(value)


def w2(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
       num_itermax: int = 10_000_000) -> float:
    """Exact 2-Wasserstein distance between two point clouds.

    W2 = sqrt(min_{P in U(a, b)} sum_ij P_ij ||x_i - y_j||^2), a, b uniform, solved by POT's
    network simplex; raises RuntimeError if the solver stops before optimality.

    Parameters
    ----------
    x : array, shape (n, d)
    y : array, shape (n', d)
    num_itermax : int
        Iteration cap of the network simplex.

    Returns
    -------
    float

    Examples
    --------
    >>> round(w2(np.zeros((3, 2)), np.ones((4, 2))), 6)
    1.414214
    """
    a, b, wa, wb = _pair(x, y)
    return math.sqrt(max(_emd2_checked(wa, wb, ot.dist(a, b), num_itermax), 0.0))


def w1(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
       num_itermax: int = 10_000_000) -> float:
    """Exact 1-Wasserstein distance W1 = min_P sum_ij P_ij ||x_i - y_j|| (uniform weights).

    Shapes (n, d) and (n', d); returns a float.
    """
    a, b, wa, wb = _pair(x, y)
    return _emd2_checked(wa, wb, ot.dist(a, b, metric="euclidean"), num_itermax)


def sliced_w(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
             n_projections: int = 500, seed: int = 0) -> float:
    """Sliced 2-Wasserstein distance with ``n_projections`` random directions drawn from ``seed``.

    SW2 = sqrt(E_theta W2^2(theta^T x, theta^T y)), theta uniform on the sphere.
    Shapes (n, d), (n', d).
    """
    a, b, wa, wb = _pair(x, y)
    check_positive_int("n_projections", n_projections)
    rng = np.random.RandomState(check_int("seed", seed))  # 1.5 or "0" is refused, not rounded
    return float(ot.sliced_wasserstein_distance(a, b, wa, wb, n_projections=n_projections, p=2,
                                                seed=rng))


def metric_fn(name: str, seed: int = 0) -> Callable[[object, object], float]:
    """The distance function registered under ``name`` (one of :data:`METRICS`)."""
    check_choice("metric", name, METRICS)
    if name == "fd":
        from .features import classifier_fd

        return classifier_fd
    return {"w2": w2, "w1": w1, "sinkhorn": sinkhorn_divergence,
            "sliced": lambda x, y: sliced_w(x, y, seed=seed)}[name]


@dataclass(frozen=True)
class MetricResult(Result):
    """A distance with its sample sizes and, when available, its noise floor and spread.

    ``floor`` is the mean over ``floor_pairs`` independent pairs of true-data samples of the
    sizes used and ``floor_std`` their standard deviation (one pair: a single value, std None);
    ``floor_method`` says which pairs (:attr:`flows.evaluation.floors.Floor.method`).
    """

    metric: str
    value: float
    n_samples: int
    n_reference: int
    floor: float | None = None
    floor_std: float | None = None
    floor_pairs: int | None = None
    floor_method: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict (unknown floor fields omitted)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def evaluate(samples: torch.Tensor | np.ndarray, reference: torch.Tensor | np.ndarray,
             metric: str = "w2", floor_reference: torch.Tensor | np.ndarray | None = None,
             seed: int = 0, dataset: Dataset | None = None, pairs: int = 5) -> MetricResult:
    """metric(samples, reference) beside its noise floor.

    - ``dataset`` given: the floor is :func:`flows.evaluation.floors.noise_floor` of that
      distribution at the sizes (n, n'), mean and std over ``pairs`` independent pairs.
    - else ``floor_reference`` (an independent true sample of n rows) gives a single-pair floor
      metric(floor_reference, reference).

    Shapes (n, d), (n', d) and (n, d).

    Examples
    --------
    >>> from flows.data import load_dataset
    >>> ds = load_dataset("normal")
    >>> r = evaluate(ds.sample(200, 1) + 3.0, ds.sample(200, 2), dataset=ds, pairs=3)
    >>> r.value > 3 * r.floor
    True
    """
    f = metric_fn(metric, seed)
    value = f(samples, reference)
    n, n_ref = int(np.shape(samples)[0]), int(np.shape(reference)[0])
    if dataset is not None:
        fl: Floor = noise_floor(dataset, f, n, n_ref, pairs=pairs, seed=seed)
        return MetricResult(metric, value, n, n_ref, fl.mean, fl.std, len(fl.values), fl.method)
    if floor_reference is None:
        return MetricResult(metric, value, n, n_ref)
    return MetricResult(metric, value, n, n_ref, f(floor_reference, reference), None, 1,
                        "the given floor sample")


@dataclass(frozen=True)
class PathEnergy(Result):
    """Kinetic energy of the sampled flow against the squared W2 between its endpoints.

    ``normalized`` = ``|E - W2^2| / W2^2`` with ``E = mean_i int_0^1 ||v(x_i(t), t)||^2 dt``: 0 for
    straight, optimal transport paths.
    """

    energy: float
    w2_squared: float
    normalized: float


def path_energy(field: Field, x0: torch.Tensor, method: str = "midpoint",
                steps: int = 50) -> PathEnergy:
    """Normalized path energy ``|E int ||v||^2 dt - W2(x0, x1)^2| / W2(x0, x1)^2``.

    Integrates the state and the running energy together; x0 of shape (N, d).
    """
    d = x0.shape[1]

    def aug(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        v = field(x[:, :d], t)
        return torch.cat([v, v.square().sum(1, keepdim=True)], 1)

    res = integrate(aug, torch.cat([x0, torch.zeros(x0.shape[0], 1, dtype=x0.dtype)], 1),
                    method=method, steps=steps)
    energy = float(res.x[:, d].mean())
    w = w2(x0, res.x[:, :d]) ** 2
    return PathEnergy(energy, w, abs(energy - w) / max(w, 1e-12))


__all__ = ["METRICS", "Memorization", "MetricResult", "PathEnergy", "evaluate", "memorization",
           "metric_fn", "path_energy", "sinkhorn_divergence", "sliced_w", "w1", "w2"]
