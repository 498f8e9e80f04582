"""Two-sample tests with the power to see a bad sampler: permutation p-values, k-NN precision
and recall, and a variance ratio.

A distance beside its noise floor says how far the samples are; whether that is farther than
chance is a test. For samples x (n, d) and a reference y (m, d) of the true distribution and a
statistic T(x, y) (a distance, or a score), the permutation test pools the n + m points and
recomputes T on ``B`` random splits into n and m points; under the null (x and y from one
distribution, points exchangeable) the observed T is one more draw of the same law, so

    p = (1 + #{b : T_b >= T}) / (1 + B)

is a valid p-value at every B (it is never below 1 / (1 + B), so p < 0.01 needs B >= 100;
the default B = 499 leaves room for 4 exceedances). "greater" counts larger T as evidence
(distances), "less" smaller T (precision, recall), "two-sided" larger |T| (the log variance
ratio). Every pooled quantity that does not depend on the split (the distance matrix, sliced
projections) is computed once.

Statistics (:data:`STATISTICS`):

- ``w2``, ``w1``, ``sliced``, ``sinkhorn``: the distances of :mod:`flows.evaluation.distances`
  (sinkhorn re-solves three entropic problems per split: slow, give a small B).
- ``energy``: the energy distance 2 E||X - Y|| - E||X - X'|| - E||Y - Y'|| (V-statistic),
  a metric on distributions that sees shifts and scale changes cheaply.
- ``hotelling``: the ridge Hotelling statistic (x_bar - y_bar)^T (S + r I)^-1 (x_bar - y_bar),
  S the covariance of the pool (the same for every split) and r = tr(S) / d: a mean shift
  weighted by how little the data vary in its direction, so a shift along a direction in which
  the data hardly vary (constant pixels, thin directions of a manifold) is seen although it is
  small in distance.
- ``precision``, ``recall``: k-NN precision and recall (Kynkaanniemi et al., 2019, "Improved
  precision and recall metric for assessing generative models", NeurIPS): the reference
  manifold is the union of balls around each reference point of radius its distance to its
  k-th nearest other reference point; precision is the fraction of samples inside it, recall the
  fraction of reference points inside the samples' manifold (built the same way). A sampler
  that collapses (shrinks, drops modes) loses recall; one that invents points loses precision.
  Identical sets score 1 and 1.
- ``variance``: log(tr Cov(x) / tr Cov(y)), 0 for matching total variance; a sampler shrunk by
  s toward its mean scores 2 log s.
- ``bins``: Pearson's chi-square of the 2 x K table of how many samples and reference points
  fall in each of K = :data:`BINS` k-means cells of the pool (the cells are fitted once on the
  pooled points, seeded, so they are the same for every split); the binning test of Richardson
  and Weiss (2018, "On GANs and GMMs", NeurIPS) that sees a sampler dropping or thinning a mode.
- ``classes``: the same chi-square on the 2 x 10 table of the classes that the stored feature
  classifier of :mod:`flows.evaluation.features` predicts (image data of dimension 64, 196 or
  784 only): a sampler that drops or thins a digit class changes one column of the table by
  about a tenth of the samples, which the class labels see directly where k-means cells of the
  raw pixels, fitted to the pool, split that class among cells shared with others. The
  classifier is a fixed function of each point, so the permutation p-value stays valid.
- ``fd``: the classifier-feature Frechet distance (:func:`flows.evaluation.features.
  frechet_distance` of the features of the same classifier; image data only).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import ot
import torch

from _runkit.results import Result

from ..errors import (
    FlowsError,
    as_generator,
    check_choice,
    check_int,
    check_positive_int,
    numpy_rng,
)
from .copying import kmeans_cells
from .distances import _emd2_checked, _pair
from .entropic import sinkhorn_result

__all__ = ["PermutationTest", "STATISTICS", "permutation_test", "two_sample_statistic"]

STATISTICS = ("w2", "w1", "sinkhorn", "sliced", "energy", "hotelling", "precision", "recall",
              "variance", "bins", "classes", "fd")
"""Statistics :func:`permutation_test` knows by name."""

ALTERNATIVE = {"w2": "greater", "w1": "greater", "sinkhorn": "greater", "sliced": "greater",
               "energy": "greater", "hotelling": "greater", "precision": "less", "recall": "less",
               "variance": "two-sided", "bins": "greater", "classes": "greater",
               "fd": "greater"}
"""The direction in which each named statistic shows a defect."""

BINS = 20
"""k-means cells of the pool behind the ``bins`` statistic."""

MAX_POOLED_BYTES = 1 << 30
"""Largest pooled (n + m) x (n + m) float64 distance matrix a test may allocate."""

Split = Callable[[np.ndarray, np.ndarray], float]
"""A statistic of one split: indices of the samples and of the reference in the pool."""


@dataclass(frozen=True)
class PermutationTest(Result):
    """Result of :func:`permutation_test`.

    Attributes
    ----------
    statistic : str
    value : float
        T(x, y) on the observed split.
    p_value : float
        (1 + #{T_b at least as extreme}) / (1 + B).
    permutations : int
        B.
    null_mean, null_std : float
        Mean and standard deviation (ddof = 1) of T over the B permuted splits.
    alternative : str
        "greater", "less" or "two-sided".
    """

    statistic: str
    value: float
    p_value: float
    permutations: int
    null_mean: float
    null_std: float
    alternative: str

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def _pooled(x, y) -> tuple[np.ndarray, int]:
    """The checked pool ``(n + m, d)`` float64 (samples first) and n."""
    a, b, _, _ = _pair(x, y)
    rows = a.shape[0] + b.shape[0]
    if 8 * rows * rows > MAX_POOLED_BYTES:
        raise FlowsError(f"a two-sample test between {a.shape[0]} and {b.shape[0]} points needs "
                         f"a {8 * rows * rows / 2**30:.1f} GiB distance matrix; at most "
                         f"{MAX_POOLED_BYTES / 2**30:.0f} GiB is allowed: subsample the clouds")
    return np.concatenate([a, b]), a.shape[0]


def _knn_radii(dist: np.ndarray, k: int) -> np.ndarray:
    """Distance of each point to its k-th nearest OTHER point of the same set, dist (r, r)."""
    if dist.shape[0] <= k:
        raise FlowsError(f"k={k} nearest neighbours need more than {k} points per set; got "
                         f"{dist.shape[0]}")
    return np.partition(dist, k, axis=1)[:, k]  # column 0 of the sorted row is the point itself


def _coverage(dist_ab: np.ndarray, radii_b: np.ndarray) -> float:
    """Fraction of the rows a within the union of balls (centres b, radii_b); dist_ab (r, s)."""
    return float((dist_ab <= radii_b[None, :]).any(axis=1).mean())


def _sliced_split(pa: np.ndarray, pb: np.ndarray) -> float:
    """sqrt(mean over projections of W2^2 of the 1-D projections pa (r, L), pb (s, L))."""
    if pa.shape[0] == pb.shape[0]:  # equal sizes: the sorted points are matched in order
        return math.sqrt(float(np.mean(np.square(np.sort(pa, 0) - np.sort(pb, 0)))))
    return math.sqrt(float(np.mean(ot.lp.wasserstein_1d(pa, pb, p=2))))


def _chi_square(la: np.ndarray, lb: np.ndarray, bins: int) -> float:
    """Pearson's chi-square of the 2 x bins table of cell counts of two label sets."""
    table = np.stack([np.bincount(la, minlength=bins), np.bincount(lb, minlength=bins)])
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    keep = expected > 0
    return float((np.square(table - expected)[keep] / expected[keep]).sum())


def _split_fn(name: str, z: np.ndarray, n: int, k: int, seed: int, reg: float = 0.05) -> Split:
    """T(z[ia], z[ib]) for the named statistic, with the pooled quantities computed once."""
    if name == "sinkhorn":  # a split whose solve stops short is counted at its number
        return lambda ia, ib: sinkhorn_result(z[ia], z[ib], reg).value
    if name == "variance":
        def variance(ia, ib):
            return math.log(z[ia].var(0, ddof=1).sum() / max(z[ib].var(0, ddof=1).sum(), 1e-300))
        return variance
    if name == "bins":
        lab, bins = bin_labels(z, seed)
        return lambda ia, ib: _chi_square(lab[ia], lab[ib], bins)
    if name in ("classes", "fd"):
        return _classifier_split(name, z)
    if name == "hotelling":
        weight = hotelling_weight(z)

        def hotelling(ia, ib):
            delta = z[ia].mean(0) - z[ib].mean(0)
            return float(delta @ weight @ delta)
        return hotelling
    if name == "sliced":
        proj = sliced_projections(z, seed)
        return lambda ia, ib: _sliced_split(proj[ia], proj[ib])
    sq = ot.dist(z, z)
    if name == "w2":
        return lambda ia, ib: math.sqrt(max(_emd2_checked(
            np.full(len(ia), 1 / len(ia)), np.full(len(ib), 1 / len(ib)),
            sq[np.ix_(ia, ib)], 10_000_000), 0.0))
    dist = np.sqrt(sq)
    if name == "w1":
        return lambda ia, ib: _emd2_checked(np.full(len(ia), 1 / len(ia)),
                                            np.full(len(ib), 1 / len(ib)),
                                            dist[np.ix_(ia, ib)], 10_000_000)
    if name == "energy":
        return lambda ia, ib: float(2 * dist[np.ix_(ia, ib)].mean() - dist[np.ix_(ia, ia)].mean()
                                    - dist[np.ix_(ib, ib)].mean())
    if name == "precision":
        return lambda ia, ib: _coverage(dist[np.ix_(ia, ib)], _knn_radii(dist[np.ix_(ib, ib)], k))
    return lambda ia, ib: _coverage(dist[np.ix_(ib, ia)], _knn_radii(dist[np.ix_(ia, ia)], k))


def _classifier_split(name: str, z: np.ndarray) -> Split:
    """The ``classes`` or ``fd`` statistic of image points z (r, d) (see the module)."""
    from .features import CLASSES, frechet_distance, image_features

    feats = image_features(z)  # refuses dimensions without a classifier
    if name == "fd":
        return lambda ia, ib: frechet_distance(feats[ia], feats[ib])
    lab = class_labels(z, feats)
    return lambda ia, ib: _chi_square(lab[ia], lab[ib], CLASSES)


def class_labels(z: np.ndarray, feats: np.ndarray | None = None) -> np.ndarray:
    """The stored feature classifier's predicted class of each image z (r, d), shape (r,)
    (``feats``: their features, when already computed)."""
    from .features import FEATURE_DATA, feature_classifier, image_features

    feats = image_features(z) if feats is None else feats
    model, _ = feature_classifier(FEATURE_DATA[z.shape[1]])
    with torch.no_grad():
        return model.head(torch.from_numpy(feats).float()).argmax(1).numpy()


def bin_labels(z: np.ndarray, seed: int) -> tuple[np.ndarray, int]:
    """The ``bins`` statistic's k-means cell of each pooled point z (r, d) and the number of
    cells (min(:data:`BINS`, r), fitted once on the pool, seeded)."""
    zt = torch.from_numpy(z)
    cells = kmeans_cells(zt, min(BINS, z.shape[0]), seed)
    return torch.cdist(zt, cells).argmin(1).numpy(), int(cells.shape[0])


def hotelling_weight(z: np.ndarray) -> np.ndarray:
    """(S + r I)^-1 of the ``hotelling`` statistic: S the pool's covariance, r = tr(S) / d."""
    cov = np.atleast_2d(np.cov(z.T))
    return np.linalg.inv(cov + max(np.trace(cov) / z.shape[1], 1e-12) * np.eye(z.shape[1]))


def sliced_projections(z: np.ndarray, seed: int) -> np.ndarray:
    """The pool z (r, d) on the 500 seeded directions of the ``sliced`` statistic, (r, 500)."""
    return z @ ot.sliced.get_random_projections(z.shape[1], 500, np.random.RandomState(seed))


def two_sample_statistic(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
                         statistic: str, k: int = 3, seed: int = 0) -> float:
    """T(x, y) for a statistic of :data:`STATISTICS` (see the module docstring).

    Parameters
    ----------
    x : array, shape (n, d)
        Samples.
    y : array, shape (m, d)
        Reference.
    statistic : str
    k : int
        Neighbour of the k-NN radii (precision, recall).
    seed : int
        Projections of ``sliced``.

    Returns
    -------
    float

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.randn(200, 2, generator=g)
    >>> two_sample_statistic(y, y, "precision"), two_sample_statistic(y, y, "recall")
    (1.0, 1.0)
    >>> round(two_sample_statistic(0.5 * y, y, "variance"), 4)  # 2 log 0.5
    -1.3863
    """
    check_choice("statistic", statistic, STATISTICS)
    z, n = _pooled(x, y)
    fn = _split_fn(statistic, z, n, check_positive_int("k", k), check_int("seed", seed))
    return fn(np.arange(n), np.arange(n, z.shape[0]))


def permutation_test(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
                     statistic: str | Callable[[np.ndarray, np.ndarray], float] = "w2",
                     permutations: int = 499, seed: int = 0, k: int = 3,
                     reg: float = 0.05) -> PermutationTest:
    """Permutation two-sample test of ``statistic`` between samples and a reference.

    p = (1 + #{b : T_b at least as extreme as T}) / (1 + B), T_b the statistic on the b-th of
    B uniformly random splits of the pooled n + m points into n and m (the direction is
    :data:`ALTERNATIVE` of the statistic). Valid at every B under exchangeability.

    Parameters
    ----------
    x : array, shape (n, d)
        Samples.
    y : array, shape (m, d)
        Reference (true data).
    statistic : str or callable
        One of :data:`STATISTICS`, or a function (x (n, d), y (m, d)) -> float of float64
        arrays in which larger values are the evidence (a distance).
    permutations : int
        B, >= 1.
    seed : int
        Seed of the splits (and of the sliced projections).
    k : int
        Neighbour of the k-NN radii (precision, recall).
    reg : float
        Relative regularisation of ``sinkhorn``.

    Returns
    -------
    PermutationTest

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.randn(100, 2, generator=g)
    >>> permutation_test(torch.randn(100, 2, generator=g) + 1.0, y, "energy", 99).p_value
    0.01
    >>> permutation_test(torch.randn(100, 2, generator=g), y, "energy", 99).p_value > 0.05
    True
    """
    permutations = check_positive_int("permutations", permutations)
    seed = check_int("seed", seed)
    z, n = _pooled(x, y)
    if callable(statistic):
        user, name, alt = statistic, getattr(statistic, "__name__", "statistic"), "greater"

        def fn(ia, ib):
            return float(user(z[ia], z[ib]))
    else:
        check_choice("statistic", statistic, STATISTICS)
        name, alt = statistic, ALTERNATIVE[statistic]
        fn = _split_fn(statistic, z, n, check_positive_int("k", k), seed, reg)
    observed = fn(np.arange(n), np.arange(n, z.shape[0]))
    rng = numpy_rng(as_generator(seed))
    null = np.empty(permutations)
    for b in range(permutations):
        perm = rng.permutation(z.shape[0])
        null[b] = fn(perm[:n], perm[n:])
    std = float(null.std(ddof=1)) if permutations > 1 else 0.0
    return PermutationTest(name, float(observed), permutation_p_value(observed, null, alt),
                           permutations, float(null.mean()), std, alt)


def permutation_p_value(observed: float, null: np.ndarray, alternative: str,
                        rtol: float = 0.0) -> float:
    """(1 + #{b : T_b at least as extreme as T}) / (1 + B) for the null values (B,).

    ``rtol`` counts a T_b within rtol |T| of T as extreme too (a statistic computed two ways
    may differ in its last bits; counting such ties keeps the p-value valid).

    Examples
    --------
    >>> permutation_p_value(3.0, np.array([1.0, 3.0, 5.0]), "greater")
    0.75
    >>> permutation_p_value(0.2, np.array([0.5, 0.9, 0.1]), "less")
    0.5
    """
    tol = rtol * abs(observed)
    extreme = {"greater": null >= observed - tol, "less": null <= observed + tol,
               "two-sided": np.abs(null) >= abs(observed) - tol}[alternative]
    return float((1 + extreme.sum()) / (1 + null.size))
