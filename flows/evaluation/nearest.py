"""Memorization of generated samples, judged against the whole training set.

A sample g is memorized when its nearest training point is much closer than its second
nearest: ||g - y_(1)|| < c ||g - y_(2)||. The diffusion-memorization literature uses c = 1/3
(e.g. Yoon et al., 2023; Gu et al., 2023). The value reported is the fraction of samples
memorized. The training set is never subsampled: the two nearest neighbours are found among
all n training points, in chunks, so 20,000+ points take memory chunk x n only.

The null, and why c = 1/3 alone does not do in low dimension. For a sample of the data
distribution itself (a perfect, non-memorizing sampler) and a locally uniform density of
intrinsic dimension D at the neighbour scale, (d_1 / d_2)^D is uniform on [0, 1]: a fresh
point is flagged with probability c^D, 11% in 2-D for c = 1/3 (3.7% in 3-D, nothing
measurable for images). A fixed ratio therefore calls a tenth of an ideal 2-D sampler's output
memorized. :func:`memorization` calibrates the ratio to the null instead (the default,
``criterion="calibrated"``):

- the leave-one-out ratios r_i = d_1 / d_2 of training points (each against the other n - 1)
  are an i.i.d. sample of that null; D is estimated from them by maximum likelihood,
  D = N / sum_i (-log r_i) (the TWO-NN estimator, Facco et al., 2017, Sci. Rep. 7, 12140);
- c = min(1/3, alpha^{1/D_lo}) with ``null_rate`` alpha (2% by default) and D_lo =
  D (1 - 2 / sqrt(N)) the lower end of D's 95% interval (its relative standard error is
  N^{-1/2}), so a fresh sample of the data distribution is flagged with probability at most
  about alpha even when few training points estimate D, and never with a looser ratio than the
  literature's: where 3^{-D} < alpha (images, D >~ 4) c stays 1/3.

Measured (20 training sets each of moons, spirals, circles, swissroll, 8gaussians, normal;
1,500 fresh points): at n = 2,000 the fresh flag rate is 1.5-1.8% on average (at most 2.8%);
at n = 50 it is 0.2-0.9% on average, at most 5.2% (normal); with D itself instead of D_lo the
average is 2% but one n = 50 training set in five flags more than 5%.

A sample that coincides with a training point (d_1 = 0) is memorized whatever c. The result
also carries the fraction at the literature's fixed 1/3 and, as ``baseline``, the fraction of
the leave-one-out training points under the ratio used (what an i.i.d. sample scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from _runkit.results import Result

from ..errors import FlowsError, as_generator, check_finite, check_positive, check_positive_int

__all__ = ["Memorization", "NULL_RATE", "memorization"]

CRITERION = 1.0 / 3.0
"""The literature's fixed ratio, and the loosest ratio the calibration uses."""

NULL_RATE = 0.02
"""Default probability that a fresh sample of the data distribution is flagged."""


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
    """Boolean mask d1 < criterion * d2, or d1 = 0 (shapes (N,)).

    A sample on a training point (d1 = 0) is memorized whatever the criterion.

    Examples
    --------
    >>> memorized(torch.tensor([0.0, 0.1, 0.5]), torch.tensor([1.0, 1.0, 1.0]), 0.2).tolist()
    [True, True, False]
    """
    return (d1 < check_positive("criterion", criterion) * d2) | (d1 == 0)


def null_dimension(ratios: torch.Tensor) -> float:
    """Maximum-likelihood intrinsic dimension D from null ratios r = d_1 / d_2 in (0, 1].

    Under a locally uniform density of dimension D, -log r ~ Exp(D), so
    D = N / sum_i (-log r_i) (the TWO-NN estimator; its relative standard error is N^{-1/2}).
    Ratios of exactly 0 (duplicate points) are ignored.

    Examples
    --------
    >>> u = torch.rand(20_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> round(null_dimension(u ** (1 / 3)), 1)  # r^3 uniform: D = 3
    3.0
    """
    r = torch.as_tensor(ratios, dtype=torch.float64)
    r = r[r > 0]
    if r.numel() == 0:
        raise FlowsError("no positive neighbour ratio to estimate the null dimension from")
    s = float((-r.clamp_max(1.0).log()).sum())
    return math.inf if s == 0 else r.numel() / s


def calibrated_criterion(dimension: float, null_rate: float = NULL_RATE,
                         cap: float = CRITERION) -> float:
    """min(cap, null_rate^(1 / D)): the ratio a fresh null sample falls below with
    probability null_rate (at most the literature's 1/3).

    Examples
    --------
    >>> round(calibrated_criterion(2.0, 0.04), 3)  # sqrt(0.04)
    0.2
    >>> calibrated_criterion(64.0)  # images: the literature's 1/3 already has a null rate ~ 0
    0.3333333333333333
    """
    null_rate = check_positive("null_rate", null_rate)
    if null_rate >= 1:
        raise FlowsError(f"null_rate={null_rate!r} is not allowed; it must lie in (0, 1)")
    if not dimension > 0:  # inf (all ratios 1) is allowed: every ratio is then the cap
        raise FlowsError(f"dimension={dimension!r} is not allowed; it must be > 0")
    return min(check_positive("cap", cap), null_rate ** (1.0 / dimension))


@dataclass(frozen=True)
class Memorization(Result):
    """Fraction of samples memorized against the whole training set, beside its null.

    Attributes
    ----------
    fraction : float
        Fraction of samples with d1 < criterion * d2 (or d1 = 0).
    baseline : float
        The same fraction for the leave-one-out training points (each against the other
        n - 1): what an i.i.d. sample of the training distribution scores; nan when not computed.
    n_samples, n_train : int
        Samples judged; distinct training points.
    criterion : float
        The ratio used (calibrated, or as given).
    median_ratio : float
        Median of d1 / d2 over the samples.
    fraction_fixed : float
        The fraction at the literature's fixed ratio 1/3 (about 3^-D for a fresh sample).
    null_dimension : float
        D estimated from the leave-one-out ratios (maximum likelihood; the criterion uses the
        lower end of its interval); nan when not computed.
    null_rate : float or None
        Target null rate of the calibration (None for a given criterion).
    null_points : int
        Leave-one-out training points behind ``baseline`` and ``null_dimension``.
    """

    fraction: float
    baseline: float
    n_samples: int
    n_train: int
    criterion: float
    median_ratio: float
    fraction_fixed: float = math.nan
    null_dimension: float = math.nan
    null_rate: float | None = None
    null_points: int = 0

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return dict(self.__dict__)


def memorization(samples: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                 criterion: float | str = "calibrated", null_rate: float = NULL_RATE,
                 null_points: int = 2000, seed: int | torch.Generator = 0,
                 chunk: int = 2048) -> Memorization:
    """Fraction of samples whose nearest training point is closer than criterion x the second.

    value = (1/N) sum_i 1[d_1(g_i) < c d_2(g_i)], d_k the distance to the k-th nearest of all
    n training points. With ``criterion="calibrated"``, c = min(1/3, null_rate^(1/D_lo)), D_lo
    the lower end of the 95% interval of the intrinsic dimension D estimated from the
    leave-one-out ratios of ``null_points`` randomly chosen training points (see the module
    docstring); a number is used as c directly.

    Parameters
    ----------
    samples : array, shape (N, d)
    train : array, shape (n, d)
        The whole training set (never subsampled). Exact duplicate rows are merged first, so a
        copy of a duplicated training point still counts as memorized.
    criterion : "calibrated" or float
        Ratio threshold c.
    null_rate : float
        Target flag rate of a fresh sample of the data distribution (calibration), in (0, 1).
    null_points : int
        Training points in the leave-one-out null (at most n; 0: none, only with a numeric
        criterion; ``baseline`` and ``null_dimension`` are then nan).
    seed : int or torch.Generator
        Choice of the null points.
    chunk : int
        Rows per distance block.

    Returns
    -------
    Memorization

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> train = torch.randn(2000, 2, generator=g)
    >>> memorization(train[:100] + 1e-4, train).fraction  # near-copies of training points
    1.0
    >>> fresh = memorization(torch.randn(2000, 2, generator=g), train)
    >>> fresh.fraction < 0.05 < fresh.fraction_fixed  # 1/3 flags ~ 1/9 of a fresh 2-D sample
    True
    """
    s = _points(samples, "samples")
    y = torch.unique(_points(train, "train"), dim=0)
    calibrate, criterion, k = _checked_criterion(criterion, null_points, y.shape[0])
    d1, d2 = two_nearest(s, y, chunk)
    baseline, rate = math.nan, None
    loo, dim = _leave_one_out(y, k, seed, chunk, calibrate)
    if calibrate:
        rate = check_positive("null_rate", null_rate)
        criterion = calibrated_criterion(dim * max(0.1, 1.0 - 2.0 / math.sqrt(k)), null_rate)
    if loo is not None:
        baseline = float(memorized(*loo, criterion).double().mean())
    ratio = d1 / d2.clamp_min(1e-300)
    return Memorization(float(memorized(d1, d2, criterion).double().mean()), baseline,
                        s.shape[0], y.shape[0], float(criterion), float(ratio.median()),
                        float(memorized(d1, d2, CRITERION).double().mean()), dim, rate, k)


def _checked_criterion(criterion: float | str, null_points: int, distinct: int
                       ) -> tuple[bool, float | str, int]:
    """Whether the criterion is calibrated, the checked numeric criterion (else
    ``'calibrated'``) and the number of null points (at most the ``distinct`` training points);
    :class:`FlowsError` for a bad criterion, or calibration without null points."""
    calibrate = isinstance(criterion, str)
    if calibrate and criterion != "calibrated":
        raise FlowsError(f"criterion={criterion!r} is not allowed; give 'calibrated' or a "
                         "positive number")
    if not calibrate:
        criterion = check_positive("criterion", criterion)
    k = 0
    if null_points:
        k = min(check_positive_int("null_points", null_points), distinct)
    elif calibrate:
        raise FlowsError("null_points=0 leaves nothing to calibrate the criterion on; give "
                         "null_points >= 3 or a numeric criterion")
    return calibrate, criterion, k


def _leave_one_out(y: torch.Tensor, k: int, seed: int | torch.Generator, chunk: int,
                   calibrate: bool) -> tuple[tuple | None, float]:
    """The two nearest other training points of ``k`` random training points ``(d1, d2)``
    (None when ``k`` is 0 or there are fewer than 3 points) and the null dimension they give
    (NaN without them); :class:`FlowsError` when calibrating needs them and they are missing."""
    if k >= 1 and y.shape[0] >= 3:
        idx = torch.randperm(y.shape[0], generator=as_generator(seed))
        yy = y[idx]  # the chosen points first, so that row i of yy[:k] is training point i
        b1, b2 = two_nearest(yy[:k], yy, chunk, exclude_self=True)
        return (b1, b2), null_dimension(b1 / b2)
    if calibrate:
        raise FlowsError(f"train has {y.shape[0]} distinct points; calibrating the criterion "
                         "needs at least 3")
    return None, math.nan
