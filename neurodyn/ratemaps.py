r"""Spatial rate maps, their autocorrelograms and grid scores.

Rate maps
---------
The box ``[0, L]^2`` is split into ``bins x bins`` square bins. For cell ``c`` and bin ``b``

    occupancy_b = #{t : x_t in b},     map_{c,b} = sum_{t : x_t in b} r_{t,c} / occupancy_b,

NaN where ``occupancy_b = 0``. With smoothing, the rate sums and the occupancy are each convolved
with a Gaussian of standard deviation ``smoothing`` bins (zero outside the box) before dividing, and
bins never visited stay NaN. Maps are indexed ``maps[cell, iy, ix]`` (row = y, column = x), so
``imshow(map, origin='lower', extent=(0, L, 0, L))`` draws them in box coordinates.

Autocorrelogram
---------------
For a lag ``tau = (dy, dx)`` (in bins) the autocorrelogram is the Pearson correlation between the
map and its shifted copy over the ``n(tau)`` bin pairs where both are visited (Hafting et al. 2005;
Sargolini et al. 2006):

    A(tau) = (n S_xy - S_x S_y) / sqrt((n S_xx - S_x^2) (n S_yy - S_y^2)),

with ``S_x = sum x_p``, ``S_xy = sum x_p y_{p+tau}`` ... over the valid pairs. All sums are
cross-correlations of the zero-filled map, its square and its validity mask, computed with
zero-padded FFTs. Lags with fewer than ``min_overlap`` pairs are NaN. ``A`` has shape
``(2 ny - 1, 2 nx - 1)`` with zero lag at the centre, where ``A = 1``; ``A(-tau) = A(tau)``.

Grid scores
-----------
With ``r_alpha`` the Pearson correlation, inside an annulus, between the autocorrelogram and its
copy rotated by ``alpha`` degrees:

- ``classic = min(r60, r120) - max(r30, r90, r150)`` (Sargolini et al. 2006);
- ``mean = mean(r60, r120) - mean(r30, r90, r150)`` (the mean form, e.g. Brandon et al. 2011);
- ``score_90 = r90 - mean(r45, r135)``: four-fold (square) symmetry.

The annulus excludes the central peak and holds the ring of nearest peaks. Its inner radius
``r_in`` is the radius of the central peak: the first radius at which the ring-averaged
autocorrelogram becomes negative or reaches a local minimum. Its outer radius ranges from
``d1 + r_in`` (the nearest peaks, each about the central peak's size, lie wholly inside) to
``d1 + 3 r_in / 2`` in steps of one bin, ``d1`` being the distance to the nearest peak, and is never
below 0.35 of the autocorrelogram's half-width (about a third of the box side), so that the annulus
holds enough bins for a stable correlation. Each score is the largest over these annuli. Without
any peak the outer radius ranges from ``r_in + 2`` bins to the half-width. Rotations are bilinear;
a bin enters a correlation only when it and every bin its rotated value draws on are defined.

``spacing`` is the median distance from the centre to the nearest peaks (up to six, within
``1.3 d1``, located to sub-bin precision by parabolic interpolation), and ``orientation`` their mean
angle modulo 60 degrees, ``arg(sum_j exp(6 i phi_j)) / 6``. A hexagonal pattern whose wave vector
``k1`` points at angle ``theta`` (see :mod:`neurodyn.agent`) has its nearest peaks at
``theta + 30 deg (mod 60 deg)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from scipy import ndimage, sparse
from scipy.signal import fftconvolve

from neurodyn.agent import Box, check_positions

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "RateMaps",
    "GridScore",
    "GridScores",
    "rate_maps",
    "autocorrelogram",
    "gridness",
    "grid_scores",
    "fraction_above",
    "plot_rate_maps",
    "plot_autocorrelogram",
]

ROTATIONS: tuple[int, ...] = (30, 45, 60, 90, 120, 135, 150)
# smallest outer radius of the annulus, as a fraction of the autocorrelogram's half-width
_MIN_OUTER_FRACTION = 0.35


@dataclass(frozen=True)
class RateMaps:
    """Binned firing rates of a population.

    Attributes
    ----------
    maps : array, shape (cells, bins, bins)
        Mean rate per bin, ``maps[cell, iy, ix]``; NaN in unvisited bins.
    x_edges, y_edges : array, shape (bins + 1,)
        Bin edges in metres.
    occupancy : array, shape (bins, bins)
        Number of samples in each bin, ``occupancy[iy, ix]``.
    """

    maps: np.ndarray
    x_edges: np.ndarray
    y_edges: np.ndarray
    occupancy: np.ndarray

    @property
    def bin_size(self) -> float:
        """Side of a bin in metres."""
        return float(self.x_edges[1] - self.x_edges[0])


@dataclass(frozen=True)
class GridScore:
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
class GridScores:
    """Grid scores of a population, one entry per cell, each array of shape (cells,)."""

    classic: np.ndarray
    mean: np.ndarray
    score_90: np.ndarray
    spacing: np.ndarray
    orientation: np.ndarray


# --------------------------------------------------------------------------------------------------
# rate maps


def _bins_from(box: Box, bins: int | None, bin_size: float | None) -> int:
    if bin_size is not None:
        if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
            raise ValueError(f"bin_size must be a number > 0 (metres), got {bin_size!r}")
        n = int(round(box.size / bin_size))
        if n < 1 or abs(n * bin_size - box.size) > 1e-6 * box.size:
            raise ValueError(
                f"bin_size must divide the box size {box.size} m into a whole number of bins, "
                f"got {bin_size}"
            )
        return n
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 1:
        raise ValueError(f"bins must be an integer >= 1, got {bins!r}")
    return int(bins)


def rate_maps(
    positions: np.ndarray,
    rates: np.ndarray,
    box: Box | None = None,
    bins: int = 20,
    *,
    bin_size: float | None = None,
    smoothing: float | None = None,
) -> RateMaps:
    """Bin each cell's rate over the visited positions.

    ``map_{c,b} = sum_{t: x_t in b} r_{t,c} / #{t: x_t in b}`` (NaN for unvisited bins), optionally
    ``(G * S)_b / (G * O)_b`` with a Gaussian ``G`` of ``smoothing`` bins.

    Parameters
    ----------
    positions : array, shape (steps, 2)
        Positions in metres, inside ``box``.
    rates : array, shape (steps, cells)
        Rate of every cell at every sample; finite.
    box : Box, optional
        The arena (default ``Box(1.0)``).
    bins : int
        Bins per side, >= 1 (ignored when ``bin_size`` is given).
    bin_size : float, optional
        Side of a bin in metres; must divide the box size.
    smoothing : float, optional
        Standard deviation of the Gaussian smoothing in bins, >= 0; none when omitted or 0.

    Returns
    -------
    RateMaps
        ``maps`` (cells, bins, bins), ``x_edges`` and ``y_edges`` (bins + 1,), ``occupancy``
        (bins, bins).

    Examples
    --------
    >>> import numpy as np
    >>> pos = np.random.default_rng(0).uniform(0, 1, (5000, 2))
    >>> rm = rate_maps(pos, pos[:, :1], bins=10)
    >>> rm.maps.shape, bool(abs(rm.maps[0, 0, 9] - 0.95) < 0.01)
    ((1, 10, 10), True)
    """
    box = Box() if box is None else box
    if not isinstance(box, Box):
        raise TypeError(f"box must be a Box, got {box!r}")
    n = _bins_from(box, bins, bin_size)
    positions = np.asarray(positions, dtype=float)
    rates = np.asarray(rates, dtype=float)
    if positions.ndim != 2 or positions.shape[1] != 2:
        raise ValueError(f"positions must have shape (steps, 2), got shape {positions.shape}")
    if rates.ndim != 2:
        raise ValueError(f"rates must have shape (steps, cells), got shape {rates.shape}")
    if rates.shape[0] != positions.shape[0]:
        raise ValueError(
            f"rates must have as many steps as positions ({positions.shape[0]}), "
            f"got shape {rates.shape}"
        )
    check_positions(positions, box)
    if not np.all(np.isfinite(rates)):
        raise ValueError("rates must be finite, got non-finite values")
    if smoothing is not None and (
        isinstance(smoothing, bool) or not isinstance(smoothing, Real) or not smoothing >= 0
    ):
        raise ValueError(f"smoothing must be a number >= 0 (bins) or None, got {smoothing!r}")

    idx = np.minimum((positions * (n / box.size)).astype(np.intp), n - 1)
    flat = idx[:, 1] * n + idx[:, 0]  # row-major (iy, ix)
    steps = positions.shape[0]
    binner = sparse.csr_matrix(
        (np.ones(steps), (flat, np.arange(steps))), shape=(n * n, steps)
    )
    sums = np.asarray(binner @ rates).T.reshape(rates.shape[1], n, n)
    occupancy = np.bincount(flat, minlength=n * n).astype(float).reshape(n, n)
    visited = occupancy > 0
    if smoothing:
        sums = ndimage.gaussian_filter(sums, sigma=(0, smoothing, smoothing), mode="constant")
        occ = ndimage.gaussian_filter(occupancy, sigma=smoothing, mode="constant")
    else:
        occ = occupancy
    maps = np.full_like(sums, np.nan)
    np.divide(sums, occ, out=maps, where=visited & (occ > 0))
    edges = np.linspace(0.0, box.size, n + 1)
    return RateMaps(maps=maps, x_edges=edges, y_edges=edges.copy(), occupancy=occupancy)


# --------------------------------------------------------------------------------------------------
# autocorrelogram


def _xcorr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full cross-correlation ``C[tau] = sum_p a[p] b[p + tau]`` over the last two axes."""
    return fftconvolve(b, a[..., ::-1, ::-1], mode="full", axes=(-2, -1))


def autocorrelogram(rate_map: np.ndarray, min_overlap: int = 20) -> np.ndarray:
    """NaN-aware spatial autocorrelogram of rate maps.

    ``A(tau) = (n S_xy - S_x S_y) / sqrt((n S_xx - S_x^2)(n S_yy - S_y^2))`` over the bin pairs
    ``(p, p + tau)`` where both bins are finite.

    Parameters
    ----------
    rate_map : array, shape (..., ny, nx)
        One map or a stack of maps; NaN marks unvisited bins.
    min_overlap : int
        Lags with fewer valid pairs than this are NaN, >= 2.

    Returns
    -------
    autocorr : array, shape (..., 2 ny - 1, 2 nx - 1)
        Zero lag at index ``(ny - 1, nx - 1)``; ``autocorr[..., ny - 1 + dy, nx - 1 + dx]`` is the
        correlation of the map with itself shifted by ``dy`` rows and ``dx`` columns. NaN where
        undefined (too little overlap or zero variance).
    """
    m = np.asarray(rate_map, dtype=float)
    if m.ndim < 2 or min(m.shape[-2:]) < 2:
        raise ValueError(f"rate_map must have shape (..., ny, nx) with ny, nx >= 2, got {m.shape}")
    if isinstance(min_overlap, bool) or not isinstance(min_overlap, Integral) or min_overlap < 2:
        raise ValueError(f"min_overlap must be an integer >= 2, got {min_overlap!r}")
    valid = np.isfinite(m)
    w = valid.astype(float)
    # centre on the mean of the valid bins: the correlation is unchanged, the sums better scaled
    count = w.sum(axis=(-2, -1), keepdims=True)
    total = np.where(valid, m, 0.0).sum(axis=(-2, -1), keepdims=True)
    centre = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    x = np.where(valid, m - centre, 0.0)
    n = np.rint(_xcorr(w, w))
    sx = _xcorr(x, w)
    sy = _xcorr(w, x)
    sxx = _xcorr(x * x, w)
    syy = _xcorr(w, x * x)
    sxy = _xcorr(x, x)
    var_x = n * sxx - sx * sx
    var_y = n * syy - sy * sy
    scale = np.maximum(np.abs(n * sxx) + sx * sx, np.abs(n * syy) + sy * sy)
    ok = (n >= min_overlap) & (var_x > 1e-12 * scale) & (var_y > 1e-12 * scale)
    out = np.full(n.shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(n * sxy - sx * sy, np.sqrt(np.where(ok, var_x * var_y, 1.0)), out=out, where=ok)
    return np.clip(out, -1.0, 1.0, out=out)


# --------------------------------------------------------------------------------------------------
# grid scores


def _check_autocorr(autocorr: np.ndarray) -> np.ndarray:
    a = np.asarray(autocorr, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] % 2 == 0 or a.shape[0] < 5:
        raise ValueError(
            f"autocorr must be a square array of odd size >= 5 (2 bins - 1), got shape {a.shape}"
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
    >>> from neurodyn.agent import grid_pattern
    >>> c = (np.arange(30) + 0.5) / 30
    >>> xy = np.stack(np.meshgrid(c, c), axis=-1)
    >>> g = gridness(np.maximum(grid_pattern(xy, 0.5), 0), bin_size=1 / 30)
    >>> bool(g.classic > 0.8), bool(abs(g.spacing - 0.5) < 0.05)
    (True, True)
    """
    if (rate_map is None) == (autocorr is None):
        raise ValueError("give exactly one of rate_map and autocorr, got "
                         f"{'both' if rate_map is not None else 'neither'}")
    if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
        raise ValueError(f"bin_size must be a number > 0, got {bin_size!r}")
    if rate_map is not None:
        m = np.asarray(rate_map, dtype=float)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(f"rate_map must be a square array (bins, bins), got shape {m.shape}")
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
        spacing = orientation = nan
        lo, hi = r_in + 2.0, r_max
    outer = np.arange(min(lo, r_max), min(hi, r_max) + 1e-9, 1.0)
    if outer.size == 0:
        outer = np.array([r_max])

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
        raise ValueError(f"bin_size must be a number > 0, got {bin_size!r}")
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(f"maps must have shape (cells, bins, bins), got shape {arr.shape}")
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
        raise ValueError(f"scores must be a non-empty array of shape (cells,), got shape {s.shape}")
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or math.isnan(threshold):
        raise ValueError(f"threshold must be a real number, got {threshold!r}")
    return float(np.mean(np.where(np.isfinite(s), s, -np.inf) >= threshold))


# --------------------------------------------------------------------------------------------------
# plotting


def _viridis_blank_nan():
    import matplotlib

    return matplotlib.colormaps["viridis"].with_extremes(bad=(0.0, 0.0, 0.0, 0.0))


def plot_rate_maps(
    maps: RateMaps,
    cells: np.ndarray | list[int] | None = None,
    ncols: int = 8,
    fig: Figure | None = None,
) -> Figure:
    """Draw a panel of rate maps on one colour scale.

    Parameters
    ----------
    maps : RateMaps
    cells : sequence of int, optional
        Cells to draw (default: the first ``min(cells, 32)``).
    ncols : int
        Panels per row, >= 1.
    fig : matplotlib Figure, optional
        Figure to draw into (it is cleared); a new one is created when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        Unvisited bins are blank; the colour bar is labelled 'rate'. The caller closes it.
    """
    from matplotlib.figure import Figure

    if not isinstance(maps, RateMaps):
        raise TypeError(f"maps must be a RateMaps, got {type(maps).__name__}")
    total = maps.maps.shape[0]
    cells = np.arange(min(total, 32)) if cells is None else np.asarray(cells)
    if cells.ndim != 1 or cells.size == 0 or cells.dtype.kind not in "iu":
        raise ValueError(f"cells must be a non-empty sequence of integers, got {cells!r}")
    if cells.min() < 0 or cells.max() >= total:
        raise ValueError(f"cells must lie in [0, {total - 1}], got {cells.tolist()}")
    if isinstance(ncols, bool) or not isinstance(ncols, Integral) or ncols < 1:
        raise ValueError(f"ncols must be an integer >= 1, got {ncols!r}")
    ncols = min(int(ncols), cells.size)
    nrows = -(-cells.size // ncols)
    if fig is None:
        fig = Figure(figsize=(1.6 * ncols + 0.8, 1.6 * nrows), layout="constrained")
    else:
        fig.clear()
    shown = maps.maps[cells]
    finite = shown[np.isfinite(shown)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    extent = (maps.x_edges[0], maps.x_edges[-1], maps.y_edges[0], maps.y_edges[-1])
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    cmap = _viridis_blank_nan()
    image = None
    for k, ax in enumerate(axes.flat):
        if k >= cells.size:
            ax.set_axis_off()
            continue
        image = ax.imshow(shown[k], origin="lower", extent=extent, cmap=cmap, vmin=vmin,
                          vmax=vmax, interpolation="nearest")
        ax.set_title(f"cell {int(cells[k])}", fontsize="small")
        ax.set_aspect("equal")
        if k % ncols == 0:
            ax.set_ylabel("y (m)")
        if k // ncols == nrows - 1 or k + ncols >= cells.size:
            ax.set_xlabel("x (m)")
    fig.colorbar(image, ax=axes, label="rate", shrink=0.8)
    return fig


def plot_autocorrelogram(
    autocorr: np.ndarray,
    bin_size: float = 1.0,
    score: GridScore | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw an autocorrelogram, optionally with its grid-score annulus.

    Parameters
    ----------
    autocorr : array, shape (2 bins - 1, 2 bins - 1)
    bin_size : float
        Side of a bin in metres (axes show the lag in metres), > 0.
    score : GridScore, optional
        Draws the annulus and writes the scores in the title.
    ax : matplotlib Axes, optional
        A new figure is created when omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    a = _check_autocorr(autocorr)
    if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
        raise ValueError(f"bin_size must be a number > 0, got {bin_size!r}")
    if ax is None:
        fig = Figure(figsize=(4.2, 3.6), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    half = (a.shape[0] // 2 + 0.5) * bin_size
    cmap = _viridis_blank_nan()
    image = ax.imshow(a, origin="lower", extent=(-half, half, -half, half), cmap=cmap,
                      vmin=-1.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="correlation")
    if score is not None:
        for r in (score.inner_radius, score.outer_radius):
            if math.isfinite(r):
                ax.add_patch(Circle((0, 0), r, fill=False, color="w", linestyle="--", lw=1))
        ax.set_title(f"gridness {score.classic:.2f} (mean {score.mean:.2f}, "
                     f"90: {score.score_90:.2f})", fontsize="small")
    ax.set_aspect("equal")
    ax.set_xlabel("lag x (m)")
    ax.set_ylabel("lag y (m)")
    return fig
