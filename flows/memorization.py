"""Memorization of generated samples, judged against the whole training set.

A sample g is memorized when its nearest training point is closer than a third of its second
nearest: ||g - y_(1)|| < ||g - y_(2)|| / 3 (the criterion of the diffusion-memorization
literature, e.g. Yoon et al., 2023; Gu et al., 2023). The value reported is the fraction of
samples memorized. The training set is never subsampled: the two nearest neighbours are found
among all n training points, in chunks, so 20,000+ points take memory chunk x n only.

Baseline. Even a perfect sampler of the data distribution is flagged sometimes: for a
locally uniform density in d dimensions (d_1 / d_2)^d is uniform on [0, 1], so a fresh point
is flagged with probability 3^{-d} (11% in 2-D, 3.7% in 3-D, nothing measurable for images).
:func:`memorization` therefore reports beside the fraction the same criterion applied by
leave-one-out to training points themselves (each against the other n - 1): the fraction an
i.i.d. sample of the training distribution scores, measured without any model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .errors import FlowsError, as_generator, check_finite, check_positive, check_positive_int

CRITERION = 1.0 / 3.0


def _points(x: torch.Tensor | np.ndarray, name: str) -> torch.Tensor:
    t = torch.as_tensor(x)
    if t.ndim != 2 or t.shape[0] == 0:
        raise FlowsError(f"{name} has shape {tuple(t.shape)}; a non-empty (n, d) array is required")
    return check_finite(name, t.detach().to(torch.float64))


def two_nearest(x: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                chunk: int = 2048, exclude_self: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Distances from each x_i to its nearest and second-nearest training points.

    Parameters
    ----------
    x : array, shape (N, d)
    train : array, shape (n, d), n >= 2 (n >= 3 with ``exclude_self``)
    chunk : int
        Rows of x per distance block (memory chunk x n float64).
    exclude_self : bool
        x are rows of train in the same order (x = train[:N]): row i ignores training point i.

    Returns
    -------
    d1, d2 : torch.Tensor, float64, shape (N,) each, d1 <= d2

    Examples
    --------
    >>> d1, d2 = two_nearest(torch.tensor([[0.0]]), torch.tensor([[1.0], [3.0], [-2.0]]))
    >>> d1.tolist(), d2.tolist()
    ([1.0], [2.0])
    """
    x, y = _points(x, "samples"), _points(train, "train")
    if x.shape[1] != y.shape[1]:
        raise FlowsError(f"samples have dimension {x.shape[1]} but the training points have "
                         f"{y.shape[1]}; they must be equal")
    need = 3 if exclude_self else 2
    if y.shape[0] < need:
        raise FlowsError(f"train has {y.shape[0]} points; at least {need} are needed for the "
                         "nearest and second-nearest neighbours")
    chunk = check_positive_int("chunk", chunk)
    y_sq = y.square().sum(1)
    d1 = torch.empty(x.shape[0], dtype=torch.float64)
    d2 = torch.empty_like(d1)
    for i in range(0, x.shape[0], chunk):
        xc = x[i:i + chunk]
        # squared distances by the expansion, then clipped at 0 against rounding
        sq = (xc.square().sum(1)[:, None] - 2.0 * xc @ y.T + y_sq[None, :]).clamp_min_(0.0)
        if exclude_self:
            rows = torch.arange(xc.shape[0])
            sq[rows, rows + i] = torch.inf
        two = sq.topk(2, dim=1, largest=False).values
        d1[i:i + chunk], d2[i:i + chunk] = two[:, 0].sqrt(), two[:, 1].sqrt()
    return d1, d2


def memorized(d1: torch.Tensor, d2: torch.Tensor, criterion: float = CRITERION) -> torch.Tensor:
    """Boolean mask d1 < criterion * d2 (shapes (N,)).

    A sample on a training point (d1 = 0) that has a distinct second neighbour is memorized.
    """
    return d1 < check_positive("criterion", criterion) * d2


@dataclass(frozen=True)
class Memorization:
    """Fraction of samples memorized against the whole training set, beside its baseline.

    Attributes
    ----------
    fraction : float
        Fraction of samples with d1 < criterion * d2.
    baseline : float
        The same fraction for training points by leave-one-out (what an i.i.d. sample of the
        training distribution scores); nan when not computed.
    n_samples, n_train : int
    criterion : float
    median_ratio : float
        Median of d1 / d2 over the samples.
    """

    fraction: float
    baseline: float
    n_samples: int
    n_train: int
    criterion: float
    median_ratio: float

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return dict(self.__dict__)


def memorization(samples: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                 criterion: float = CRITERION, baseline_points: int = 2000,
                 seed: int | torch.Generator = 0, chunk: int = 2048) -> Memorization:
    """Fraction of samples whose nearest training point is closer than criterion x the second.

    value = (1/N) sum_i 1[d_1(g_i) < criterion d_2(g_i)], d_k the distance to the k-th nearest
    of all n training points. ``baseline`` applies the criterion by leave-one-out to
    ``baseline_points`` randomly chosen training points (0: not computed, reported as nan).

    Parameters
    ----------
    samples : array, shape (N, d)
    train : array, shape (n, d)
        The whole training set (never subsampled). Exact duplicate rows are merged first, so a
        copy of a duplicated training point still counts as memorized.
    criterion : float
        Ratio threshold (1/3 by default).
    baseline_points : int
        Training points used for the baseline (at most n).
    seed : int or torch.Generator
        Choice of the baseline points.
    chunk : int
        Rows per distance block.

    Returns
    -------
    Memorization

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> train = torch.randn(500, 8, generator=g)
    >>> memorization(train[:100] + 1e-3, train, baseline_points=0).fraction
    1.0
    """
    s = _points(samples, "samples")
    y = torch.unique(_points(train, "train"), dim=0)
    d1, d2 = two_nearest(s, y, chunk)
    mask = memorized(d1, d2, criterion)
    ratio = d1 / d2.clamp_min(1e-300)
    baseline = float("nan")
    if baseline_points and y.shape[0] >= 3:
        k = min(check_positive_int("baseline_points", baseline_points), y.shape[0])
        idx = torch.randperm(y.shape[0], generator=as_generator(seed))
        yy = y[idx]  # the chosen points first, so that row i of yy[:k] is training point i
        b1, b2 = two_nearest(yy[:k], yy, chunk, exclude_self=True)
        baseline = float(memorized(b1, b2, criterion).double().mean())
    return Memorization(float(mask.double().mean()), baseline, s.shape[0], y.shape[0],
                        float(criterion), float(ratio.median()))
