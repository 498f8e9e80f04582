"""The clamped exponential of the compiled kernels (:mod:`neurodyn.dynamics._compiled.kernels`), one
implementation per precision; imported only when numba is present."""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["FAST", "exp_clamped"]

#: fastmath flags of the kernels' interaction arithmetic (no nnan/ninf: NaN checks stay exact)
FAST = {"reassoc", "contract", "nsz", "arcp"}
# exp(x) on |x| <= 40 as (P_d(x / 2^s))^(2^s), P_d the degree-d Taylor polynomial (Estrin's
# scheme): float64 d = 8, s = 6 and float32 d = 5, s = 4. A logistic rate is then within 3.1e-15
# (float64) and 4.2e-7 (float32) of the exact one (the squarings' round-off dominates), and
# outside |gain u| <= 40 within 4.3e-18 of 0 or 1.
_CLAMP = 40.0


def exp_clamped(x):
    """``exp(x)`` for ``x`` clamped to ``[-40, 40]``.

    Called from Python this is the exact clamped exponential; compiled code gets the
    polynomial of the overload below (the scheme and its accuracy are in the comment above).

    >>> exp_clamped(0.0), exp_clamped(100.0) == math.exp(40.0)
    (1.0, True)
    """
    return math.exp(min(max(float(x), -_CLAMP), _CLAMP))


@overload(exp_clamped, fastmath=FAST)
def _exp_clamped_impl(x):
    """One implementation per precision, with constants of that precision (a float32 run does
    float32 arithmetic, eight lanes to a vector)."""
    if x == types.float32:
        d = np.float32
        sh, lim = d(1 / 16), d(_CLAMP / 16)
        c0, c2, c3, c4, c5 = d(1), d(1 / 2), d(1 / 6), d(1 / 24), d(1 / 120)

        def impl32(x):
            t = x * sh
            t = t if t < lim else lim
            t = t if t > -lim else -lim
            t2 = t * t
            p = (c0 + t + t2 * (c2 + t * c3)) + t2 * t2 * (c4 + t * c5)
            p = p * p
            p = p * p
            p = p * p
            return p * p
        return impl32
    if x == types.float64:
        d = np.float64
        sh, lim = d(1 / 64), d(_CLAMP / 64)
        c0, c2, c3, c4, c5 = d(1), d(1 / 2), d(1 / 6), d(1 / 24), d(1 / 120)
        c6, c7, c8 = d(1 / 720), d(1 / 5040), d(1 / 40320)

        def impl64(x):
            t = x * sh
            t = t if t < lim else lim
            t = t if t > -lim else -lim
            t2 = t * t
            t4 = t2 * t2
            p = (c0 + t + t2 * (c2 + t * c3)) + t4 * ((c4 + t * c5) + t2 * (c6 + t * c7)
                                                      + t4 * c8)
            p = p * p
            p = p * p
            p = p * p
            p = p * p
            p = p * p
            return p * p
        return impl64
    return None
