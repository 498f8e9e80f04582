"""Persistent homology of population activity: barcodes and Betti numbers.

Activity on a ring attractor lies on a circle, Betti numbers (b0, b1, b2) = (1, 1, 0); activity on a
torus attractor lies on a torus, (1, 2, 1). This module measures that from samples of activity.

Pipeline of :func:`persistent_homology`:

1. optional projection onto the leading principal components (``pca_components``): for a bump on
   a ring or a torus these are its low Fourier modes, which already embed the manifold, while
   isotropic noise spread over all N neurons is removed; without it the noise inflates every
   distance by about sqrt(2 N) sigma and drowns the short topological bars;
2. greedy max-min (farthest-point) landmarks, at most ``max_points`` of them, seeded: they cover
   the cloud evenly, so the Vietoris-Rips filtration of the landmarks is within twice the cover
   radius (bottleneck distance) of that of the whole cloud;
3. Vietoris-Rips persistent homology of the landmarks with ripser (the optional extra
   ``neurodyn-flows[topology]``), with coefficients in Z/pZ.

:func:`betti_numbers` counts the bars that are long; its default threshold is described there.
The barcode and the persistence diagram are drawn by :mod:`neurodyn.plotting.topology`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from _runkit import BadInput, BadType
from _runkit.results import Result

__all__ = [
    "Homology",
    "TopologyDependencyError",
    "persistent_homology",
    "betti_numbers",
    "long_bar_thresholds",
    "ATTRACTOR_BETTI",
]

#: Betti numbers (to dimension 2) of the attractor manifold, by its dimension: ring, torus
ATTRACTOR_BETTI = {1: (1, 1, 0), 2: (1, 2, 1)}

class TopologyDependencyError(ImportError):
    """Raised when the optional dependency ripser is not installed."""


@dataclass(frozen=True)
class Homology(Result):
    """Vietoris-Rips persistence diagrams of a point cloud.

    Attributes
    ----------
    diagrams : tuple of ndarray, each of shape (bars, 2)
        ``diagrams[k][i] = (birth, death)`` of the i-th bar in dimension k, in units of the
        (projected) input distances. The one H0 bar that never dies has ``death = inf``.
    diameter : float
        Largest distance between landmarks: the scale at which the Rips complex becomes a cone
        and every finite bar has died.
    cover_radius : float
        Largest distance from any sample to its nearest landmark (0 when all samples were used).
    landmarks : ndarray of int, shape (landmarks,)
        Rows of the input used as landmarks, in the order they were chosen.
    n_samples : int
        Number of rows of the input.
    coeff : int
        Prime p of the coefficient field Z/pZ.
    metric : str
        Distance used (``"precomputed"`` for a distance-matrix input).
    pca_components : int or None
        Number of principal components the samples were projected on (``None``: not projected).
    """

    diagrams: tuple[np.ndarray, ...]
    diameter: float
    cover_radius: float
    landmarks: np.ndarray
    n_samples: int
    coeff: int = 2
    metric: str = "euclidean"
    pca_components: int | None = None

    @property
    def maxdim(self) -> int:
        """Highest homology dimension computed."""
        return len(self.diagrams) - 1

    def lifetimes(self, dim: int) -> np.ndarray:
        """Bar lengths ``death - birth`` in dimension ``dim``, shape (bars,), longest first."""
        if not 0 <= dim <= self.maxdim:
            raise BadInput(
                f"dim={dim} is not allowed; this homology has dimensions 0..{self.maxdim}",
                param="dim"
            )
        d = self.diagrams[dim]
        return np.sort(d[:, 1] - d[:, 0])[::-1]

    def betti(self, threshold: float | Sequence[float] | None = None) -> tuple[int, ...]:
        """Betti numbers, see :func:`betti_numbers`."""
        return betti_numbers(self, threshold)


def _import_ripser():
    try:
        from ripser import ripser
    except ImportError as exc:  # pragma: no cover - exercised through a monkeypatched import
        raise TopologyDependencyError(
            "persistent homology needs the optional dependency 'ripser'; install it with "
            "`pip install neurodyn-flows[topology]`"
        ) from exc
    return ripser


def _check_int(value: int, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise BadType(f"{name} must be an int; got {value!r}", param=name)
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise BadInput(f"{name}={value} is not allowed; it must be {allowed}", param=name)
    return int(value)


def _leading_subspace(Xc: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Orthonormal basis (features, k) of the top-k principal subspace of centred rows.

    Randomised range finder with power iterations (Halko, Martinsson & Tropp 2011):
    ``Q = orth((Xc^T Xc)^q Xc^T Omega)``, then the exact SVD of the small projection.
    """
    n, d = Xc.shape
    width = min(d, k + 10)
    Q = np.linalg.qr(Xc.T @ rng.normal(size=(n, width)))[0]
    for _ in range(4):
        Q = np.linalg.qr(Xc.T @ (Xc @ Q))[0]
    _, _, vt = np.linalg.svd(Xc @ Q, full_matrices=False)
    return Q @ vt[:k].T


def _maxmin(
    points: np.ndarray, m: int, rng: np.random.Generator, metric: str, precomputed: bool
) -> tuple[np.ndarray, float]:
    """Greedy max-min landmarks and the cover radius."""
    n = points.shape[0]
    if n <= m:
        return np.arange(n), 0.0

    def row(i: int) -> np.ndarray:
        if precomputed:
            return points[i]
        return cdist(points[i : i + 1], points, metric=metric)[0]

    chosen = np.empty(m, dtype=np.int64)
    chosen[0] = int(rng.integers(n))
    dist = row(int(chosen[0])).copy()
    for j in range(1, m):
        chosen[j] = int(np.argmax(dist))
        np.minimum(dist, row(int(chosen[j])), out=dist)
    return chosen, float(dist.max())


def persistent_homology(
    X: np.ndarray,
    maxdim: int = 2,
    max_points: int = 250,
    seed: int | np.random.Generator = 0,
    metric: str = "euclidean",
    coeff: int = 2,
    distance_matrix: bool = False,
    pca_components: int | None = 10,
) -> Homology:
    """Vietoris-Rips persistent homology of sampled activity, on max-min landmarks.

    ``Dgm_k = PH_k( Rips_r(L) ; Z/pZ )``, r from 0 to diam(L), with L the landmarks of
    ``P X`` (``P`` the projection on the leading principal components).

    Parameters
    ----------
    X : array_like, shape (samples, features) or (samples, samples)
        Population activity (one row per sample), or a symmetric distance matrix when
        ``distance_matrix=True``.
    maxdim : int
        Highest homology dimension, 0..3. Dimension 2 on 250 landmarks takes seconds.
    max_points : int
        Maximum number of landmarks (>= 2). The default keeps a torus in dimension 2 within a
        few seconds and is enough for rings and tori sampled by a few thousand activity vectors.
    seed : int or numpy.random.Generator
        Seeds the first landmark and the randomised PCA; the result is reproducible.
    metric : str
        Any ``scipy.spatial.distance.cdist`` metric name. Ignored for a distance matrix.
    coeff : int
        Prime p of the coefficient field Z/pZ (2 is the usual choice; 3 tells a torus from a
        Klein bottle).
    distance_matrix : bool
        Treat ``X`` as a precomputed (samples, samples) distance matrix.
    pca_components : int or None
        Project the samples on this many leading principal components first (only for the
        Euclidean metric and only when ``features > pca_components``); ``None`` disables it.
        Ten keep the fundamental Fourier modes of a ring (2), a square torus (4) and a hexagonal
        torus (6) with room to spare.

    Returns
    -------
    Homology

    Raises
    ------
    TopologyDependencyError
        If ripser is not installed (``pip install neurodyn-flows[topology]``).

    Examples
    --------
    >>> t = np.linspace(0, 2 * np.pi, 100, endpoint=False)
    >>> h = persistent_homology(np.c_[np.cos(t), np.sin(t)], maxdim=1)
    >>> betti_numbers(h)
    (1, 1)
    """
    maxdim, max_points, coeff, pca_components, arr = _checked_samples(
        X, maxdim, max_points, coeff, pca_components)
    rng = np.random.default_rng(seed)
    arr, metric, used_pca = _prepared_samples(arr, distance_matrix, metric, pca_components, rng)
    ripser = _import_ripser()
    try:
        idx, cover = _maxmin(arr, max_points, rng, metric, distance_matrix)
    except ValueError as exc:
        raise BadInput(f"metric={metric!r} is not usable here: {exc}", param="metric") from exc
    if distance_matrix:
        D = arr[np.ix_(idx, idx)]
    else:
        D = cdist(arr[idx], arr[idx], metric=metric)
    result = ripser(D, maxdim=maxdim, coeff=coeff, distance_matrix=True)
    diagrams = tuple(np.asarray(d, dtype=np.float64).reshape(-1, 2) for d in result["dgms"])
    return Homology(
        diagrams=diagrams,
        diameter=float(D.max()),
        cover_radius=cover,
        landmarks=idx,
        n_samples=int(np.asarray(X).shape[0]),
        coeff=coeff,
        metric=metric,
        pca_components=used_pca,
    )


def _checked_samples(X, maxdim, max_points, coeff, pca_components):
    """:func:`persistent_homology`'s checked integers and ``X`` as a finite float64 array
    ``(samples, features)`` of at least 2 samples (``BadInput`` otherwise)."""
    maxdim = _check_int(maxdim, "maxdim", 0, 3)
    max_points = _check_int(max_points, "max_points", 2)
    coeff = _check_int(coeff, "coeff", 2)
    if any(coeff % p == 0 for p in range(2, int(coeff**0.5) + 1)):
        raise BadInput(f"coeff={coeff} is not allowed; it must be a prime", param="coeff")
    if pca_components is not None:
        pca_components = _check_int(pca_components, "pca_components", 1)
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise BadInput(f"X must be a 2-D array (samples, features); got shape {arr.shape}",
                       param="X")
    if arr.shape[0] < 2:
        raise BadInput(f"X has {arr.shape[0]} samples; at least 2 are needed", param="X")
    if not np.all(np.isfinite(arr)):
        raise BadInput("X contains non-finite entries (NaN or inf); all must be finite", param="X")
    return maxdim, max_points, coeff, pca_components, arr


def _prepared_samples(arr: np.ndarray, distance_matrix: bool, metric: str,
                      pca_components: int | None, rng: np.random.Generator):
    """``(arr, metric, pca components used)``: a checked distance matrix with the
    ``precomputed`` metric, or the samples projected on their leading principal components
    (Euclidean metric, more features than components), or the samples as they are."""
    if distance_matrix:
        if arr.shape[0] != arr.shape[1]:
            raise BadInput(
                f"X has shape {arr.shape}; with distance_matrix=True it must be square", param="X"
            )
        if not np.allclose(arr, arr.T) or np.any(arr < 0) or np.any(np.diag(arr) != 0):
            raise BadInput(
                "X is not a distance matrix (it must be symmetric, non-negative, zero diagonal)",
                param="X"
            )
        return arr, "precomputed", None
    if metric == "euclidean" and pca_components is not None and arr.shape[1] > pca_components:
        centred = arr - arr.mean(axis=0)
        return centred @ _leading_subspace(centred, pca_components, rng), metric, pca_components
    return arr, metric, None


def _gap_threshold(lifetimes: np.ndarray, top: float, bottom: float | None) -> float:
    """Middle of the widest gap in ``(top, l_1, l_2, ..., [bottom])``, lifetimes sorted down."""
    seq = np.r_[top, np.sort(lifetimes)[::-1]]
    if bottom is not None:
        seq = np.r_[seq, bottom]
    if seq.size < 2:
        return top
    gaps = seq[:-1] - seq[1:]
    i = int(np.argmax(gaps))
    return float(0.5 * (seq[i] + seq[i + 1]))


def long_bar_thresholds(homology: Homology) -> tuple[float, ...]:
    """Default lifetime threshold per dimension: the widest gap below half the diameter.

    For dimension k the finite lifetimes are sorted, ``l_1 >= l_2 >= ...``, and the sequence
    ``(diam / 2, l_1, l_2, ..., 0)`` is split at its widest gap; the threshold is the middle of
    that gap. In H0 the final 0 is left out (max-min landmarks are at least the cover radius
    apart, so no H0 bar is near 0 and the gap to 0 means nothing).

    Why: a topological feature of a manifold sampled at spacing s lives over a scale of the
    manifold's own size (a circle's H1 bar from ~s to ~sqrt(3) times its radius), while sampling
    and noise bars have lifetimes of order s, and every bar dies by the diameter. The widest gap
    separates the two families without a tuned constant; the anchor at diam/2 lets a dimension
    have no long bar at all (its noise bars sit far below diam/2), and a real feature is counted
    when it is longer than about diam/4 and well separated from the noise.

    Parameters
    ----------
    homology : Homology

    Returns
    -------
    tuple of float, length maxdim + 1
        Thresholds in filtration units.
    """
    out = []
    for k, dgm in enumerate(homology.diagrams):
        life = dgm[:, 1] - dgm[:, 0]
        life = life[np.isfinite(life)]
        out.append(_gap_threshold(life, 0.5 * homology.diameter, None if k == 0 else 0.0))
    return tuple(out)


def betti_numbers(
    homology: Homology, threshold: float | Sequence[float] | None = None
) -> tuple[int, ...]:
    """Number of long bars per dimension.

    ``b_k = #{ bars i in Dgm_k : death_i - birth_i > tau_k }``; the infinite H0 bar always counts.

    Parameters
    ----------
    homology : Homology
    threshold : float or sequence of float or None
        Lifetime ``tau_k`` a bar must exceed (one per dimension, or one for all), in filtration
        units. ``None`` uses :func:`long_bar_thresholds` (widest gap below half the
        diameter, per dimension).

    Returns
    -------
    tuple of int, length maxdim + 1
        ``(b0, b1, b2)`` for ``maxdim=2``.
    """
    if not isinstance(homology, Homology):
        raise BadType(f"homology must be a Homology; got {type(homology).__name__}",
                      param="homology")
    n = homology.maxdim + 1
    if threshold is None:
        taus = long_bar_thresholds(homology)
    elif np.ndim(threshold) == 0:
        taus = (float(threshold),) * n
    else:
        taus = tuple(float(t) for t in threshold)
        if len(taus) != n:
            raise BadInput(
                f"threshold has {len(taus)} values; give one per dimension ({n}) or a single one",
                param="threshold"
            )
    if any(not np.isfinite(t) or t < 0 for t in taus):
        raise BadInput(f"threshold={threshold!r} is not allowed; thresholds must be finite, >= 0",
                       param="threshold")
    return tuple(
        int(np.count_nonzero(d[:, 1] - d[:, 0] > t))
        for d, t in zip(homology.diagrams, taus, strict=True)
    )


# ----------------------------------------------------------------------------------------------
# plots
