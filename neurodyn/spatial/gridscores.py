r"""Grid scores of rate maps by the autocorrelogram rotation method.

See :mod:`neurodyn.spatial.ratemaps` for the definitions (classic, mean form, four-fold score,
annulus, spacing and orientation of the nearest peaks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy import ndimage

from _runkit import BadInput
from _runkit.results import Result

from .ratemaps import RateMaps, autocorrelogram

__all__ = ["GridScore", "GridScores", "gridness", "grid_scores", "fraction_above", "ROTATIONS"]

ROTATIONS: tuple[int, ...] = (30, 45, 60, 90, 120, 135, 150)
# smallest outer radius of the annulus, as a fraction of the autocorrelogram's half-width
_MIN_OUTER_FRACTION = 0.35


@dataclass(frozen=True)
class GridScore(Result):
    """Grid scores of one autocorrelogram (see the module docstring for the definitions).

    Attributes
    ----------
    classic, mean, score_90 : float
        Rotation scores in [-2, 2]; NaN when undefined (e.g. a constant map).
    spacing : float
        Median distance to the nearest peaks, in the unit of ``bin_size``; NaN if no peak.
    orientation : float
        Angle of the nearest peaks modulo 60 degrees, radians in [0, pi/3); NaN if no peak.
    inner_radius, outer_radius : float
        The annulus that gave ``classic``, in the unit of ``bin_size``.
    correlations : dict[int, float]
        ``r_alpha`` for alpha in 30, 45, 60, 90, 120, 135, 150 degrees within that annulus.
    """

    classic: float
    mean: float
    score_90: float
    spacing: float
    orientation: float
    inner_radius: float
    outer_radius: float
    correlations: dict[int, float]


@dataclass(frozen=True)
class GridScores(Result):
    """Grid scores of a population, one entry per cell, each array of shape (cells,)."""

    classic: np.ndarray
    mean: np.ndarray
    score_90: np.ndarray
    spacing: np.ndarray
    orientation: np.ndarray


def _check_autocorr(autocorr: np.ndarray) -> np.ndarray:
    a = np.asarray(autocorr, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] % 2 == 0 or a.shape[0] < 5:
        raise BadInput(
            f"autocorr must be a square array of odd size >= 5 (2 bins - 1), got shape {a.shape}",
            param="autocorr"
        )
    return a


def _central_radius(a: np.ndarray, radius: np.ndarray) -> float:
    """Radius (bins) of the central peak: first ring where the mean turns negative or rises."""
    ring = np.rint(radius).astype(np.intp)
    valid = np.isfinite(a)
    rmax = a.shape[0] // 2
    sums = np.bincount(ring[valid], weights=a[valid], minlength=rmax + 1)[: rmax + 1]
    counts = np.bincount(ring[valid], minlength=rmax + 1)[: rmax + 1]
    profile = np.full(rmax + 1, np.nan)
    np.divide(sums, counts, out=profile, where=counts > 0)
    for r in range(1, rmax):
        if not np.isfinite(profile[r]) or profile[r] < 0 or profile[r + 1] > profile[r]:
            return float(max(r, 1))
    return float(rmax)


def _peaks(a: np.ndarray, radius: np.ndarray, r_min: float) -> tuple[np.ndarray, np.ndarray]:
    """Positive local maxima beyond ``r_min``, refined to sub-bin precision; (dy, dx) each."""
    filled = np.where(np.isfinite(a), a, -np.inf)
    is_max = (ndimage.maximum_filter(filled, size=3, mode="constant", cval=-np.inf) == filled)
    is_max &= np.isfinite(a) & (a > 0) & (radius > r_min)
    iy, ix = np.nonzero(is_max)
    c = a.shape[0] // 2
    dy = iy.astype(float) - c
    dx = ix.astype(float) - c
    n = a.shape[0]
    for k, (i, j) in enumerate(zip(iy, ix, strict=True)):
        if 0 < i < n - 1 and np.all(np.isfinite(filled[i - 1 : i + 2, j])):
            dy[k] += _parabola(filled[i - 1, j], filled[i, j], filled[i + 1, j])
        if 0 < j < n - 1 and np.all(np.isfinite(filled[i, j - 1 : j + 2])):
            dx[k] += _parabola(filled[i, j - 1], filled[i, j], filled[i, j + 1])
    return dy, dx


def _parabola(left: float, mid: float, right: float) -> float:
    curvature = left - 2.0 * mid + right
    if curvature >= 0:
        return 0.0
    return float(np.clip(0.5 * (left - right) / curvature, -0.5, 0.5))


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if a.size < 3:
        return math.nan
    a = a - a.mean()
    b = b - b.mean()
    denom = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / denom if denom > 0 else math.nan


def gridness(
    rate_map: np.ndarray | None = None,
    *,
    autocorr: np.ndarray | None = None,
    bin_size: float = 1.0,
    min_overlap: int = 20,
) -> GridScore:
    """Grid scores of a rate map by the autocorrelogram rotation method.

    ``classic = min(r60, r120) - max(r30, r90, r150)``, ``mean = mean(r60, r120) - mean(r30, r90,
    r150)``, ``score_90 = r90 - mean(r45, r135)``, each maximised over annuli around the nearest
    peaks (module docstring).

    Parameters
    ----------
    rate_map : array, shape (bins, bins), optional
        The map; NaN for unvisited bins. Give either this or ``autocorr``.
    autocorr : array, shape (2 bins - 1, 2 bins - 1), optional
        A precomputed :func:`autocorrelogram`.
    bin_size : float
        Side of a bin (e.g. metres), > 0; ``spacing`` and the radii are reported in this unit.
    min_overlap : int
        Passed to :func:`autocorrelogram` when ``rate_map`` is given.

    Returns
    -------
    GridScore

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.spatial.phases import grid_pattern
    >>> c = (np.arange(30) + 0.5) / 30
    >>> xy = np.stack(np.meshgrid(c, c), axis=-1)
    >>> g = gridness(np.maximum(grid_pattern(xy, 0.5), 0), bin_size=1 / 30)
    >>> bool(g.classic > 0.8), bool(abs(g.spacing - 0.5) < 0.05)
    (True, True)
    """
    if (rate_map is None) == (autocorr is None):
        raise BadInput("give exactly one of rate_map and autocorr, got "
                       f"{'both' if rate_map is not None else 'neither'}")
    if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
        raise BadInput(f"bin_size must be a number > 0, got {bin_size!r}", param="bin_size")
    if rate_map is not None:
        m = np.asarray(rate_map, dtype=float)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise BadInput(f"rate_map must be a square array (bins, bins), got shape {m.shape}",
                           param="rate_map")
        autocorr = autocorrelogram(m, min_overlap=min_overlap)
    return _gridness(_check_autocorr(autocorr), float(bin_size))


def _gridness(a: np.ndarray, bin_size: float) -> GridScore:
    nan = math.nan
    n = a.shape[0]
    c = n // 2
    yy, xx = np.mgrid[-c : c + 1, -c : c + 1].astype(float)
    radius = np.hypot(yy, xx)
    valid = np.isfinite(a)
    if valid.sum() < 10:
        return GridScore(nan, nan, nan, nan, nan, nan, nan, dict.fromkeys(ROTATIONS, nan))

    r_in = _central_radius(a, radius)
    spacing, orientation, outer = _lattice_and_rings(a, radius, r_in, c, bin_size)
    best = _best_ring_scores(a, valid, radius, r_in, outer)
    classic, r_out, corr = best.get("classic", (nan, nan, dict.fromkeys(ROTATIONS, nan)))
    return GridScore(
        classic=classic,
        mean=best.get("mean", (nan,))[0],
        score_90=best.get("score_90", (nan,))[0],
        spacing=spacing,
        orientation=orientation,
        inner_radius=r_in * bin_size,
        outer_radius=r_out * bin_size,
        correlations=corr,
    )


def _lattice_and_rings(a: np.ndarray, radius: np.ndarray, r_in: float, c: int,
                       bin_size: float) -> tuple[float, float, np.ndarray]:
    """Spacing (in the unit of ``bin_size``) and orientation (in ``[0, pi/3)``) of the six
    nearest autocorrelogram peaks (NaN without peaks), and the outer radii (bins) of the rings
    to score: from the nearest peak plus ``r_in`` to plus ``1.5 r_in``, capped at the
    correlogram's half width ``c``."""
    dy, dx = _peaks(a, radius, r_in)
    dist = np.hypot(dy, dx)
    r_max = float(c)
    if dist.size:
        order = np.argsort(dist)
        d1 = float(dist[order[0]])
        near = order[: 6][dist[order[:6]] <= 1.3 * d1]
        spacing = float(np.median(dist[near])) * bin_size
        angles = np.arctan2(dy[near], dx[near])
        orientation = float(np.angle(np.exp(6j * angles).sum()) / 6.0) % (math.pi / 3.0)
        floor = _MIN_OUTER_FRACTION * c
        lo, hi = max(d1 + r_in, floor), max(d1 + 1.5 * r_in, floor)
    else:
        spacing = orientation = math.nan
        lo, hi = r_in + 2.0, r_max
    outer = np.arange(min(lo, r_max), min(hi, r_max) + 1e-9, 1.0)
    if outer.size == 0:
        outer = np.array([r_max])
    return spacing, orientation, outer


def _best_ring_scores(a: np.ndarray, valid: np.ndarray, radius: np.ndarray, r_in: float,
                      outer: np.ndarray) -> dict[str, tuple[float, float, dict[int, float]]]:
    """For each score (``classic``, ``mean``, ``score_90``), its best finite value over the
    rings ``r_in < radius <= r_out`` of ``outer``, with that ``r_out`` and the ring's rotation
    correlations (a score never finite is absent)."""
    filled = np.where(valid, a, 0.0)
    rotated = {}
    for angle in ROTATIONS:
        r_a = ndimage.rotate(filled, angle, reshape=False, order=1, mode="constant", cval=0.0)
        v_a = ndimage.rotate(valid.astype(float), angle, reshape=False, order=1, mode="constant")
        rotated[angle] = (r_a, v_a > 1.0 - 1e-6)

    best: dict[str, tuple[float, float, dict[int, float]]] = {}
    for r_out in outer:
        ring = valid & (radius > r_in) & (radius <= r_out)
        corr = {}
        for angle, (r_a, v_a) in rotated.items():
            sel = ring & v_a
            corr[angle] = _pearson(a[sel], r_a[sel])
        scores = {
            "classic": min(corr[60], corr[120]) - max(corr[30], corr[90], corr[150]),
            "mean": (corr[60] + corr[120]) / 2 - (corr[30] + corr[90] + corr[150]) / 3,
            "score_90": corr[90] - (corr[45] + corr[135]) / 2,
        }
        for key, value in scores.items():
            if math.isfinite(value) and (key not in best or value > best[key][0]):
                best[key] = (value, float(r_out), corr)
    return best


def grid_scores(
    maps: RateMaps | np.ndarray, bin_size: float | None = None, min_overlap: int = 20
) -> GridScores:
    """Grid scores of every cell.

    One autocorrelogram per map (batched FFT), then :func:`gridness` on each.

    Parameters
    ----------
    maps : RateMaps or array, shape (cells, bins, bins)
    bin_size : float, optional
        Side of a bin; taken from ``maps`` when it is a RateMaps, else 1 (bins) when omitted.
    min_overlap : int
        As in :func:`autocorrelogram`.

    Returns
    -------
    GridScores
        ``classic``, ``mean``, ``score_90``, ``spacing``, ``orientation``, each (cells,).
    """
    if isinstance(maps, RateMaps):
        bin_size = maps.bin_size if bin_size is None else bin_size
        arr = maps.maps
    else:
        arr = np.asarray(maps, dtype=float)
    bin_size = 1.0 if bin_size is None else bin_size
    if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
        raise BadInput(f"bin_size must be a number > 0, got {bin_size!r}", param="bin_size")
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise BadInput(f"maps must have shape (cells, bins, bins), got shape {arr.shape}",
                       param="maps")
    autocorrs = autocorrelogram(arr, min_overlap=min_overlap)
    results = [_gridness(_check_autocorr(a), float(bin_size)) for a in autocorrs]
    return GridScores(
        classic=np.array([g.classic for g in results]),
        mean=np.array([g.mean for g in results]),
        score_90=np.array([g.score_90 for g in results]),
        spacing=np.array([g.spacing for g in results]),
        orientation=np.array([g.orientation for g in results]),
    )


def fraction_above(scores: np.ndarray, threshold: float) -> float:
    """Fraction of cells whose score is at or above a threshold.

    ``f = #{c : s_c >= threshold} / #cells``; NaN scores count as below.

    Parameters
    ----------
    scores : array, shape (cells,)
    threshold : float

    Returns
    -------
    float in [0, 1]
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise BadInput(f"scores must be a non-empty array of shape (cells,), got shape {s.shape}",
                       param="scores")
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or math.isnan(threshold):
        raise BadInput(f"threshold must be a real number, got {threshold!r}", param="threshold")
    return float(np.mean(np.where(np.isfinite(s), s, -np.inf) >= threshold))
