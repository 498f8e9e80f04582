"""One evaluation verdict: every two-sample test that applies, Holm's correction, pass or fail.

A single test answers one question: ``classes`` sees a dropped digit and misses noise images,
``hotelling`` and ``precision`` see noise images and miss a dropped digit. :func:`evaluate_all`
runs the whole family on one set of permutations and decides once:

- against the reference (any data): ``energy``, ``sliced``, ``hotelling``, ``precision``,
  ``recall``, ``variance``, ``bins`` (:mod:`flows.evaluation.twosample`);
- images of a data set with a stored classifier (dimension 64, 196, 784): also ``classes`` and
  ``fd``;
- with the training set (and held-out points as the reference): ``memorization``, the fraction
  of samples whose nearest training point is closer than c times the second nearest (the
  calibrated c of :mod:`flows.evaluation.nearest`) minus the same fraction of the held-out
  points; each point's flag is a fixed function of it, so the permutation p-value is valid
  (``flows eval --metric memorization`` reports the fraction itself); and ``copying``, Meehan
  et al.'s data-copying z with its own p-value Phi(z) (:mod:`flows.evaluation.copying`).

Left out: the three optimal-transport distances ``w2``, ``w1`` and ``sinkhorn``. Their
permutation tests solve an assignment or an entropic problem on every split (60-360 ms at 300
against 300 points on one core, against 0.01-8 ms a split for the family's statistics evaluated
on blocks of splits, and the family needs about 2,000 splits). On the digits of
``bench/eval_power.py`` the family misses one defect in 65 verdicts (a dropped digit 1), and W2
misses it too (alone and uncorrected, W2 flags the dropped class in 2 of 5 repetitions, the
family in 4 of 5); W1 and Sinkhorn were not measured.

Every permutation p-value is (1 + #{T_b at least as extreme as T}) / (1 + B), with the B
splits drawn as :func:`flows.evaluation.twosample.permutation_test` draws them (same seed, same
splits), the statistics evaluated on blocks of splits at once. Holm's step-down correction
controls the family-wise error at ``alpha`` under any dependence between the tests: with the
p-values sorted, p_(1) <= ... <= p_(K), the adjusted p_(i) = max_{j <= i} min(1, (K - j + 1)
p_(j)), and a test is flagged when its adjusted p-value is <= alpha. A permutation p-value is
never below 1 / (1 + B), so Holm can flag anything only when 1 / (1 + B) <= alpha / K:
:func:`evaluate_all` refuses fewer permutations than that. The verdict is "fail" when any test
is flagged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import ot
import torch

from _runkit import Result

from ..errors import FlowsError, as_generator, check_int, check_positive_int, numpy_rng
from .copying import data_copying
from .nearest import NULL_RATE, memorization, memorized, two_nearest
from .twosample import (
    ALTERNATIVE,
    _knn_radii,
    _pooled,
    _split_fn,
    bin_labels,
    class_labels,
    hotelling_weight,
    permutation_p_value,
    sliced_projections,
)

__all__ = ["Verdict", "evaluate_all", "family", "holm"]

REFERENCE_TESTS = ("energy", "sliced", "hotelling", "precision", "recall", "variance", "bins")
"""Tests against the reference that apply to any data."""

IMAGE_TESTS = ("classes", "fd")
"""Tests that need the stored classifier of the images' data set."""

TRAIN_TESTS = ("memorization", "copying")
"""Tests against the training set (held-out points as the reference)."""

ALPHA = 0.01
"""Default family-wise level."""

PERMUTATIONS = 1999
"""Default B: p-values down to 1 / 2000, below alpha / K for K up to 20 tests at 0.01."""

BLOCK = 64
"""Splits evaluated at once."""

RTOL = 1e-9
"""Relative tolerance of ties between a statistic on the observed and on a permuted split."""

Batch = Callable[[np.ndarray], np.ndarray]
"""A statistic on a block of splits: masks (b, n + m) of the samples' rows -> values (b,)."""


def family(dim: int, with_train: bool = False) -> tuple[str, ...]:
    """The tests that apply to data of dimension ``dim`` (with a training set or not).

    Examples
    --------
    >>> family(2)
    ('energy', 'sliced', 'hotelling', 'precision', 'recall', 'variance', 'bins')
    >>> family(64, with_train=True)[-4:]
    ('classes', 'fd', 'memorization', 'copying')
    """
    from .features import FEATURE_DATA

    return (REFERENCE_TESTS + (IMAGE_TESTS if dim in FEATURE_DATA else ())
            + (TRAIN_TESTS if with_train else ()))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()  # sorted 0.01, 0.03, 0.04: 0.03, 0.06, max(0.06, 0.04)
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    k = p.size
    steps = np.minimum(1.0, (k - np.arange(k)) * p[order])
    adjusted = np.empty(k)
    adjusted[order] = np.maximum.accumulate(steps)
    return adjusted


def _chi_square_rows(counts_a: np.ndarray, totals: np.ndarray, n: int, m: int) -> np.ndarray:
    """Pearson's chi-square of the 2 x K tables [counts_a; totals - counts_a], one per row of
    counts_a (b, K): :func:`flows.evaluation.twosample._chi_square` on a block."""
    total = n + m
    exp_a, exp_b = n * totals / total, m * totals / total
    keep = totals > 0
    da = np.square(counts_a - exp_a)[:, keep] / exp_a[keep]
    db = np.square(totals - counts_a - exp_b)[:, keep] / exp_b[keep]
    return da.sum(1) + db.sum(1)


def _counts(labels: np.ndarray, size: int, n: int, m: int) -> Batch:
    onehot = np.eye(size)[labels]
    totals = onehot.sum(0)
    return lambda masks: _chi_square_rows(masks @ onehot, totals, n, m)


def _distances(z: np.ndarray, shared: dict) -> np.ndarray:
    """The pool's Euclidean distance matrix (r, r), computed once per ``shared`` dict."""
    if "dist" not in shared:
        shared["dist"] = np.sqrt(ot.dist(z, z))
    return shared["dist"]


def _energy(z: np.ndarray, n: int, m: int, shared: dict) -> Batch:
    dist = _distances(z, shared)
    row, total = dist.sum(1), dist.sum()

    def energy(masks):
        s = masks.astype(np.float64)
        saa = ((s @ dist) * s).sum(1)
        sab = s @ row - saa
        sbb = total - 2 * (s @ row) + saa
        return 2 * sab / (n * m) - saa / n**2 - sbb / m**2
    return energy


def _moments(z: np.ndarray, n: int, m: int, name: str) -> Batch:
    """``hotelling`` or ``variance`` from the split sums of z and ||z||^2."""
    col, sq = z.sum(0), np.square(z).sum(1)
    weight = hotelling_weight(z) if name == "hotelling" else None

    def stat(masks):
        s = masks.astype(np.float64)
        sa = s @ z
        mean_a, mean_b = sa / n, (col - sa) / m
        if weight is not None:
            delta = mean_a - mean_b
            return np.einsum("bi,ij,bj->b", delta, weight, delta)
        qa = s @ sq
        var_a = (qa - n * np.square(mean_a).sum(1)) / (n - 1)
        var_b = (sq.sum() - qa - m * np.square(mean_b).sum(1)) / (m - 1)
        return np.log(var_a / np.maximum(var_b, 1e-300))
    return stat


def _sliced(z: np.ndarray, n: int, m: int, seed: int) -> Batch | None:
    """Equal sizes: each split's sorted projections read from the pool's sorted columns."""
    if n != m:
        return None
    proj = sliced_projections(z, seed)
    order = np.ascontiguousarray(np.argsort(proj, 0, kind="stable").T)  # (L, r)
    ordered = np.take_along_axis(proj.T, order, 1)  # each projection sorted

    def sliced(masks):
        out = np.empty(masks.shape[0])
        for i, mask in enumerate(masks):
            inside = mask[order]  # (L, r): which sorted values belong to the samples
            a = ordered[inside].reshape(-1, n)
            b = ordered[~inside].reshape(-1, m)
            out[i] = math.sqrt(float(np.square(a - b).mean()))
        return out
    return sliced


def _coverage(z: np.ndarray, k: int, name: str, shared: dict) -> Batch:
    """``precision`` (samples within the reference's k-NN balls) or ``recall`` (the reverse),
    the k-th neighbour read from each point's sorted distances to the pool."""
    dist = _distances(z, shared)
    if "order" not in shared:
        shared["order"] = np.argsort(dist, 1, kind="stable")
        shared["ordered"] = np.take_along_axis(dist, shared["order"], 1)
    order, ordered = shared["order"], shared["ordered"]

    def radii(rows: np.ndarray, member: np.ndarray) -> np.ndarray:
        count = np.cumsum(member[order[rows]], 1)  # members among the nearest, self included
        return ordered[rows, np.argmax(count >= k + 1, 1)]

    def coverage(masks):
        out = np.empty(masks.shape[0])
        for i, mask in enumerate(masks):
            a, b = np.flatnonzero(mask), np.flatnonzero(~mask)
            if name == "recall":
                a, b, mask = b, a, ~mask
            r = radii(b, ~mask)
            out[i] = float((dist[np.ix_(a, b)] <= r[None, :]).any(1).mean())
        return out
    return coverage


def _split_loop(fn) -> Batch:
    """Any split statistic of :func:`flows.evaluation.twosample._split_fn` on a block."""
    return lambda masks: np.array([fn(np.flatnonzero(s), np.flatnonzero(~s)) for s in masks])


def batched_statistic(name: str, z: np.ndarray, n: int, k: int = 3, seed: int = 0,
                      shared: dict | None = None) -> Batch:
    """The two-sample statistic ``name`` of :mod:`flows.evaluation.twosample` on blocks of
    splits of the pool z (n + m, d) (samples: the rows where a mask is True), equal to
    :func:`~flows.evaluation.twosample.two_sample_statistic` on each split up to rounding.
    ``shared`` (a dict, filled on first use) lets several statistics of one pool share its
    distance matrix and each row's sorted distances.

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> z = g.standard_normal((40, 3))
    >>> mask = np.arange(40) < 20
    >>> from flows.evaluation.twosample import two_sample_statistic
    >>> fast = batched_statistic("energy", z, 20)(mask[None])[0]
    >>> bool(np.isclose(fast, two_sample_statistic(z[:20], z[20:], "energy")))
    True
    """
    m = z.shape[0] - n
    shared = {} if shared is None else shared
    if name == "energy":
        return _energy(z, n, m, shared)
    if name in ("hotelling", "variance"):
        return _moments(z, n, m, name)
    if name == "bins":
        return _counts(*bin_labels(z, seed), n, m)
    if name == "classes":
        from .features import CLASSES

        return _counts(class_labels(z), CLASSES, n, m)
    if name in ("precision", "recall"):
        if min(n, m) <= k:
            _knn_radii(np.zeros((min(n, m), min(n, m))), k)  # the usual error
        return _coverage(z, k, name, shared)
    fast = _sliced(z, n, m, seed) if name == "sliced" else None
    return fast if fast is not None else _split_loop(_split_fn(name, z, n, k, seed))


def permutation_masks(rows: int, n: int, permutations: int, seed: int):
    """Blocks (b, rows) of boolean masks of the samples' rows in the B random splits that
    :func:`flows.evaluation.twosample.permutation_test` draws with this seed."""
    rng = numpy_rng(as_generator(seed))
    done = 0
    while done < permutations:
        b = min(BLOCK, permutations - done)
        masks = np.zeros((b, rows), dtype=bool)
        for i in range(b):
            masks[i, rng.permutation(rows)[:n]] = True
        done += b
        yield masks


@dataclass(frozen=True)
class VerdictRow(Result):
    """One test of the family.

    Attributes
    ----------
    test : str
    value : float
        The statistic on the samples against the reference (``copying``: z).
    null_mean : float or None
        Its mean over the permuted splits: what an i.i.d. sample reads (None for ``copying``).
    p_value : float
        The permutation p-value (``copying``: Phi(z)).
    p_holm : float
        Holm-adjusted p-value.
    flagged : bool
        ``p_holm <= alpha``.
    alternative : str
        The direction that counts as a defect.
    """

    test: str
    value: float
    null_mean: float | None
    p_value: float
    p_holm: float
    flagged: bool
    alternative: str


@dataclass(frozen=True)
class Verdict(Result):
    """:func:`evaluate_all`: the table and the one verdict.

    Attributes
    ----------
    metric : str
        "all".
    verdict : str
        "fail" when any test is flagged at family-wise level ``alpha``, else "pass".
    alpha : float
    flagged : list of str
        The flagged tests.
    table : list of VerdictRow
        One row per test, in the order of :func:`family`.
    permutations : int
        B.
    n_samples, n_reference : int
    n_train : int or None
    """

    metric: str
    verdict: str
    alpha: float
    flagged: list
    table: list
    permutations: int
    n_samples: int
    n_reference: int
    n_train: int | None = None

    def text(self) -> str:
        """The table and the verdict as aligned text."""
        lines = [f"{'test':13s} {'value':>11s} {'null mean':>11s} {'p':>8s} {'p (Holm)':>9s}",
                 *(f"{r.test:13s} {r.value:11.4g} "
                   f"{'' if r.null_mean is None else format(r.null_mean, '.4g'):>11s} "
                   f"{r.p_value:8.4f} {r.p_holm:9.4f}{'  flagged' if r.flagged else ''}"
                   for r in self.table),
                 f"verdict: {self.verdict} at family-wise {self.alpha:g} ({len(self.table)} "
                 f"tests, Holm, {self.permutations} permutations)"
                 + (f"; flagged: {', '.join(self.flagged)}" if self.flagged else "")]
        return "\n".join(lines)


def _memorization_batch(samples: np.ndarray, reference: np.ndarray, train, n: int, m: int,
                        criterion, null_rate: float, seed: int) -> Batch:
    """The ``memorization`` statistic on blocks of splits: the fraction of a split's samples
    minus that of its reference whose flag d1 < c d2 against the training set is set, c that
    of :func:`flows.evaluation.nearest.memorization` on the samples."""
    c = memorization(samples, train, criterion=criterion, null_rate=null_rate,
                     seed=seed).criterion
    pool = torch.from_numpy(np.concatenate([samples, reference]))
    d1, d2 = two_nearest(pool, torch.unique(torch.as_tensor(train, dtype=torch.float64), dim=0))
    flags = memorized(d1, d2, c).double().numpy()
    total = flags.sum()
    return lambda masks: (s := masks @ flags) / n - (total - s) / m


def evaluate_all(samples, reference, train=None, alpha: float = ALPHA,
                 permutations: int = PERMUTATIONS, seed: int = 0, k: int = 3,
                 criterion: float | str = "calibrated", null_rate: float = NULL_RATE,
                 cells: int = 3, tests: tuple[str, ...] | None = None) -> Verdict:
    """Every test of :func:`family` on the samples, Holm's correction and one verdict.

    Parameters
    ----------
    samples : array, shape (n, d)
    reference : array, shape (m, d)
        True data; with ``train``, held-out points that were never trained on.
    train : array, shape (n_train, d), optional
        The whole training set: adds ``memorization`` and ``copying``.
    alpha : float
        Family-wise level, in (0, 1).
    permutations : int
        B; at least ceil(K / alpha) - 1 for K tests (else nothing could be flagged).
    seed : int
        Seed of the splits (and of the sliced projections, the bins and the k-means cells).
    k : int
        Neighbour of precision and recall.
    criterion, null_rate : as in :func:`flows.evaluation.nearest.memorization`.
    cells : int
        k-means cells of the data-copying test.
    tests : tuple of str, optional
        Another family (any statistic of :mod:`flows.evaluation.twosample`, plus the two
        training-set tests); default :func:`family`.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.randn(150, 2, generator=g)
    >>> bad = evaluate_all(torch.randn(150, 2, generator=g) * 0.5, y, permutations=999)
    >>> bad.verdict, "variance" in bad.flagged
    ('fail', True)
    >>> evaluate_all(torch.randn(150, 2, generator=g), y, permutations=999).verdict
    'pass'
    """
    z, n = _pooled(samples, reference)
    m = z.shape[0] - n
    names = family(z.shape[1], train is not None) if tests is None else tuple(tests)
    check_family(names, train, alpha, permutations)
    x, ref = z[:n], z[n:]
    shared: dict = {}
    stats = {t: batched_statistic(t, z, n, check_positive_int("k", k), check_int("seed", seed),
                                  shared) for t in names if t not in TRAIN_TESTS}
    if "memorization" in names:
        stats["memorization"] = _memorization_batch(x, ref, train, n, m, criterion, null_rate,
                                                    seed)
    observed = np.arange(z.shape[0]) < n
    nulls: dict[str, list] = {t: [] for t in stats}
    for masks in permutation_masks(z.shape[0], n, permutations, seed):
        for t, fn in stats.items():
            nulls[t].append(fn(masks))
    p, mean, values = {}, {}, {}
    for t, fn in stats.items():
        obs, null = float(fn(observed[None])[0]), np.concatenate(nulls[t])
        values[t] = obs
        p[t] = permutation_p_value(obs, null, ALTERNATIVE.get(t, "greater"), RTOL)
        mean[t] = float(null.mean())
    if "copying" in names:
        cp = data_copying(x, train, ref, cells=cells, seed=seed)
        values["copying"], p["copying"], mean["copying"] = cp.z, cp.p_value, None
    adjusted = holm([p[t] for t in names])
    rows = [VerdictRow(t, values[t], mean[t], p[t], float(a), bool(a <= alpha),
                       ALTERNATIVE.get(t, "less" if t == "copying" else "greater"))
            for t, a in zip(names, adjusted, strict=True)]
    flagged = [r.test for r in rows if r.flagged]
    return Verdict("all", "fail" if flagged else "pass", alpha, flagged, rows, permutations,
                   n, m, None if train is None else int(np.shape(train)[0]))


def check_family(names: tuple[str, ...], train, alpha: float, permutations: int) -> None:
    """Check a family before it runs: :class:`FlowsError` for an empty or unknown family,
    training-set tests without a training set, alpha outside (0, 1), or too few permutations
    for Holm at this K."""
    allowed = tuple(ALTERNATIVE) + TRAIN_TESTS
    unknown = [t for t in names if t not in allowed]
    if not names or unknown or len(set(names)) != len(names):
        raise FlowsError(f"tests={list(names)!r} is not allowed; give distinct names among "
                         f"{', '.join(allowed)}")
    if train is None and any(t in TRAIN_TESTS for t in names):
        raise FlowsError("memorization and copying need the training set (train)")
    if not (isinstance(alpha, float | int) and 0 < alpha < 1):
        raise FlowsError(f"alpha={alpha!r} is not allowed; a family-wise level lies in (0, 1)")
    need = math.ceil(len(names) / alpha) - 1
    if check_positive_int("permutations", permutations) < need:
        raise FlowsError(f"permutations={permutations} cannot flag anything: a permutation "
                         f"p-value is at least 1 / (1 + B), and Holm over {len(names)} tests at "
                         f"{alpha:g} needs p <= {alpha / len(names):.2g}; give at least {need}")
