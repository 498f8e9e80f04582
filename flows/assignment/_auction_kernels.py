"""Compiled auction kernels of :mod:`flows.assignment.auction` (imported only when numba is
installed).

``auction(c, p0, eps0, eps_final, theta, max_bids, k_list, list_phase, itype, p_limit)
-> (sigma, prices, ok, cand, cost, bound)``: forward auction with eps-scaling on the cost
matrix c >= 0 (float64 or float32; prices p0 >= 0 of the same type) from the prices p0 (the
row scans compare values by their bits read as ``itype``, the integer type of c's width, which
order non-negative floats; see :mod:`flows.assignment._bits`); when ok, every row is assigned and
eps_final-complementary slackness holds (in c's arithmetic); ok is False when more than
max_bids bids were needed or a price passed ``p_limit`` (in single precision, a bound under
which every bid still raises a price).

Candidate lists (from phase ``list_phase`` on, phases counted from 0): a row keeps its
K = ``k_list`` best objects ``cand[i]`` (their costs ``cost[i]``, contiguous) and
``bound[i]``, the (K+1)-th best value c_ij + p_j when the list was built. Prices only rise, so
every object outside the list keeps a value >= bound[i]; while the list's second-best value is
<= bound[i] the list's best two values are the row's, and a bid reads K entries instead of n.
Otherwise the row is scanned and its list rebuilt. The bids, and so the eps-CS guarantee, are
those of the plain auction (up to which of two tied objects is taken). In the first phases
prices move by more than a list's spread, so rows are scanned in full there.

``slack_graph(c, p, sigma, cand, bound, margin) -> (indptr, indices, values)``: the CSR graph
of the edges that an optimal assignment can use, read from the lists where they suffice (c, p
in float64, whatever precision the auction bid in; ``bound`` then lowered by its rounding).
"""

import numba
import numpy as np

from _runkit.kernels import use_kernel_cache

from ._bits import as_float, least_and_greatest, least_two_bits, scratch

use_kernel_cache()  # numba's cache folder is keyed on every kernel source (helpers included)

# Row scans compare the values c_ij + p_j by their bits (flows.assignment._bits). c >= 0 and p >= 0
# hold in auction (reduced costs; prices start at p0 >= 0 and only rise), so no value is negative or
# -0.0 (+0.0 + +0.0 = +0.0).


@numba.njit(cache=True, nogil=True)
def _best_two(c, p, i, buffers):
    """Full scan of row i at prices p: (w1, w2, j1), the best and second-best values
    c_ij + p_j and the best object (the first one on ties; w2 = w1 when the row has one
    entry). Values must be >= 0 (see :mod:`flows.assignment._bits`)."""
    buf = buffers[0]
    n = c.shape[1]
    for j in range(n):
        buf[j] = c[i, j] + p[j]
    _, j1, second = least_two_bits(buffers, n)
    if n == 1:
        return buf[0], buf[0], 0
    return buf[j1], as_float(buffers, second), j1


@numba.njit(cache=True, nogil=True)
def _build_list(c, p, i, cand, cost, gap, buffers, idx, tv, tj):
    """The K = cand.shape[1] best objects of row i at prices p, into cand[i] (their costs into
    cost[i]). Returns (w1, w2, j1, bound, gap): the best two values and best object, ``bound``
    the (K+1)-th best value (inf when the row has at most K entries; every object outside the
    list has a value >= bound) and ``gap`` = bound - w1, the next guess for this row.

    The values are formed once; a threshold w1 + gap (the row's last gap; for a first list the
    last gap of any row, whose values spread alike; a guess, on which the list does not
    depend) collects about K + 1 candidates, doubled or halved until it holds between K + 1
    and 4 (K + 1), and the K + 1 smallest of those are kept in order."""
    buf = buffers[0]
    n = c.shape[1]
    k_list = cand.shape[1]
    m = min(k_list + 1, n)
    for j in range(n):
        buf[j] = c[i, j] + p[j]
    w1, hi = least_and_greatest(buffers, n)
    spread = (hi - w1) * m / n
    g = gap if gap > 0 else spread
    cnt = 0
    for _ in range(16):
        t = w1 + g
        cnt = 0
        for j in range(n):  # branch-free compaction of the entries <= t
            idx[cnt] = j
            cnt += buf[j] <= t
        if cnt < m and t < hi:
            g = 2 * g if g > 0 else spread
        elif cnt > 4 * m and g > 0:
            g = 0.5 * g
        else:
            break
    if cnt < m:  # the threshold never reached the top: take every entry
        cnt = n
        for j in range(n):
            idx[j] = j
    top = 0
    for a in range(cnt):  # the m smallest collected values, by insertion
        j = idx[a]
        v = buf[j]
        if top < m:
            k = top
            top += 1
        elif v < tv[m - 1]:
            k = m - 1
        else:
            continue
        while k > 0 and tv[k - 1] > v:
            tv[k] = tv[k - 1]
            tj[k] = tj[k - 1]
            k -= 1
        tv[k] = v
        tj[k] = j
    for a in range(k_list):  # top >= m >= k_list
        cand[i, a] = tj[a]
        cost[i, a] = c[i, tj[a]]
    w2 = tv[1] if top > 1 else tv[0]
    if top > k_list:
        return tv[0], w2, tj[0], tv[k_list], tv[k_list] - tv[0]
    return tv[0], w2, tj[0], np.inf, 0.0


@numba.njit(cache=True, nogil=True)
def auction(c, p0, eps0, eps_final, theta, max_bids, k_list, list_phase, itype, p_limit):
    """Forward auction with eps-scaling and candidate lists (see the module docstring)."""
    n = c.shape[0]
    k_list = max(1, min(k_list, n))
    bids = 0
    p = p0.copy()
    owner = -np.ones(n, np.int64)
    sigma = -np.ones(n, np.int64)
    queue = np.empty(n, np.int64)
    cand = np.zeros((n, k_list), np.int64)
    cost = np.zeros((n, k_list), c.dtype)
    bound = np.full(n, -np.inf)  # -inf: row i has no list yet
    gap = np.zeros(n)
    served = np.zeros(n, np.int64)  # bids served by row i's list since it was built
    plain = np.zeros(n, np.bool_)  # rows whose lists did not pay (ties): scanned plainly
    buffers = scratch(n, c.dtype, itype)
    idx = np.empty(n, np.int64)
    tv = np.empty(k_list + 1, c.dtype)
    tj = np.empty(k_list + 1, np.int64)
    eps = max(eps0, eps_final)
    shared = 0.0  # the last gap of a first list: the guess for the next row's first list
    phase = 0
    while True:
        lists = phase >= list_phase
        nq = 0
        for i in range(n):  # persons still eps-CS under the new eps keep their object
            j0 = sigma[i]
            if j0 >= 0:
                bar = c[i, j0] + p[j0] - eps
                if bound[i] > -np.inf:  # the list decides unless its bound is below bar
                    w1 = np.inf
                    for a in range(k_list):
                        w1 = min(w1, cost[i, a] + p[cand[i, a]])
                    if w1 >= bar and bound[i] < bar:
                        w1, w2, j1, bound[i], gap[i] = _build_list(c, p, i, cand, cost,
                                                                   gap[i], buffers, idx, tv, tj)
                        served[i] = 0
                elif lists and not plain[i]:
                    w1, w2, j1, bound[i], gap[i] = _build_list(
                        c, p, i, cand, cost, gap[i] if gap[i] > 0 else shared, buffers, idx,
                        tv, tj)
                    shared = gap[i] if gap[i] > 0 else shared
                    served[i] = 0
                else:
                    w1, w2, j1 = _best_two(c, p, i, buffers)
                if w1 >= bar:
                    continue
                owner[j0] = -1
                sigma[i] = -1
            queue[nq] = i
            nq += 1
        head = 0
        while nq > 0:  # Gauss-Seidel bidding from a circular queue
            i = queue[head]
            head = head + 1 if head + 1 < n else 0
            nq -= 1
            w2 = np.inf
            if bound[i] > -np.inf:
                w1 = np.inf
                j1 = 0
                for a in range(k_list):
                    j = cand[i, a]
                    v = cost[i, a] + p[j]
                    if v < w2:
                        if v < w1:
                            w2 = w1
                            w1 = v
                            j1 = j
                        else:
                            w2 = v
            if w2 > bound[i]:  # the list no longer certifies the best two: rescan the row
                if lists and not plain[i]:
                    if bound[i] > -np.inf and served[i] == 0:
                        plain[i] = True  # a list that served no bid: scan this row plainly
                        bound[i] = -np.inf
                        w1, w2, j1 = _best_two(c, p, i, buffers)
                    else:
                        w1, w2, j1, bound[i], gap[i] = _build_list(
                            c, p, i, cand, cost, gap[i] if gap[i] > 0 else shared, buffers,
                            idx, tv, tj)
                        shared = gap[i] if gap[i] > 0 else shared
                        served[i] = 0
                else:
                    w1, w2, j1 = _best_two(c, p, i, buffers)
            else:
                served[i] += 1
            p[j1] += (w2 - w1) + eps
            bids += 1
            if bids > max_bids or p[j1] > p_limit:
                return sigma, p, False, cand, cost, bound
            prev = owner[j1]
            owner[j1] = i
            sigma[i] = j1
            if prev >= 0:
                sigma[prev] = -1
                tail = head + nq
                if tail >= n:
                    tail -= n
                queue[tail] = prev
                nq += 1
        if eps <= eps_final:
            return sigma, p, True, cand, cost, bound
        eps = max(eps / theta, eps_final)
        phase += 1


@numba.njit(cache=True, nogil=True)
def _row_min(c, p, i, cand, bound):
    """pi_i = min_j c_ij + p_j, from the list when its bound allows; (pi_i, exact from list)."""
    if bound[i] > -np.inf:
        m = np.inf
        for a in range(cand.shape[1]):
            j = cand[i, a]
            m = min(m, c[i, j] + p[j])
        if m <= bound[i]:
            return m, True
    m = np.inf
    for j in range(c.shape[1]):
        m = min(m, c[i, j] + p[j])
    return m, False


@numba.njit(cache=True, nogil=True)
def slack_graph(c, p, sigma, cand, bound, margin):
    """Edges (i, j) with reduced cost r_ij = c_ij + p_j - pi_i <= S + margin, S = sum_i
    r_{i sigma(i)}, as CSR with values r_ij.

    For any optimal sigma*, sum_i r_{i sigma*(i)} <= sum_i r_{i sigma(i)} = S (both sides
    differ from the assignments' costs by the same constant) and every r >= 0, so every edge of
    every optimal assignment is in the graph; ``margin`` covers the rounding of the r's. A
    row's edges come from its list when the list's bound exceeds pi_i + S + margin (no
    object outside can qualify), else from a scan of the row."""
    n, k_list = cand.shape
    pi = np.empty(n)
    listed = np.zeros(n, np.bool_)
    slack = 0.0
    for i in range(n):
        pi[i], listed[i] = _row_min(c, p, i, cand, bound)
        slack += c[i, sigma[i]] + p[sigma[i]] - pi[i]
    thr = slack + margin
    indptr = np.zeros(n + 1, np.int64)
    ind = np.empty(16 * n, np.int64)
    val = np.empty(16 * n)
    e = 0
    for i in range(n):
        lim = pi[i] + thr
        if e + n > ind.shape[0]:  # the edge buffers grow by doubling
            size = max(2 * ind.shape[0], e + n)
            ind2 = np.empty(size, np.int64)
            val2 = np.empty(size)
            ind2[:e] = ind[:e]
            val2[:e] = val[:e]
            ind, val = ind2, val2
        own = sigma[i]
        if listed[i] and bound[i] > lim:
            for a in range(k_list):
                j = cand[i, a]
                v = c[i, j] + p[j]
                if v <= lim or j == own:
                    ind[e] = j
                    val[e] = v - pi[i]
                    e += 1
                    own = -1 if j == own else own
            if own >= 0:  # sigma's edge qualifies; only rounding can leave it off the list
                ind[e] = own
                val[e] = c[i, own] + p[own] - pi[i]
                e += 1
        else:
            for j in range(c.shape[1]):
                v = c[i, j] + p[j]
                if v <= lim or j == own:
                    ind[e] = j
                    val[e] = v - pi[i]
                    e += 1
        indptr[i + 1] = e
    return indptr, ind[:e].copy(), val[:e].copy()


@numba.njit(cache=True, nogil=True)
def grid_prices(y, lo, width, side, coef, offset, shift):
    """Prices of the points y (n, d) from a grid of linear pieces (see
    :class:`flows.assignment.warmstart.PriceMap`), read at y - offset and plus 2 shift . y: the
    piece of cell u = floor((y - offset - lo) / width) in [0, side)^d (row major), price
    coef[u, 0] + coef[u, 1:] . (y - offset); NaN outside the grid."""
    n, d = y.shape
    out = np.empty(n)
    z = np.empty(d)
    for i in range(n):
        cell = 0
        inside = True
        for k in range(d):
            z[k] = y[i, k] - offset[k]
            u = (z[k] - lo[k]) / width[k]
            if not (u >= 0.0 and u < side):  # NaN fails too
                inside = False
                break
            cell = cell * side + int(u)
        if not inside:
            out[i] = np.nan
            continue
        v = coef[cell, 0]
        for k in range(d):
            v += coef[cell, k + 1] * z[k]
        lin = 0.0
        for k in range(d):
            lin += y[i, k] * shift[k]
        out[i] = v + 2.0 * lin
    return out


@numba.njit(cache=True, nogil=True)
def batch_grid_prices(y, x, lo, width, side, coef, mean_x, mean_y):
    """:func:`grid_prices` with a batch's offsets from the reference means put back: read at
    y - b, plus 2 (a - b) . y, a = mean(x) - mean_x, b = mean(y) - mean_y."""
    d = y.shape[1]
    b = np.zeros(d)
    shift = np.zeros(d)
    for i in range(y.shape[0]):
        for k in range(d):
            b[k] += y[i, k]
    for i in range(x.shape[0]):
        for k in range(d):
            shift[k] += x[i, k]
    for k in range(d):
        b[k] = b[k] / y.shape[0] - mean_y[k]
        shift[k] = shift[k] / x.shape[0] - mean_x[k] - b[k]
    return grid_prices(y, lo, width, side, coef, b, shift)


@numba.njit(cache=True, nogil=True)
def start_prices(prices, low, top):
    """Auction prices of the reduced cost from guessed prices of C (see
    :func:`flows.assignment.auction._start`): prices + low shifted to start at 0, capped
    at ``top``, 0 where there is no guess. Returns (prices, whether any guess was finite)."""
    n = prices.shape[0]
    least = np.inf
    for j in range(n):
        v = prices[j] + low[j]
        if np.isfinite(v) and v < least:
            least = v
    out = np.zeros(n)
    if least == np.inf:
        return out, False
    for j in range(n):
        v = prices[j] + low[j]
        if np.isfinite(v):
            out[j] = min(v - least, top)
    return out, True
