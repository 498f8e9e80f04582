r"""The manifold from the activity alone: its Betti numbers and a ring coordinate.

Ring: counts are smoothed in time by a Gaussian of ``smooth`` seconds and z-scored per cell; at
most ``samples`` evenly spaced bins are projected on their three leading principal components
(the fundamental Fourier mode of the bump and the mean, which embed the ring), and the densest
half of the points (smallest distance to their 20th neighbour) is kept, since Poisson noise
spreads the rest into the ring's hole. Persistent homology
(:func:`neurodyn.analysis.topology.persistent_homology`, its widest-gap Betti numbers) then
reads a ring as ``(1, 1)``.

Torus (:func:`torus_betti`): the square roots of the counts, smoothed (0.3 s) and z-scored, on
their six leading principal components (the three fundamental modes of a hexagonal bump),
denoised by a mean shift (:func:`denoised_cloud`, as in Gardner et al. 2022, Nature 602: 123),
then persistent homology up to dimension 2 with a null of time-shifted cells: a torus reads
``(1, 2, 1)``.

The ring coordinate of every bin is the angle of the activity in the plane of its two leading
principal components, ``psi_t = atan2(y_2, y_1)``, the population vector of the fundamental mode
whatever the cells' spread. It is a starting point: :func:`neurodyn.inference.core.fit_activity`
places the cells on it and decodes again by maximum likelihood.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.spatial import cKDTree

from ..analysis.topology import betti_numbers, persistent_homology

__all__ = ["smoothed_activity", "activity_betti", "ring_coordinate", "torus_betti",
           "denoised_cloud"]

#: principal components kept per geometry
COMPONENTS = {"ring": 3, "torus": 6}
#: smoothing (s) of the activity for its topology, per geometry
SMOOTH = {"ring": 0.1, "torus": 0.3}


def smoothed_activity(counts, dt: float, smooth: float = 0.1) -> np.ndarray:
    """Counts smoothed by a Gaussian of ``smooth`` seconds, z-scored per cell (NaN as 0).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    smooth : float
        Standard deviation of the kernel (s).

    Returns
    -------
    ndarray, shape (T, cells)

    Examples
    --------
    >>> smoothed_activity(np.eye(4), 1.0, 1.0).shape
    (4, 4)
    """
    x = np.asarray(counts, dtype=float)
    x = gaussian_filter1d(np.where(np.isfinite(x), x, 0.0), smooth / dt, axis=0, mode="nearest")
    return (x - x.mean(0)) / (x.std(0) + 1e-12)


def _leading(x: np.ndarray, k: int) -> np.ndarray:
    xc = x - x.mean(0)
    _, _, vt = np.linalg.svd(xc[:: max(1, xc.shape[0] // 20000)], full_matrices=False)
    return xc @ vt[:k].T


def _smoothed_at(counts, dt: float, smooth: float, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of :func:`smoothed_activity`, z-scored over those rows: the same Gaussian
    (radius ``4 sigma``, edges repeated) without smoothing every bin."""
    x = np.asarray(counts, dtype=float)
    sigma = smooth / dt
    r = int(4 * sigma + 0.5)
    j = np.arange(-r, r + 1)
    w = np.exp(-0.5 * (j / max(sigma, 1e-12)) ** 2)
    w /= w.sum()
    y = np.zeros((idx.size, x.shape[1]))
    for jj, ww in zip(j, w, strict=True):
        rows = x[np.clip(idx + jj, 0, x.shape[0] - 1)]
        y += ww * np.where(np.isfinite(rows), rows, 0.0)
    return (y - y.mean(0)) / (y.std(0) + 1e-12)


def _ring_betti(counts, dt, smooth, samples, seed):
    idx = np.linspace(0, counts.shape[0] - 1, min(samples, counts.shape[0])).astype(int)
    y = _leading(_smoothed_at(counts, dt, smooth, idx), COMPONENTS["ring"])
    dist, _ = cKDTree(y).query(y, min(20, y.shape[0]))
    y = y[dist[:, -1] <= np.quantile(dist[:, -1], 0.5)]
    return betti_numbers(persistent_homology(y, maxdim=1, pca_components=None, seed=seed,
                                             max_points=250))


def denoised_cloud(counts, dt: float, smooth: float = 0.3, samples: int = 10000,
                   components: int = 6, neighbours: int = 30, rounds: int = 2) -> np.ndarray:
    """The torus's point cloud: the square roots of the counts (Anscombe's transform, which
    gives Poisson noise the same variance at every rate, so high-rate cells do not dominate
    it) smoothed and z-scored, on their leading principal components, scaled
    to unit root-mean-square norm and pulled onto the manifold by ``rounds`` of averaging
    every point with its ``neighbours`` nearest (a mean shift: Poisson noise scatters points
    off the torus in every direction, the average over a neighbourhood cancels it).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    smooth : float
        Smoothing (s).
    samples : int
        Evenly spaced bins kept at most.
    components : int
        Principal components (6: the three fundamental modes of a hexagonal bump).
    neighbours, rounds : int
        The mean shift.

    Returns
    -------
    ndarray, shape (samples, components)

    Examples
    --------
    >>> t = np.linspace(0, 200, 5000)
    >>> theta = np.arange(12) * 2 * np.pi / 12
    >>> x = np.random.default_rng(0).poisson(5 * np.exp(2 * np.cos(t[:, None] - theta)))
    >>> y = denoised_cloud(x, 0.04, samples=2000, components=2)
    >>> r = np.hypot(y[:, 0], y[:, 1])
    >>> bool(r.std() / r.mean() < 0.1)                      # a circle, once denoised
    True
    """
    x = np.sqrt(np.asarray(counts, dtype=float) + 0.375)  # Anscombe: Poisson variance ~ 1/4
    idx = np.linspace(0, x.shape[0] - 1, min(samples, x.shape[0])).astype(int)
    y = _leading(_smoothed_at(x, dt, smooth, idx), components)
    y = y / np.sqrt(np.mean(np.sum(y**2, axis=1)) + 1e-300)
    for _ in range(rounds):
        _, near = cKDTree(y).query(y, min(neighbours, y.shape[0]))
        y = y[near].mean(axis=1)
    return y


def _betti_above(homology, floor) -> tuple[int, ...]:
    """Per dimension, the bars above the widest gap of the lifetimes (sorted, closed by 0)
    that also outlive ``floor[k]``; the infinite H0 bar always counts."""
    out = []
    for k, dgm in enumerate(homology.diagrams):
        life = dgm[:, 1] - dgm[:, 0]
        finite = np.sort(life[np.isfinite(life)])[::-1]
        count = 0
        if finite.size:
            seq = np.r_[finite, 0.0]
            long = finite[: int(np.argmax(seq[:-1] - seq[1:])) + 1]
            count = int(np.count_nonzero(long > floor[k]))
        out.append(count + int(np.count_nonzero(~np.isfinite(life))))
    return tuple(out)


def torus_betti(counts, dt: float, smooth: float = 0.3, samples: int = 10000,
                landmarks: int = 300, nulls: int = 2, neighbours: int = 30, rounds: int = 2,
                seed: int = 0) -> dict:
    """Betti numbers of a grid module's activity against a null of time-shifted cells.

    The activity and ``nulls`` copies of it with every cell shifted in time by its own lag
    (:func:`neurodyn.datasets.controls.time_shifted`: each cell's statistics kept, the
    population's manifold destroyed) go through :func:`denoised_cloud` and persistent homology
    up to dimension 2 on ``landmarks`` max-min landmarks. The long bars of a dimension are
    those above the widest gap of its lifetimes (sorted, closed by 0): the rule of
    :func:`~neurodyn.analysis.topology.betti_numbers` without its anchor at half the
    diameter, which a torus's loops do not reach (on the unit-norm cloud they live about 0.5,
    the diameter is about 2.5). The Rips filtration of a hexagonal torus also sees, for about
    half as long, its third shortest loop (the third lattice direction, the sum of the other
    two); the gap falls below the two true loops. A long bar counts only if it also outlives
    every bar of its dimension in the nulls, so noise has no long bars.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    smooth : float
        Smoothing (s).
    samples : int
        Bins of the point cloud.
    landmarks : int
        Max-min landmarks of the persistent homology.
    nulls : int
        Time-shifted copies.
    neighbours, rounds : int
        The mean shift of :func:`denoised_cloud`.
    seed : int
        Seeds the landmarks and the shifts.

    Returns
    -------
    dict
        ``betti`` (tuple ``(b0, b1, b2)``), ``lifetimes`` (the four longest finite bars per
        dimension) and ``null_longest`` (per dimension).
    """
    from ..datasets.controls import time_shifted

    def bars(x, s):
        cloud = denoised_cloud(x, dt, smooth, samples, 6, neighbours, rounds)
        return persistent_homology(cloud, maxdim=2, pca_components=None, seed=s,
                                   max_points=landmarks)

    floor = np.zeros(3)
    for n in range(nulls):
        h = bars(time_shifted(counts, seed=seed + 1 + n), seed)
        for k, dgm in enumerate(h.diagrams):
            life = dgm[:, 1] - dgm[:, 0]
            life = life[np.isfinite(life)]
            floor[k] = max(floor[k], float(life.max()) if life.size else 0.0)
    h = bars(counts, seed)
    top = [np.sort((d[:, 1] - d[:, 0])[np.isfinite(d[:, 1])])[::-1][:4].tolist()
           for d in h.diagrams]
    return {"betti": _betti_above(h, floor), "lifetimes": top,
            "null_longest": floor.tolist()}


def activity_betti(counts, dt: float, geometry: str = "ring", smooth: float | None = None,
                   samples: int | None = None, seed: int = 0) -> tuple[int, ...]:
    """Betti numbers of the population activity (module docstring).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    geometry : {'ring', 'torus'}
        Ring: widest-gap Betti numbers up to dimension 1; torus: :func:`torus_betti`.
    smooth : float or None
        Smoothing (s); None: the geometry's (:data:`SMOOTH`).
    samples : int or None
        Bins used at most; None: 4,000 (ring) or 10,000 (torus).
    seed : int
        Seeds the landmarks.

    Returns
    -------
    tuple of int
        ``(b0, b1)`` for a ring, ``(b0, b1, b2)`` for a torus.
    """
    smooth = SMOOTH[geometry] if smooth is None else smooth
    if geometry == "torus":
        return torus_betti(counts, dt, smooth, samples or 10000, seed=seed)["betti"]
    return _ring_betti(np.asarray(counts, dtype=float), dt, smooth, samples or 4000, seed)


def ring_coordinate(counts, dt: float, smooth: float = 0.1) -> np.ndarray:
    """The angle of each bin's activity in its two leading principal components.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    smooth : float
        Smoothing (s).

    Returns
    -------
    ndarray, shape (T,)
        Angles in ``[0, 2 pi)``, up to a rotation and a reflection.

    Examples
    --------
    >>> t = np.linspace(0, 20 * np.pi, 4000)
    >>> theta = np.arange(16) * 2 * np.pi / 16
    >>> psi = ring_coordinate(np.exp(2 * np.cos(t[:, None] - theta)), 1.0, 0.5)
    >>> same, mirrored = np.exp(1j * (psi - t)).mean(), np.exp(1j * (psi + t)).mean()
    >>> bool(max(abs(same), abs(mirrored)) > 0.999)       # a rotation or a reflection of t
    True
    """
    y = _leading(smoothed_activity(counts, dt, smooth), 2)
    return np.mod(np.arctan2(y[:, 1], y[:, 0]), 2 * np.pi)
