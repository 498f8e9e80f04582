r"""The manifold from the activity alone: its Betti numbers and a ring coordinate.

Counts are smoothed in time by a Gaussian of ``smooth`` seconds and z-scored per cell; at most
``samples`` evenly spaced bins are projected on their leading principal components (3 for a
ring, 6 for a hexagonal torus: the fundamental Fourier modes of the bump, which embed the
manifold), and the densest half of the points (smallest distance to their 20th neighbour) is
kept, since Poisson noise spreads the rest into the ring's hole. Persistent homology
(:func:`neurodyn.analysis.topology.persistent_homology`, its widest-gap Betti numbers) then
reads a ring as ``(1, 1)`` and a torus as ``(1, 2, 1)``.

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

__all__ = ["smoothed_activity", "activity_betti", "ring_coordinate"]

#: principal components kept per geometry
COMPONENTS = {"ring": 3, "torus": 6}


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


def activity_betti(counts, dt: float, geometry: str = "ring", smooth: float = 0.1,
                   samples: int = 4000, seed: int = 0) -> tuple[int, ...]:
    """Betti numbers of the population activity (module docstring).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    geometry : {'ring', 'torus'}
        Decides the principal components kept and the highest dimension (1 ring, 2 torus).
    smooth : float
        Smoothing (s).
    samples : int
        Bins used at most.
    seed : int
        Seeds the landmarks.

    Returns
    -------
    tuple of int
        ``(b0, b1)`` for a ring, ``(b0, b1, b2)`` for a torus.
    """
    x = smoothed_activity(counts, dt, smooth)
    idx = np.linspace(0, x.shape[0] - 1, min(samples, x.shape[0])).astype(int)
    y = _leading(x[idx], COMPONENTS[geometry])
    dist, _ = cKDTree(y).query(y, min(20, y.shape[0]))
    y = y[dist[:, -1] <= np.quantile(dist[:, -1], 0.5)]
    maxdim = 1 if geometry == "ring" else 2
    h = persistent_homology(y, maxdim=maxdim, pca_components=None, seed=seed,
                            max_points=250 if geometry == "ring" else 300)
    return betti_numbers(h)


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
