"""Intervals over independent repeats (seeds, runs) shared by the experiments of both packages.

Examples
--------
>>> from _runkit.stats import mean_ci
>>> mean, half = mean_ci([1.0, 2.0, 3.0])
>>> mean, round(half, 4)
(2.0, 2.4841)
"""

from __future__ import annotations

import math

import numpy as np

from .errors import BadInput

__all__ = ["mean_ci"]


def mean_ci(values, level: float = 0.95) -> tuple[float, float]:
    """Mean of independent repeats and the half-width of its Student-t interval.

    .. math:: \\bar v \\pm t_{(1 + \\mathrm{level})/2,\\, n - 1}\\, s / \\sqrt{n}

    with ``s`` the sample standard deviation (``ddof=1``).

    Parameters
    ----------
    values : array-like, shape (n,)
        One number per repeat, ``n >= 2``.
    level : float
        Coverage of the interval, in (0, 1).

    Returns
    -------
    mean, half_width : float

    Raises
    ------
    BadInput
        With fewer than 2 values or a level outside (0, 1).
    """
    from scipy.stats import t as student  # scipy only when an interval is asked for

    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        raise BadInput(f"an interval over repeats needs at least 2 values, got {v.size}")
    if not 0 < level < 1:
        raise BadInput(f"level={level!r} is not allowed; it must lie in (0, 1)")
    q = student.ppf(0.5 + level / 2, v.size - 1)
    return float(v.mean()), float(q * v.std(ddof=1) / math.sqrt(v.size))
