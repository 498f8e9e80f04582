"""Compiled comparisons of non-negative floats by their bits (imported only when numba is
installed).

For floats >= 0 (+0.0 up to inf) the order of their bits read as integers of the same width
(int64 for doubles, int32 for singles) is the order of the values. Integer min/max loops
compile to vector instructions, where numba leaves floating-point min/max reductions scalar, so
the row scans of :mod:`flows.assignment._auction_kernels` and the row reductions of
:mod:`flows.assignment._matching_kernels` read their values through these helpers. Callers guarantee
the values are >= 0 and not -0.0 (whose bits are negative).

numba's cache of a kernel is invalidated by changes to the kernel's own file only, not to the
helpers it compiles in from here; the kernels are therefore cached in a folder keyed on every
kernel source (:func:`_runkit.kernels.use_kernel_cache`), which an edit here changes.
"""

import numba
import numpy as np

from _runkit.kernels import use_kernel_cache

use_kernel_cache()  # numba's cache folder is keyed on every kernel source (helpers included)


@numba.njit(cache=True, nogil=True)
def scratch(n, ftype, itype):
    """Buffers (values, their bits, one value, its bits, top, positions) for floats of type
    ``ftype`` read as integers ``itype`` of the same width (each pair one memory); ``top``, of
    type ``itype``, is above the bits of every float >= 0, inf included; ``positions`` holds
    0..n-1 in ``itype`` (so that a search for a position runs in the lanes of the bits)."""
    values = np.empty(n, ftype)
    one = np.empty(1, ftype)
    one_bits = one.view(itype)
    one[0] = np.inf
    one_bits[0] += 1  # in place, so that top keeps the width of itype
    positions = np.empty(n, itype)
    for j in range(n):
        positions[j] = j
    return values, values.view(itype), one, one_bits, one_bits[0], positions


@numba.njit(cache=True, nogil=True)
def least_bits(buffers, n):
    """The least bits of the values buffers[0][:n] (the buffers' top when n = 0)."""
    bits = buffers[1]
    m = buffers[4]
    for j in range(n):
        b = bits[j]
        m = b if b < m else m
    return m


@numba.njit(cache=True, nogil=True)
def as_float(buffers, b):
    """The float whose bits are b."""
    buffers[3][0] = b
    return buffers[2][0]


@numba.njit(cache=True, nogil=True)
def least_and_greatest(buffers, n):
    """The least and the greatest of the values buffers[0][:n], as floats."""
    bits = buffers[1]
    low = buffers[4]
    buffers[3][0] = 0
    high = buffers[3][0]  # 0 of the bits' type
    for j in range(n):
        b = bits[j]
        low = b if b < low else low
        high = b if b > high else high
    return as_float(buffers, low), as_float(buffers, high)


@numba.njit(cache=True, nogil=True)
def least_two_bits(buffers, n):
    """(least, its first position, second least) of the bits of buffers[0][:n], n >= 1; the
    second least is the least again when it occurs twice, the top when n = 1.

    Two passes that compile to vector instructions: the least bits, then in one pass the first
    and the last position holding them (min and max reductions over positions; two positions
    mean a tie) and the least bits above them. The second pass only selects and compares
    values of the bits' type: integer arithmetic would widen its lanes to int64 (numba computes
    it at that width), halving the values per instruction for single-precision bits."""
    bits, top, positions = buffers[1], buffers[4], buffers[5]
    m1 = least_bits(buffers, n)
    last = positions[n - 1]  # the first position of m1 is at most n - 1
    zero = positions[0]
    j1 = last
    jl = zero
    m2 = top
    for j in range(n):
        b = bits[j]
        pj = positions[j]
        at = b == m1
        k = pj if at else last
        j1 = k if k < j1 else j1
        k = pj if at else zero
        jl = k if k > jl else jl
        u = top if at else b
        m2 = u if u < m2 else m2
    return m1, int(j1), m1 if jl > j1 else m2
