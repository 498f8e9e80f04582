r"""Head-direction tuning: tuning curves, mean vector length, preferred direction, shuffled null.

A tuning curve bins each cell's rate over the heading ``h_t`` in ``bins`` equal sectors of
``[0, 2 pi)`` (occupancy-normalised; NaN for unvisited sectors). Its mean vector is

.. math:: R_c e^{i\mu_c} = \frac{\sum_b f_{c,b}\, e^{i \theta_b}}{\sum_b f_{c,b}}

over the visited sectors (``theta_b`` the sector centres): ``R`` is the mean vector length
(Rayleigh vector; 0 untuned, 1 a delta) and ``mu`` the preferred direction. Binning shrinks
``R`` by ``sinc(pi / bins)`` at most (0.9995 for 60 sectors); it is not corrected. The
classification null shifts each rate series circularly against the heading by at least
``min_shift`` samples; a cell is a head-direction cell when ``R`` exceeds the 95th percentile
of the pooled null (as for grid cells, :mod:`neurodyn.spatial.gridnull`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

from .gridnull import shifted_null

__all__ = ["TuningCurves", "tuning_curves", "mean_vector", "HDClassification",
           "classify_head_direction"]


@dataclass(frozen=True)
class TuningCurves(Result):
    """Rates binned by heading.

    Attributes
    ----------
    centres : ``(bins,)`` sector centres (rad).
    curves : ``(cells, bins)`` mean rate per sector (NaN unvisited).
    occupancy : ``(bins,)`` samples per sector.
    """

    centres: np.ndarray
    curves: np.ndarray
    occupancy: np.ndarray


def tuning_curves(heading, rates, bins: int = 60) -> TuningCurves:
    """Head-direction tuning curves.

    Parameters
    ----------
    heading : array_like, shape (steps,)
        Headings (rad, any branch).
    rates : array_like, shape (steps, cells)
        Rates.
    bins : int
        Sectors of ``[0, 2 pi)`` (>= 4).

    Returns
    -------
    TuningCurves

    Examples
    --------
    >>> import numpy as np
    >>> h = np.linspace(0, 20 * np.pi, 5000)
    >>> tc = tuning_curves(h, np.exp(np.cos(h - 1.0))[:, None])
    >>> R, mu = mean_vector(tc)
    >>> round(float(mu[0]), 2)
    1.0
    """
    h = np.mod(np.asarray(heading, dtype=float), 2 * np.pi)
    r = np.asarray(rates, dtype=float)
    if r.ndim == 1:
        r = r[:, None]
    if h.ndim != 1 or r.shape[0] != h.shape[0]:
        raise BadInput(f"rates: shape {r.shape}; expected ({h.shape[0]}, cells) like heading",
                       param="rates")
    if not (isinstance(bins, int) and bins >= 4):
        raise BadInput(f"bins={bins!r}: must be an integer >= 4", param="bins")
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(r))):
        raise BadInput("heading, rates: must be finite")
    idx = np.minimum((h * bins / (2 * np.pi)).astype(int), bins - 1)
    occ = np.bincount(idx, minlength=bins).astype(float)
    sums = np.zeros((r.shape[1], bins))
    np.add.at(sums.T, idx, r)
    curves = np.full_like(sums, np.nan)
    np.divide(sums, occ, out=curves, where=occ > 0)
    centres = (np.arange(bins) + 0.5) * 2 * np.pi / bins
    return TuningCurves(centres, curves, occ)


def mean_vector(tc: TuningCurves) -> tuple[np.ndarray, np.ndarray]:
    """Mean vector length ``R`` ``(cells,)`` and preferred direction ``mu`` in ``[0, 2 pi)``."""
    f = np.where(np.isfinite(tc.curves), tc.curves, 0.0)
    z = f @ np.exp(1j * tc.centres)
    tot = f.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = np.where(tot > 0, np.abs(z) / tot, np.nan)
    return R, np.mod(np.angle(z), 2 * np.pi)


@dataclass(frozen=True)
class HDClassification(Result):
    """Mean vector lengths against a time-shift null.

    Attributes
    ----------
    R, preferred : ``(cells,)``.
    null : ``(shuffles, cells)`` shuffled ``R``.
    threshold : the 95th percentile of the pooled null.
    is_hd : ``(cells,)`` ``R > threshold``.
    fraction : fraction of head-direction cells.
    """

    R: np.ndarray
    preferred: np.ndarray
    null: np.ndarray
    threshold: float
    is_hd: np.ndarray
    fraction: float


def classify_head_direction(heading, rates, bins: int = 60, shuffles: int = 50,
                            min_shift: int = 100, percentile: float = 95.0,
                            seed: int = 0) -> HDClassification:
    """Head-direction cells: mean vector length above the shuffled null's percentile.

    Parameters
    ----------
    heading : array_like, shape (steps,)
        As in :func:`tuning_curves`.
    rates : array_like, shape (steps, cells)
        As in :func:`tuning_curves`.
    bins : int
        As in :func:`tuning_curves`.
    shuffles : int
        Shifted copies per cell.
    min_shift : int
        Smallest circular shift (samples).
    percentile : float
        Of the pooled null.
    seed : int
        Seeds the shifts.

    Returns
    -------
    HDClassification
    """
    r = np.asarray(rates, dtype=float)
    if r.ndim == 1:
        r = r[:, None]
    steps = r.shape[0]
    if steps - min_shift <= min_shift:
        raise BadInput(f"min_shift={min_shift}: needs more than {2 * min_shift} samples",
                       param="min_shift")
    R, mu = mean_vector(tuning_curves(heading, r, bins))
    null = shifted_null(r, lambda x: mean_vector(tuning_curves(heading, x, bins))[0],
                        shuffles, min_shift, seed)
    thr = float(np.nanpercentile(null, percentile))
    is_hd = np.where(np.isfinite(R), R, -np.inf) > thr
    return HDClassification(R, mu, null, thr, is_hd, float(is_hd.mean()))
