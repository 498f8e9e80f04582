"""Low-dimensional pictures of population activity: PCA, Isomap.

Population activity is an array ``X`` of shape ``(samples, neurons)``: one row per time step (or per
sampled manifold coordinate), one column per neuron. Activity on a ring attractor traces a closed
curve in that space, activity on a torus attractor a two-dimensional torus. PCA shows the linear
picture (for a bump on a ring the leading pair of components are the first Fourier mode, a circle);
Isomap follows the manifold itself through a nearest-neighbour graph and unrolls curved sheets.

Both return an :class:`Embedding`. :func:`subsample` picks a deterministic subset of rows for
methods whose cost grows quadratically with the number of samples. The figures are in
:mod:`neurodyn.plotting.embedding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, shortest_path
from scipy.spatial import cKDTree

from _runkit import BadInput, BadType
from _runkit.results import Result

__all__ = [
    "Embedding",
    "pca",
    "isomap",
    "subsample",
]

_SUBSAMPLE_METHODS = ("farthest", "random")


@dataclass(frozen=True)
class Embedding(Result):
    """Coordinates of samples in a low-dimensional embedding.

    Attributes
    ----------
    coords : ndarray, shape (samples, k)
        Embedded coordinates, one row per input sample.
    explained_variance_ratio : ndarray, shape (k,)
        Fraction of the total variance carried by each coordinate. For PCA it is the share of the
        data's variance; for Isomap it is the share of the positive eigenvalues of the centred
        geodesic Gram matrix (how much of the geodesic geometry each coordinate carries).
    components : ndarray, shape (k, features) or None
        PCA directions (orthonormal rows) in feature space; ``None`` for non-linear methods.
    mean : ndarray, shape (features,)
        Mean of the input rows (subtracted before projecting).
    method : str
        ``"pca"`` or ``"isomap"``; used to label plot axes.
    """

    coords: np.ndarray
    explained_variance_ratio: np.ndarray
    components: np.ndarray | None
    mean: np.ndarray
    method: str = "pca"

    @property
    def n_components(self) -> int:
        """Number of embedded coordinates ``k``."""
        return int(self.coords.shape[1])

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Project new samples onto the PCA components.

        ``Y = (X - mean) @ components.T``

        Parameters
        ----------
        X : array_like, shape (samples, features)

        Returns
        -------
        ndarray, shape (samples, k)
        """
        if self.components is None:
            raise BadInput(
                f"transform: method={self.method!r} has no linear components; "
                "only 'pca' embeddings can project new samples", param="transform"
            )
        X = _as_samples(X, "X", min_samples=1)
        if X.shape[1] != self.mean.shape[0]:
            raise BadInput(
                f"transform: X has {X.shape[1]} features; the embedding was fitted on "
                f"{self.mean.shape[0]}", param="transform"
            )
        return (X - self.mean) @ self.components.T


def _as_samples(X: np.ndarray, name: str, min_samples: int) -> np.ndarray:
    """Validate a (samples, features) array and return it as finite float64."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise BadInput(
            f"{name} must be a 2-D array of shape (samples, features); got shape {arr.shape}",
            param=name
        )
    if arr.shape[0] < min_samples:
        raise BadInput(
            f"{name} has {arr.shape[0]} samples; at least {min_samples} are needed here", param=name
        )
    if arr.shape[1] < 1:
        raise BadInput(f"{name} has no features (shape {arr.shape}); at least 1 is needed",
                       param=name)
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise BadInput(
            f"{name} contains {bad} non-finite entries (NaN or inf); all must be finite", param=name
        )
    return arr


def _check_n_components(n_components: int, upper: int, what: str) -> int:
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise BadType(f"n_components must be an int; got {n_components!r}", param="n_components")
    if not 1 <= n_components <= upper:
        raise BadInput(f"n_components={n_components} is not allowed; {what} allow 1..{upper}",
                       param="n_components")
    return int(n_components)


def pca(X: np.ndarray, n_components: int = 3) -> Embedding:
    """Principal component analysis by singular value decomposition.

    ``X - mean = U S V^T``,  ``coords = U_k S_k``,  ``ratio_i = S_i^2 / sum_j S_j^2``

    Parameters
    ----------
    X : array_like, shape (samples, features)
        Population activity, one row per sample.
    n_components : int
        Number of leading components ``k``, ``1 <= k <= min(samples, features)``.

    Returns
    -------
    Embedding
        ``coords`` (samples, k), ``explained_variance_ratio`` (k,), ``components`` (k, features),
        ``mean`` (features,). The sign of each component is fixed so that its largest-magnitude
        loading is positive, which makes the result reproducible across platforms.

    Examples
    --------
    >>> t = np.linspace(0, 2 * np.pi, 100, endpoint=False)
    >>> emb = pca(np.c_[np.cos(t), np.sin(t), np.zeros(100)], n_components=2)
    >>> bool(np.isclose(emb.explained_variance_ratio.sum(), 1.0))
    True
    """
    X = _as_samples(X, "X", min_samples=2)
    k = _check_n_components(n_components, min(X.shape), "X's shape (samples, features) and PCA")
    mean = X.mean(axis=0)
    Xc = X - mean
    _, s, vt = np.linalg.svd(Xc, full_matrices=False)
    comps = vt[:k]
    signs = np.sign(comps[np.arange(k), np.argmax(np.abs(comps), axis=1)])
    signs[signs == 0] = 1.0
    comps = comps * signs[:, None]
    total = float(np.sum(s**2))
    ratio = s[:k] ** 2 / total if total > 0 else np.zeros(k)
    return Embedding(
        coords=Xc @ comps.T,
        explained_variance_ratio=ratio,
        components=comps,
        mean=mean,
        method="pca",
    )


def isomap(X: np.ndarray, n_components: int = 2, n_neighbors: int = 10) -> Embedding:
    """Isomap: classical MDS of geodesic distances along a k-nearest-neighbour graph.

    ``G_ij`` = shortest-path length between i and j in the symmetric kNN graph (edge weights are
    Euclidean distances); ``B = -1/2 J G^2 J`` with ``J = I - 11^T / n``; ``coords = V_k
    sqrt(Lambda_k)`` from the leading eigenpairs of ``B``.

    Cost is O(n^2 log n) time and O(n^2) memory in the number of samples n; use
    :func:`subsample` first for more than a few thousand samples.

    Parameters
    ----------
    X : array_like, shape (samples, features)
        Points sampled from a manifold.
    n_components : int
        Embedding dimension ``k``, ``1 <= k < samples``.
    n_neighbors : int
        Neighbours per point in the graph, ``1 <= n_neighbors < samples``. The graph must be
        connected; too small a value splits it and raises ``BadInput``.

    Returns
    -------
    Embedding
        ``coords`` (samples, k), ``explained_variance_ratio`` (k,) of the positive eigenvalues
        of ``B``, ``components=None``, ``mean`` (features,), ``method="isomap"``.

    Examples
    --------
    >>> t = np.linspace(0, 2 * np.pi, 60, endpoint=False)
    >>> emb = isomap(np.c_[np.cos(t), np.sin(t)], n_components=2, n_neighbors=4)
    >>> emb.coords.shape
    (60, 2)
    """
    X = _as_samples(X, "X", min_samples=3)
    n = X.shape[0]
    k = _check_n_components(n_components, n - 1, f"{n} samples and Isomap")
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise BadType(f"n_neighbors must be an int; got {n_neighbors!r}", param="n_neighbors")
    if not 1 <= n_neighbors < n:
        raise BadInput(
            f"n_neighbors={n_neighbors} is not allowed; with {n} samples use 1..{n - 1}",
            param="n_neighbors"
        )
    coords, ratio = _classical_mds(_geodesic_distances(X, n_neighbors), k)
    return Embedding(
        coords=coords,
        explained_variance_ratio=ratio,
        components=None,
        mean=X.mean(axis=0),
        method="isomap",
    )


def _geodesic_distances(X: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Shortest-path distances ``(n, n)`` along the symmetric ``n_neighbors``-nearest-neighbour
    graph of the samples ``X`` ``(n, features)``; ``BadInput`` when it is disconnected."""
    n = X.shape[0]
    dist, idx = cKDTree(X).query(X, k=n_neighbors + 1)
    rows = np.repeat(np.arange(n), n_neighbors)
    cols = idx[:, 1:].ravel()
    weights = dist[:, 1:].ravel()
    # Duplicate points give zero-length edges, which sparse graphs would drop: keep them tiny.
    weights = np.maximum(weights, np.finfo(np.float64).tiny)
    graph = coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    graph = graph.maximum(graph.T)
    n_parts, _ = connected_components(graph, directed=False)
    if n_parts > 1:
        raise BadInput(
            f"isomap: the {n_neighbors}-nearest-neighbour graph has {n_parts} disconnected "
            f"components (n_neighbors={n_neighbors}); increase n_neighbors so that the graph "
            "connects all samples, or remove isolated samples", param="n_neighbors"
        )
    return shortest_path(graph, method="D", directed=False)


def _classical_mds(geo: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Classical MDS of the distances ``geo`` ``(n, n)``: the ``(n, k)`` coordinates (each
    axis's largest entry positive) and each axis's share of the positive eigenvalues."""
    sq = geo**2
    B = -0.5 * (sq - sq.mean(axis=0) - sq.mean(axis=1)[:, None] + sq.mean())
    evals, evecs = np.linalg.eigh(B)
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    lead = np.clip(evals[:k], 0.0, None)
    vecs = evecs[:, :k]
    signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(k)])
    signs[signs == 0] = 1.0
    coords = vecs * signs * np.sqrt(lead)
    positive = float(np.sum(evals[evals > 0]))
    return coords, lead / positive if positive > 0 else np.zeros(k)


def subsample(
    X: np.ndarray, max_points: int, seed: int | np.random.Generator = 0, method: str = "farthest"
) -> np.ndarray:
    """Indices of a deterministic subset of at most ``max_points`` rows.

    ``farthest`` (greedy max-min landmarks): ``l_1`` is drawn from the generator, then
    ``l_{m+1} = argmax_i min_{j <= m} ||x_i - x_{l_j}||``. The result covers the point cloud
    evenly (every row lies within the returned cover radius of a landmark), which keeps the
    topology of a sampled manifold. ``random``: uniform without replacement.

    Parameters
    ----------
    X : array_like, shape (samples, features)
    max_points : int
        Size of the subset, ``>= 1``. If ``samples <= max_points`` all indices are returned.
    seed : int or numpy.random.Generator
        Seeds the first landmark (``farthest``) or the draw (``random``).
    method : {"farthest", "random"}

    Returns
    -------
    ndarray of int, shape (min(samples, max_points),)
        Row indices; for ``farthest`` in the order they were chosen, for ``random`` sorted.

    Examples
    --------
    >>> X = np.arange(10.0)[:, None]
    >>> idx = subsample(X, 4, seed=0)
    >>> len(idx), bool(np.array_equal(idx, subsample(X, 4, seed=0)))  # same seed, same subset
    (4, True)
    """
    X = _as_samples(X, "X", min_samples=1)
    idx, _ = _subsample_with_radius(X, max_points, seed, method)
    return idx


def _subsample_with_radius(
    X: np.ndarray, max_points: int, seed: int | np.random.Generator, method: str
) -> tuple[np.ndarray, float]:
    """Subset indices and the cover radius ``max_i min_j ||x_i - x_{l_j}||`` (0 if all kept)."""
    if method not in _SUBSAMPLE_METHODS:
        raise BadInput(f"method={method!r} is unknown; choose one of {_SUBSAMPLE_METHODS}",
                       param="method")
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)):
        raise BadType(f"max_points must be an int; got {max_points!r}", param="max_points")
    if max_points < 1:
        raise BadInput(f"max_points={max_points} is not allowed; it must be >= 1",
                       param="max_points")
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    if n <= max_points:
        return np.arange(n), 0.0
    if method == "random":
        idx = np.sort(rng.choice(n, size=max_points, replace=False))
        return idx, float("nan")
    first = int(rng.integers(n))
    chosen = np.empty(max_points, dtype=np.int64)
    chosen[0] = first
    dist = np.linalg.norm(X - X[first], axis=1)
    for m in range(1, max_points):
        nxt = int(np.argmax(dist))
        chosen[m] = nxt
        np.minimum(dist, np.linalg.norm(X - X[nxt], axis=1), out=dist)
    return chosen, float(dist.max())
