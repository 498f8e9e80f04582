"""Compiled comparisons of non-negative doubles by their bits (imported only when numba is
installed).

For doubles >= 0 (+0.0 up to inf) the order of their bits read as int64 is the order of the
values. Integer min/max loops compile to vector instructions, where numba leaves floating-point
min/max reductions scalar, so the row scans of :mod:`flows._auction_kernels` and the row
reductions of :mod:`flows._matching_kernels` read their values through these helpers. Callers
guarantee the values are >= 0 and not -0.0 (whose bits are negative).
"""

import numba
import numpy as np

TOP = np.int64(0x7FFFFFFFFFFFFFFF)  # above the bits of every double >= 0, inf included


@numba.njit(cache=True, nogil=True)
def scratch(n):
    """Buffers (values, their bits, one value, its bits), each pair one memory."""
    values = np.empty(n)
    one = np.empty(1)
    return values, values.view(np.int64), one, one.view(np.int64)


@numba.njit(cache=True, nogil=True)
def least_bits(bits, n):
    """The least of bits[:n] (TOP when n = 0)."""
    m = TOP
    for j in range(n):
        b = bits[j]
        m = b if b < m else m
    return m


@numba.njit(cache=True, nogil=True)
def as_double(buffers, b):
    """The double whose bits are b."""
    buffers[3][0] = b
    return buffers[2][0]


@numba.njit(cache=True, nogil=True)
def least_and_greatest(buffers, n):
    """The least and the greatest of the values buffers[0][:n], as doubles."""
    bits = buffers[1]
    low = TOP
    high = np.int64(0)
    for j in range(n):
        b = bits[j]
        low = b if b < low else low
        high = b if b > high else high
    return as_double(buffers, low), as_double(buffers, high)
