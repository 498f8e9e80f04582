"""Data with the attractor destroyed, for the verdict's controls.

- :func:`time_shifted`: each cell's series shifted circularly in time by its own random lag (at
  least ``min_shift`` bins): every cell keeps its own statistics, the cells no longer fire
  together;
- :func:`identity_shuffled`: the cells' identities permuted independently at every bin: the
  population's total per bin is kept, no cell keeps a tuning.
"""

from __future__ import annotations

import numpy as np

from _runkit import BadInput

__all__ = ["time_shifted", "identity_shuffled", "CONTROLS"]


def time_shifted(counts, seed: int = 0, min_shift: int | None = None) -> np.ndarray:
    """Every cell's series rolled by its own random lag.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts or rates per bin.
    seed : int
        Seeds the lags.
    min_shift : int or None
        Smallest lag in bins (default ``T // 10``); lags are uniform in
        ``[min_shift, T - min_shift]``.

    Returns
    -------
    ndarray, shape (T, cells)

    Examples
    --------
    >>> x = np.arange(20).reshape(10, 2)
    >>> y = time_shifted(x, seed=0)
    >>> sorted(y[:, 0]) == sorted(x[:, 0]), bool((y[:, 0] != x[:, 0]).any())
    (True, True)
    """
    x = np.asarray(counts)
    if x.ndim != 2 or x.shape[0] < 4:
        raise BadInput(f"counts: shape {x.shape}; expected (T >= 4, cells)", param="counts")
    steps = x.shape[0]
    lo = max(1, steps // 10 if min_shift is None else int(min_shift))
    if steps - lo < lo:
        raise BadInput(f"min_shift={min_shift}: needs T >= 2 min_shift bins (T={steps})",
                       param="min_shift")
    lags = np.random.default_rng(seed).integers(lo, steps - lo + 1, size=x.shape[1])
    idx = (np.arange(steps)[:, None] - lags[None, :]) % steps
    return np.take_along_axis(x, idx, axis=0)


def identity_shuffled(counts, seed: int = 0) -> np.ndarray:
    """The cells permuted independently at every bin.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts or rates per bin.
    seed : int
        Seeds the permutations.

    Returns
    -------
    ndarray, shape (T, cells)

    Examples
    --------
    >>> x = np.arange(12).reshape(3, 4)
    >>> y = identity_shuffled(x, seed=1)
    >>> bool((np.sort(y, axis=1) == x).all())
    True
    """
    x = np.asarray(counts)
    if x.ndim != 2:
        raise BadInput(f"counts: shape {x.shape}; expected (T, cells)", param="counts")
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random(x.shape), axis=1)
    return np.take_along_axis(x, order, axis=1)


#: name -> control, as the verdict's tests and the demo name them
CONTROLS = {"time-shifted": time_shifted, "identity-shuffled": identity_shuffled}
