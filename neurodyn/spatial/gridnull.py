r"""Grid-cell classification against a shuffled null, on smoothed rate maps.

Rate maps are smoothed as is usual in the field: the rate sums and the occupancy of each bin
are convolved separately with a Gaussian kernel of standard deviation :data:`SMOOTHING_BINS`
bins (1 bin: 5 cm for 20 bins in a 1 m box), zero outside the box, and divided
(:func:`neurodyn.spatial.ratemaps.rate_maps`, ``smoothing``); unvisited bins stay NaN.

The null: each cell's rate series is shifted circularly in time against the positions by a
random lag of at least ``min_shift`` seconds (and at most the run minus it), which keeps its
temporal structure and firing statistics but breaks the relation to place; the map is rebuilt
and scored. A cell is a grid cell when its classic gridness exceeds the 95th percentile of the
null scores pooled over cells and shuffles (Langston et al. 2010; Boccara et al. 2010), the
criterion that replaces a fixed threshold. Per-cell thresholds are reported as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

from .agent import Box
from .gridscores import grid_scores
from .ratemaps import rate_maps

__all__ = ["SMOOTHING_BINS", "GridClassification", "shuffled_gridness", "shifted_null"]

#: Standard deviation (bins) of the Gaussian smoothing of rate maps before scoring.
SMOOTHING_BINS = 1.0


@dataclass(frozen=True)
class GridClassification(Result):
    """Gridness of each cell and the shuffled null it is judged against.

    Attributes
    ----------
    scores : ``(cells,)`` classic gridness of the smoothed maps.
    null : ``(shuffles, cells)`` gridness of the shuffled maps.
    threshold : the ``percentile`` of the pooled null.
    cell_thresholds : ``(cells,)`` the ``percentile`` of each cell's own null.
    is_grid : ``(cells,)`` ``scores > threshold`` (NaN scores count as not grid).
    fraction : fraction of grid cells.
    percentile, smoothing, min_shift : the criterion (smoothing in bins, shift in seconds).
    """

    scores: np.ndarray
    null: np.ndarray
    threshold: float
    cell_thresholds: np.ndarray
    is_grid: np.ndarray
    fraction: float
    percentile: float
    smoothing: float
    min_shift: float

    def summary(self) -> dict:
        """JSON-serialisable numbers."""
        fin = np.isfinite(self.scores)
        null = self.null[np.isfinite(self.null)]
        return {"threshold": self.threshold, "fraction_grid": self.fraction,
                "gridness_median": float(np.median(self.scores[fin])) if fin.any() else None,
                "null_median": float(np.median(null)) if null.size else None,
                "percentile": self.percentile,
                "smoothing_bins": self.smoothing, "min_shift_s": self.min_shift,
                "shuffles": int(self.null.shape[0]), "cells": int(self.scores.size)}


def shifted_null(rates: np.ndarray, score, shuffles: int, min_shift: int,
                 seed: int) -> np.ndarray:
    """Scores of circularly time-shifted rates: the null of a cell classification.

    Each of ``shuffles`` rounds shifts every cell's series by its own lag, drawn uniformly from
    ``[min_shift, steps - min_shift)`` samples, and scores the shifted rates.

    Parameters
    ----------
    rates : numpy.ndarray, shape (steps, cells)
        Rates.
    score : callable
        ``score(shifted) -> (cells,)`` for shifted rates ``(steps, cells)``.
    shuffles : int
        Rounds of shifts.
    min_shift : int
        Smallest shift (samples); ``steps`` must exceed twice it.
    seed : int
        Seeds the lags.

    Returns
    -------
    ``(shuffles, cells)`` scores.

    Examples
    --------
    >>> r = np.arange(8.0)[:, None] * np.ones((1, 3))
    >>> shifted_null(r, lambda x: x[0], 2, 2, seed=0).shape  # first sample after each shift
    (2, 3)
    """
    steps, cells = rates.shape
    rng = np.random.default_rng(seed)
    null = np.empty((shuffles, cells))
    cols = np.arange(cells)
    for s in range(shuffles):
        shift = rng.integers(min_shift, steps - min_shift, size=cells)
        idx = (np.arange(steps)[:, None] - shift[None, :]) % steps
        null[s] = score(rates[idx, cols[None, :]])
    return null


def shuffled_gridness(positions, rates, dt: float, box: Box | None = None, bins: int = 20,
                      smoothing: float = SMOOTHING_BINS, shuffles: int = 20,
                      min_shift: float = 20.0, percentile: float = 95.0,
                      seed: int = 0) -> GridClassification:
    """Classify cells as grid cells by their gridness against a time-shift null.

    Parameters
    ----------
    positions : array_like, shape (steps, 2)
        Positions (m) sampled every ``dt`` s.
    rates : array_like, shape (steps, cells)
        Rates.
    dt : float
        Sampling interval (s).
    box : Box or None
        The arena (default ``Box(1.0)``).
    bins : int
        Bins per side.
    smoothing : float
        Gaussian smoothing of the maps, in bins (>= 0).
    shuffles : int
        Shuffled maps per cell (>= 1).
    min_shift : float
        Smallest circular shift (s); the run must last more than twice as long.
    percentile : float
        Of the null, in (0, 100).
    seed : int
        Seeds the shifts.

    Returns
    -------
    GridClassification
    """
    box = Box() if box is None else box
    pos = np.asarray(positions, dtype=float)
    r = np.asarray(rates, dtype=float)
    if r.ndim != 2 or r.shape[0] != pos.shape[0]:
        raise BadInput(f"rates: shape {r.shape}; expected ({pos.shape[0]}, cells)", param="rates")
    steps, cells = r.shape
    lo = int(np.ceil(min_shift / dt))
    if not (isinstance(shuffles, int) and shuffles >= 1):
        raise BadInput(f"shuffles={shuffles!r}: must be an integer >= 1", param="shuffles")
    if steps - lo <= lo:
        raise BadInput(f"min_shift={min_shift}: the run ({steps * dt:g} s) must last more than "
                       "twice the smallest shift", param="min_shift")
    if not 0 < percentile < 100:
        raise BadInput(f"percentile={percentile!r}: must be in (0, 100)", param="percentile")
    def gridness(x: np.ndarray) -> np.ndarray:
        return grid_scores(rate_maps(pos, x, box, bins, smoothing=smoothing)).classic

    scores = gridness(r)
    null = shifted_null(r, gridness, shuffles, lo, seed)
    pooled = null[np.isfinite(null)]
    thr = float(np.percentile(pooled, percentile)) if pooled.size else np.nan
    per = np.array([np.nanpercentile(null[:, c], percentile) if np.isfinite(null[:, c]).any()
                    else np.nan for c in range(cells)])
    is_grid = np.where(np.isfinite(scores), scores, -np.inf) > thr
    return GridClassification(scores, null, thr, per, is_grid, float(is_grid.mean()),
                              float(percentile), float(smoothing), float(min_shift))
