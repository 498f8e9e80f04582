"""Compiled kernels of :mod:`flows.assignment.auction` for the cost and the exact sparse finish
(imported only when numba is installed).

``reduced_squared_euclidean(x, y, single) -> (R, typical, top, finite, low, R32)``: the
squared-Euclidean cost reduced by its column and row minima (``low``: the column minima; R32:
R in single precision when ``single``, else empty).

``sparse_assignment(indptr, indices, values) -> sigma``: min-cost perfect matching on a sparse
bipartite graph (Hungarian method with Dijkstra shortest augmenting paths).
"""

import numba
import numpy as np

from _runkit.kernels import use_kernel_cache

from ._bits import least_and_greatest, scratch

use_kernel_cache()  # numba's cache folder is keyed on every kernel source (helpers included)


@numba.njit(cache=True, nogil=True)
def _heap_push(hd, hj, size, d, j):
    k = size
    hd[k] = d
    hj[k] = j
    while k > 0:
        parent = (k - 1) >> 1
        if hd[parent] <= hd[k]:
            break
        hd[parent], hd[k] = hd[k], hd[parent]
        hj[parent], hj[k] = hj[k], hj[parent]
        k = parent
    return size + 1


@numba.njit(cache=True, nogil=True)
def _heap_pop(hd, hj, size):
    d, j = hd[0], hj[0]
    size -= 1
    hd[0], hj[0] = hd[size], hj[size]
    k = 0
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        small = left
        if left + 1 < size and hd[left + 1] < hd[left]:
            small = left + 1
        if hd[k] <= hd[small]:
            break
        hd[small], hd[k] = hd[k], hd[small]
        hj[small], hj[k] = hj[k], hj[small]
        k = small
    return d, j, size


@numba.njit(cache=True, nogil=True)
def _relax(i, d0, indptr, ind, w, u, v, dist, done, pred, touched, nt, hd, hj, size, colsol):
    """Dijkstra step from row i, reached at distance d0: lower the tentative distances of the
    columns of its edges (reduced costs w - u - v). Returns the counts of touched columns and
    of heap entries, and a free column reached at distance d0 (else -1): no column is closer
    than d0, so that column ends a shortest augmenting path (the search stops early on ties)."""
    for e in range(indptr[i], indptr[i + 1]):
        k = ind[e]
        if done[k]:
            continue
        nd = d0 + (w[e] - u[i] - v[k])
        if nd < dist[k]:
            if dist[k] == np.inf:
                touched[nt] = k
                nt += 1
            dist[k] = nd
            pred[k] = i
            if nd <= d0 and colsol[k] < 0:
                return nt, size, k
            size = _heap_push(hd, hj, size, nd, k)
    return nt, size, -1


@numba.njit(cache=True, nogil=True)
def sparse_assignment(indptr, ind, w):
    """Min-cost perfect matching on a sparse bipartite graph with costs w >= 0: potentials
    u = 0 and v = the column minima (so w - u - v >= 0 and every column has a tight edge),
    greedy matching on tight edges, then one Dijkstra shortest augmenting path (Hungarian
    potentials) per free row. With ties the column minima leave far fewer free rows than the
    rows' zero edges alone. Returns (row -> col), or an all -1 array when the graph has no
    perfect matching."""
    n = indptr.shape[0] - 1
    u = np.zeros(n)
    v = np.zeros(n)
    rowsol = -np.ones(n, np.int64)
    colsol = -np.ones(n, np.int64)
    v[:] = np.inf  # column potentials: the column minima (every column has an edge)
    for e in range(ind.shape[0]):
        v[ind[e]] = min(v[ind[e]], w[e])
    for i in range(n):
        for e in range(indptr[i], indptr[i + 1]):
            j = ind[e]
            if w[e] - v[j] == 0.0 and colsol[j] < 0:
                rowsol[i] = j
                colsol[j] = i
                break
    dist = np.full(n, np.inf)
    done = np.zeros(n, np.bool_)
    pred = np.empty(n, np.int64)
    touched = np.empty(n, np.int64)
    cap = ind.shape[0] + n + 1
    hd = np.empty(cap)
    hj = np.empty(cap, np.int64)
    for f in range(n):
        if rowsol[f] >= 0:
            continue
        nt, size, sink = _relax(f, 0.0, indptr, ind, w, u, v, dist, done, pred, touched, 0,
                                hd, hj, 0, colsol)
        big = 0.0
        while sink < 0 and size > 0:
            d, j, size = _heap_pop(hd, hj, size)
            if done[j] or d > dist[j]:
                continue
            done[j] = True
            if colsol[j] < 0:
                sink = j
                big = d
                break
            nt, size, sink = _relax(colsol[j], d, indptr, ind, w, u, v, dist, done, pred,
                                    touched, nt, hd, hj, size, colsol)
            if sink >= 0:
                big = d
        if sink < 0:
            return -np.ones(n, np.int64)
        # potentials: finalized columns and the rows matched to them, and the free row
        u[f] += big
        for t in range(nt):
            j = touched[t]
            if done[j] and j != sink:
                v[j] -= big - dist[j]
                u[colsol[j]] += big - dist[j]
        # augment along the shortest path
        j = sink
        while True:
            i = pred[j]
            prev = rowsol[i]
            rowsol[i] = j
            colsol[j] = i
            if i == f:
                break
            j = prev
        for t in range(nt):
            j = touched[t]
            dist[j] = np.inf
            done[j] = False
    return rowsol


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _sum(v):
    """Sum of v in any order (vector instructions); inf and NaN still show in the result."""
    total = 0.0
    for j in range(v.shape[0]):
        total += v[j]
    return total


@numba.njit(cache=True, nogil=True)
def _squared_row(x, i, yt, row):
    """row_j = sum_k (x_ik - y_jk)^2, with y by coordinate (yt: d x n); the sum in the order of
    k from 0.0, in one pass when d = 2."""
    d, n = yt.shape
    if d == 2:
        a, b = x[i, 0], x[i, 1]
        for j in range(n):
            u = a - yt[0, j]
            v = b - yt[1, j]
            row[j] = (0.0 + u * u) + v * v
        return
    row[:] = 0.0
    for k in range(d):
        xi = x[i, k]
        for j in range(n):
            diff = xi - yt[k, j]
            row[j] += diff * diff


@numba.njit(cache=True, nogil=True)
def _factored_row(x, i, xb, yb, row):
    """row_j = max(0, sum_k (x_ik - xb_kj) (x_ik + yb_kj)) (NaN stays), the sum in the order
    of k from 0.0, in one pass when d = 2."""
    d, n = xb.shape
    if d == 2:
        a, b = x[i, 0], x[i, 1]
        for j in range(n):
            s = (0.0 + (a - xb[0, j]) * (a + yb[0, j])) + (b - xb[1, j]) * (b + yb[1, j])
            row[j] = 0.0 if s <= 0.0 else s
        return
    row[:] = 0.0
    for k in range(d):
        xi = x[i, k]
        for j in range(n):
            row[j] += (xi - xb[k, j]) * (xi + yb[k, j])
    for j in range(n):  # at least +0.0 (NaN stays, to make the sum below NaN)
        s = row[j]
        row[j] = 0.0 if s <= 0.0 else s


@numba.njit(cache=True, nogil=True)
def reduced_squared_euclidean(x, y, single):
    """The squared-Euclidean cost reduced by column and then row minima, with its scale.

    R_ij = C_ij - C_{k_j j} - r_i, C_ij = ||x_i - y_j||^2, k_j = argmin_i C_ij,
    r_i = min_j (C_ij - C_{k_j j}). The column step is formed as
    (x_i - x_k) . (x_i + x_k - 2 y_j), exact to the rounding of its own small terms even when
    y_j is far from every x (an outlier), so no large constant is carried into the auction.
    Every assignment's cost changes by the same constant, so the optimum is unchanged.

    Returns (R, typical, top, finite, low, R32): ``typical`` is the median of a strided sample
    of R's entries (a scale robust to outliers), ``top`` its maximum entry, ``low`` the column
    minima C_{k_j j} (a price p_j of R is the price p_j - low_j of C), R32 R rounded to single
    precision when ``single`` (written in the same pass), else an empty array.
    """
    n, d = x.shape
    c = np.empty((n, n))
    c32 = np.empty((n, n) if single else (0, 0), np.float32)
    finite = True
    yt = np.empty((d, n))  # y by coordinate, contiguous in j
    for j in range(n):
        for k in range(d):
            yt[k, j] = y[j, k]
    best = np.zeros(n, np.int64)
    low = np.full(n, np.inf)
    buffers = scratch(n, np.float64, np.int64)  # row: one row of values, read by their bits
    row = buffers[0]
    for i in range(n):  # column minima, row by row, without storing C
        _squared_row(x, i, yt, row)
        for j in range(n):  # branch-free, so that the loop compiles to vector instructions
            nearer = row[j] < low[j]
            low[j] = row[j] if nearer else low[j]
            best[j] = i if nearer else best[j]
    for j in range(n):
        if not np.isfinite(low[j]):
            finite = False
    xb = np.empty((d, n))  # x_{k_j} and x_{k_j} - 2 y_j by coordinate, contiguous in j
    yb = np.empty((d, n))
    for j in range(n):
        for k in range(d):
            xb[k, j] = x[best[j], k]
            yb[k, j] = x[best[j], k] - 2.0 * y[j, k]
    top = 0.0
    total_sum = 0.0
    for i in range(n):
        _factored_row(x, i, xb, yb, row)
        rmin, rmax = least_and_greatest(buffers, n)
        top = max(top, rmax - rmin)  # rounding is monotone: the row's largest entry of R
        ci = c[i]
        for j in range(n):
            ci[j] = row[j] - rmin
        if single:
            c32i = c32[i]
            for j in range(n):
                c32i[j] = ci[j]
        total_sum += _sum(ci)
    if not np.isfinite(total_sum):
        finite = False
    total = n * n
    stride = max(1, total // 2048)
    sample = np.empty((total + stride - 1) // stride)
    m = 0
    for e in range(0, total, stride):
        sample[m] = c[e // n, e % n]
        m += 1
    typical = np.median(sample[:m])
    if typical <= 0.0:  # mostly ties: fall back to the mean
        typical = total_sum / total
    return c, typical, top, finite, low, c32


@numba.njit(cache=True, nogil=True)
def _distinct_values(v, keys, used):
    """How many distinct values v holds, and whether all are finite: an open-addressing hash
    set of their bits (``keys``, ``used``: its slots, a power of two more than v holds)."""
    bits = v.view(np.uint64)
    mask = np.uint64(keys.shape[0] - 1)
    one = np.uint64(1)  # uint64 arithmetic only (uint64 with int64 gives float64 in numba)
    shift = np.uint64(64 - int(np.log2(keys.shape[0])))
    used[:] = False
    count = 0
    for j in range(v.shape[0]):
        if not np.isfinite(v[j]):
            return 0, False
        b = bits[j]
        h = (b * np.uint64(0x9E3779B97F4A7C15)) >> shift
        while used[h] and keys[h] != b:
            h = (h + one) & mask
        if not used[h]:
            used[h] = True
            keys[h] = b
            count += 1
    return count, True


@numba.njit(cache=True, nogil=True)
def distinct_projections(x, y, probe):
    """(distinct values of x . probe, distinct values of y . probe, all finite): distinct points
    almost surely project apart, so these count the distinct points of x and y. The sums start
    at +0.0, so no projection is -0.0 (equal values have equal bits)."""
    n, d = x.shape
    px = np.zeros(n)
    py = np.zeros(n)
    for i in range(n):
        for k in range(d):
            px[i] += x[i, k] * probe[k]
            py[i] += y[i, k] * probe[k]
    size = 1
    while size < 2 * n:
        size *= 2
    keys = np.empty(size, np.uint64)
    used = np.empty(size, np.bool_)
    kx, fx = _distinct_values(px, keys, used)
    ky, fy = _distinct_values(py, keys, used)
    return kx, ky, fx and fy
