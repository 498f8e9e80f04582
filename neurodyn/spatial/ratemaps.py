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
``k1`` points at angle ``theta`` (see :mod:`neurodyn.spatial.agent`) has its nearest peaks at
``theta + 30 deg (mod 60 deg)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy import ndimage, sparse
from scipy.signal import fftconvolve

from _runkit import BadInput, BadType
from _runkit.results import Result

from .agent import Box
from .positions import check_positions

__all__ = ["RateMaps", "rate_maps", "autocorrelogram"]


@dataclass(frozen=True)
class RateMaps(Result):
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


# --------------------------------------------------------------------------------------------------
# rate maps


def _bins_from(box: Box, bins: int | None, bin_size: float | None) -> int:
    if bin_size is not None:
        if isinstance(bin_size, bool) or not isinstance(bin_size, Real) or not bin_size > 0:
            raise BadInput(f"bin_size must be a number > 0 (metres), got {bin_size!r}",
                           param="bin_size")
        n = int(round(box.size / bin_size))
        if n < 1 or abs(n * bin_size - box.size) > 1e-6 * box.size:
            raise BadInput(
                f"bin_size must divide the box size {box.size} m into a whole number of bins, "
                f"got {bin_size}", param="bin_size"
            )
        return n
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 1:
        raise BadInput(f"bins must be an integer >= 1, got {bins!r}", param="bins")
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
        raise BadType(f"box must be a Box, got {box!r}", param="box")
    n = _bins_from(box, bins, bin_size)
    positions, rates = _checked_samples(positions, rates, box, smoothing)
    sums, occupancy = _binned(positions, rates, n, box.size)
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


def _checked_samples(positions, rates, box: Box, smoothing) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(steps, 2)`` inside ``box`` and finite rates ``(steps, cells)`` as float
    arrays; ``BadInput`` for bad shapes or values, or a smoothing that is not a number >= 0."""
    positions = np.asarray(positions, dtype=float)
    rates = np.asarray(rates, dtype=float)
    if positions.ndim != 2 or positions.shape[1] != 2:
        raise BadInput(f"positions must have shape (steps, 2), got shape {positions.shape}",
                       param="positions")
    if rates.ndim != 2:
        raise BadInput(f"rates must have shape (steps, cells), got shape {rates.shape}",
                       param="rates")
    if rates.shape[0] != positions.shape[0]:
        raise BadInput(
            f"rates must have as many steps as positions ({positions.shape[0]}), "
            f"got shape {rates.shape}", param="rates"
        )
    check_positions(positions, box)
    if not np.all(np.isfinite(rates)):
        raise BadInput("rates must be finite, got non-finite values", param="rates")
    if smoothing is not None and (
        isinstance(smoothing, bool) or not isinstance(smoothing, Real) or not smoothing >= 0
    ):
        raise BadInput(f"smoothing must be a number >= 0 (bins) or None, got {smoothing!r}",
                       param="smoothing")
    return positions, rates


def _binned(positions: np.ndarray, rates: np.ndarray, n: int, size: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's summed rate per bin ``(cells, n, n)`` and the samples per bin ``(n, n)``
    (``[iy, ix]``) on an ``n x n`` grid over a box of side ``size``."""
    idx = np.minimum((positions * (n / size)).astype(np.intp), n - 1)
    flat = idx[:, 1] * n + idx[:, 0]  # row-major (iy, ix)
    steps = positions.shape[0]
    binner = sparse.csr_matrix(
        (np.ones(steps), (flat, np.arange(steps))), shape=(n * n, steps)
    )
    sums = np.asarray(binner @ rates).T.reshape(rates.shape[1], n, n)
    occupancy = np.bincount(flat, minlength=n * n).astype(float).reshape(n, n)
    return sums, occupancy


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
        raise BadInput(f"rate_map must have shape (..., ny, nx) with ny, nx >= 2, got {m.shape}",
                       param="rate_map")
    if isinstance(min_overlap, bool) or not isinstance(min_overlap, Integral) or min_overlap < 2:
        raise BadInput(f"min_overlap must be an integer >= 2, got {min_overlap!r}",
                       param="min_overlap")
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
