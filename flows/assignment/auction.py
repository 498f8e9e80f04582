"""Exact linear assignment for minibatch optimal transport, by auction and a sparse exact finish.

Problem: given a cost matrix C (n x n), find the permutation
sigma* = argmin_sigma sum_i C[i, sigma(i)].

Method (:func:`auction_assignment`):

1. Forward auction with epsilon-scaling (Bertsekas). Objects carry prices p_j; an unassigned
   person i bids for its best object j1 = argmin_j (C_ij + p_j), raising p_j1 by
   (w2 - w1) + eps, where w1, w2 are the best and second-best values. Every phase ends with all
   persons assigned and eps-complementary slackness (eps-CS):
   C[i, sigma(i)] + p_sigma(i) <= pi_i + eps,   pi_i = min_j (C_ij + p_j).
   eps shrinks by ``theta`` per phase down to eps_f = ``delta`` * s / n, s the median entry of
   C after reduction by its row and column minima (kept above 1e-10 max(C), so that bids never
   vanish in the rounding of large prices). From the third phase on, each person bids from a
   list of its K best objects, exact because prices only rise (an object outside the list
   cannot have fallen below the list's bound; see :mod:`flows.assignment._auction_kernels`), so most
   bids read K entries instead of n.
2. Exact finish. With reduced costs r_ij = C_ij + p_j - pi_i >= 0 and S = sum_i r_{i sigma(i)}
   (at most n eps_f), every optimal sigma* has sum_i r_{i sigma*(i)} <= S (the two sums differ
   from the assignments' costs by the same constant), so each of its edges has r_ij <= S. The
   assignment restricted to the sparse graph G = {(i, j): r_ij <= S} therefore has the same
   optimum as the full problem. It is solved exactly by the Hungarian method on G: rows are
   first matched along their zero reduced-cost edges, then each free row is matched by a
   Dijkstra shortest augmenting path with potentials (a few short searches, since the
   auction's prices are nearly optimal).

For squared-Euclidean costs of points (:func:`squared_euclidean_assignment`), a batch of few
distinct points (copies of a point are interchangeable) is solved instead as the transport
problem between its distinct points, with their counts as integer masses, by POT's network
simplex; its plan is used only when it is integral, has the right marginals and its duals
certify it, and is then expanded to a permutation. Copies tie at every bid of an auction, so
such batches would otherwise cost several typical ones.

The result is an optimal assignment up to floating-point ties (as for any solver working in
floating point), not an approximation: the auction only supplies prices that make the exact
problem sparse. The kernels are compiled with numba, an optional dependency (the ``fast``
extra); :func:`available` says whether they can run.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import FlowsError


def available() -> bool:
    """True when numba can be imported (the auction solver needs it)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _kernels():
    """The modules of compiled kernels, (auction, matching); numba compiles or loads them once."""
    try:
        from . import _auction_kernels, _matching_kernels
    except ImportError as exc:  # pragma: no cover - exercised only without numba
        raise FlowsError("ot_solver='auction' needs numba, a dependency of the package "
                         "(pip install numba), or use ot_solver='emd'") from exc
    return _auction_kernels, _matching_kernels


# auction settings: final accuracy delta (relative to the median reduced cost, per row), eps
# reduction factor theta, first eps (relative to the same scale), candidate-list length and the
# phase from which lists are used; the answer does not depend on them
DELTA, THETA, EPS0, LIST_LENGTH, LIST_PHASE = 1e-2, 8.0, 0.15, 16, 2


def auction_assignment(cost: np.ndarray, delta: float = DELTA, theta: float = THETA,
                       eps0: float = EPS0, list_length: int = LIST_LENGTH) -> np.ndarray:
    """Optimal assignment of a square cost matrix (see the module docstring for the method).

    Parameters
    ----------
    cost : np.ndarray, shape (n, n)
        Finite costs (float64).
    delta : float
        Final auction accuracy relative to the median reduced cost s: eps_f = delta * s / n. Smaller
        values mean more bidding and a sparser exact finish; the answer does not depend on it.
    theta : float
        Factor by which eps shrinks between phases (> 1).
    eps0 : float
        First eps, relative to the median reduced cost.
    list_length : int
        Length K of the persons' candidate lists (see the module docstring); 0 scans every row
        in full at every bid (the plain auction). The answer does not depend on it.

    Returns
    -------
    np.ndarray of int64, shape (n,)
        sigma with sigma[i] the column assigned to row i.

    Examples
    --------
    >>> auction_assignment(np.array([[4.0, 1.0], [2.0, 8.0]])).tolist()
    [1, 0]
    """
    c = np.ascontiguousarray(cost, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
        raise FlowsError(f"cost has shape {c.shape}; it must be a non-empty square matrix")
    if not np.isfinite(c).all():
        raise FlowsError("cost has non-finite entries")
    if not (delta > 0 and theta > 1 and eps0 > 0):
        raise FlowsError(f"delta={delta!r}, theta={theta!r}, eps0={eps0!r} are not allowed; "
                         "they must satisfy delta > 0, theta > 1, eps0 > 0")
    if isinstance(list_length, bool) or not isinstance(list_length, int) or list_length < 0:
        raise FlowsError(f"list_length={list_length!r} is not allowed; it must be an int >= 0")
    # row and column reductions change every assignment's cost by the same constant
    c = c - c.min(axis=0, keepdims=True)
    c -= c.min(axis=1, keepdims=True)
    typical = float(np.median(c.ravel()[:: max(1, c.size // 2048)]))
    return _solve(c, typical if typical > 0 else float(c.mean()), float(c.max()), delta, theta,
                  eps0, list_length)[0]


def squared_euclidean_assignment(x: np.ndarray, y: np.ndarray,
                                 prices: np.ndarray | None = None) -> np.ndarray:
    """Optimal assignment for the cost C_ij = ||x_i - y_j||^2 (exact minibatch OT).

    Same method and result as ``auction_assignment(C)``. The cost is built by a compiled kernel
    already reduced by its column and row minima (the column step in the factored form
    (x_i - x_k) . (x_i + x_k - 2 y_j), so a far outlier brings no large constant), and the
    auction's eps is scaled to the median reduced cost rather than the mean: one point at
    distance 1e4 or a batch of ties then costs about as much as a typical batch. A batch of
    few distinct points (at most n^2 / 8 pairs of them: heavy duplicates, points on a coarse
    grid) is solved as the transport problem between its distinct points, whose copies are
    interchangeable (``bench/bench_flows.py --parts adversarial``).

    Parameters
    ----------
    x, y : np.ndarray, shape (n, d)
        Finite points.
    prices : np.ndarray, shape (n,), optional
        A warm start: guessed prices of the points y (column potentials of C, up to a common
        constant; NaN where there is no guess), e.g. from
        :class:`flows.assignment.warmstart.PriceMap`. The auction starts from them with a first eps
        of ``EPS0_WARM`` times the typical reduced cost instead of ``EPS0``. Good guesses save bids;
        the answer does not depend on them.

    Returns
    -------
    np.ndarray of int64, shape (n,)
        sigma: x_i is paired with y_sigma(i).

    Examples
    --------
    >>> squared_euclidean_assignment(np.array([[0.0], [1.0]]), np.array([[1.0], [0.0]])).tolist()
    [1, 0]
    """
    return assignment_and_prices(x, y, prices)[0]


def assignment_and_prices(x: np.ndarray, y: np.ndarray, prices: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`squared_euclidean_assignment` and the auction's final prices of the points y.

    The prices P are column potentials of C = ||x_i - y_j||^2 (up to a common constant):
    within n eps_f of optimal, every row's assigned target minimises C_ij + P_j up to eps_f.
    They are None when the batch was solved through its distinct points (no auction ran).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape or x.shape[0] == 0:
        raise FlowsError(f"x and y have shapes {x.shape} and {y.shape}; they must be equal, "
                         "two-dimensional and non-empty")
    n = x.shape[0]
    if prices is not None:
        prices = np.asarray(prices, dtype=np.float64)
        if prices.shape != (n,):
            raise FlowsError(f"prices have shape {prices.shape}; one price per point of y "
                             f"({n},) is required")
    sigma = _few_distinct(x, y)
    if sigma is not None:
        return sigma, None
    cost, typical, top, finite, low, single = _kernels()[1].reduced_squared_euclidean(
        x, y, SINGLE)
    if not finite:
        raise FlowsError("x or y has non-finite entries (or distances overflow)")
    start, eps0 = _start(prices, low, float(top))
    sigma, p = _solve(cost, float(typical), float(top), DELTA, THETA, eps0, LIST_LENGTH, start,
                      single if SINGLE else None)
    return sigma, p - low


# bid on the cost rounded to float32 where its range allows (twice the values per vector
# instruction; the exact finish reads the float64 cost, so the answer does not depend on it)
SINGLE = True

# first eps of a warm-started auction, relative to the median reduced cost (the cold one is
# EPS0): prices guessed from reference batches, with the batch's own offsets from their means
# put back (flows.assignment.warmstart), are off by about 4-5% of it (RMS), the batch's remaining
# noise (bench/bench_flows.py --parts assignment times both starts)
EPS0_WARM = 0.03


def _start(prices: np.ndarray | None, low: np.ndarray, top: float
           ) -> tuple[np.ndarray | None, float]:
    """Auction prices of the reduced cost from guessed prices of C, and the first eps.

    A price P_j of C is the price P_j + low_j of the reduced cost. Guesses are shifted to start
    at 0 and capped at the largest reduced cost (an overpriced object costs many bids before
    anyone takes it; an underpriced one is corrected by its first bid); points without a guess
    start at 0."""
    if prices is None:
        return None, EPS0
    p, known = _kernels()[0].start_prices(prices, low, top)
    return (p, EPS0_WARM) if known else (None, EPS0)


# batches whose distinct points pair up in at most n^2 / FEW cells are solved as a transport
# problem between the distinct points (the answer does not depend on it)
FEW = 8
_PROBE = np.array([0.7548776662466927, 0.5698402909980532, 0.4301597090019468, 0.2451223337533073])


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of x (in lexicographic order), each row's index among them, and their
    counts."""
    order = np.lexsort(x.T[::-1])
    xs = x[order]
    new = np.ones(len(x), bool)
    new[1:] = np.any(xs[1:] != xs[:-1], axis=1)
    group = np.cumsum(new) - 1
    inverse = np.empty(len(x), np.int64)
    inverse[order] = group
    return xs[new], inverse, np.bincount(group)


def _few_distinct(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The optimal assignment through the distinct points, when they are few; else None.

    Copies of a point are interchangeable, so the assignment problem is the transport problem
    between the distinct points u_a (count m_a) and v_b (count k_b) with integer masses, a few
    hundred cells where the assignment has n^2 (the auction is slow on such batches: copies
    tie at every bid). Its plan, from POT's network simplex, is used only when it is integral
    with the right marginals and its duals certify it (C - u - v >= 0 everywhere, = 0 where the
    plan moves mass, to rounding); the copies are then paired in order.
    """
    n, d = x.shape
    if n < 64:
        return None
    probe = _PROBE[:d] if d <= len(_PROBE) else np.resize(_PROBE, d)
    kx, ky, finite = _kernels()[1].distinct_projections(x, y, probe)
    if not finite or kx * ky > n * n / FEW:
        return None
    (ux, ix, cx), (uy, iy, cy) = _distinct(x), _distinct(y)
    if len(ux) * len(uy) > n * n / FEW:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        cost = ((ux[:, None, :] - uy[None, :, :]) ** 2).sum(-1)
    if not np.isfinite(cost).all():  # distances overflow: the main path says so
        return None
    import ot  # POT loads scikit-learn and scipy.stats (seconds): only for these batches

    plan, log = ot.emd(cx.astype(float), cy.astype(float), cost, numItermax=10_000_000, log=True)
    flow = np.rint(plan).astype(np.int64)
    reduced = cost - log["u"][:, None] - log["v"][None, :]
    tol = 1e-9 * max(1.0, float(cost.max()))
    if (log.get("result_code") != 1 or not np.array_equal(flow, plan)
            or not (np.array_equal(flow.sum(1), cx) and np.array_equal(flow.sum(0), cy))
            or reduced.min() < -tol or np.abs(reduced[flow > 0]).max() > tol):
        return None
    a, b = np.nonzero(flow)  # row by row: the flows tile x's copies in class order
    f = flow[a, b]
    x_start = np.cumsum(f) - f
    y_start = (np.cumsum(cy) - cy)[b] + (np.cumsum(flow, axis=0) - flow)[a, b]
    pos = np.arange(n) + np.repeat(y_start - x_start, f)
    sigma = np.empty(n, np.int64)
    sigma[np.argsort(ix, kind="stable")] = np.argsort(iy, kind="stable")[pos]
    return sigma


def _to_double(prices: np.ndarray, bound: np.ndarray, top: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """A single-precision auction's prices and list bounds for the exact finish on the float64
    cost: the prices exactly, the bounds lowered by more than the rounding of the cost and of
    the values (relative 2^-24 each), so that each still bounds the float64 values c_ij + p_j
    of the objects outside its list."""
    bound = bound.copy()
    finite = np.isfinite(bound)  # -inf: no list; inf: a list of the whole row
    bound[finite] -= 2.0**-20 * (np.abs(bound[finite]) + top)
    return prices.astype(np.float64), bound


def _solve(c: np.ndarray, scale: float, top: float, delta: float, theta: float,
           eps0: float, list_length: int, start: np.ndarray | None = None,
           single: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Auction and exact sparse finish on a validated cost matrix c >= 0 with typical entry
    ``scale`` and maximum ``top``; candidate lists of ``list_length`` (0: none); the auction
    starts from the prices ``start`` (>= 0; None: zero), and bids on ``single``, c rounded to
    float32, when given and its precision allows (see :data:`SINGLE`). Returns (sigma, the final
    prices)."""
    n = c.shape[0]
    if n == 1 or scale == 0.0:
        return np.arange(n, dtype=np.int64), np.zeros(n)
    auction, matching = _kernels()
    eps_f = max(delta * scale / n, 1e-10 * top)
    p0 = np.zeros(n) if start is None else start
    lists = (max(list_length, 1), LIST_PHASE if list_length > 0 else np.iinfo(np.int64).max)
    ok = False
    # in float32 a price p moves by its own ulp <= p 2^-23; below p_limit every bid (>= eps_f)
    # still raises it, with room for the rounding of the values
    p_limit = eps_f * 2.0**20
    if single is not None and single.size and top <= p_limit:
        sigma, p32, ok, cand, _, bound = auction.auction(
            single, p0.astype(np.float32), eps0 * scale, eps_f, float(theta),
            1000 * n + 10 * n * n, *lists, np.int32, p_limit)
        if ok:
            prices, bound = _to_double(p32, bound, top)
    if not ok:
        sigma, prices, ok, cand, _, bound = auction.auction(
            c, p0, eps0 * scale, eps_f, float(theta), 1000 * n + 10 * n * n, *lists,
            np.int64, np.inf)
    if not ok:  # pragma: no cover - a safeguard; no test instance has come near the cap
        return linear_sum_assignment(c)[1].astype(np.int64), prices
    # the margin covers the rounding of the n + 1 reduced costs that set and test the threshold
    margin = 4 * (n + 2) * np.finfo(float).eps * (top + np.abs(prices).max())
    indptr, ind, reduced = auction.slack_graph(c, prices, sigma, cand, bound, margin)
    out = matching.sparse_assignment(indptr, ind, reduced)
    if out[0] < 0:  # pragma: no cover - sigma's edges are in the graph, so cannot happen
        raise FlowsError("the sparse assignment found no perfect matching")
    return out, prices
