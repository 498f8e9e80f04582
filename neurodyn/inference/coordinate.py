r"""A ring coordinate from the activity alone (the topology is :mod:`.topology`'s).

The ring coordinate of every bin is the angle of the activity in the plane of its two leading
principal components, ``psi_t = atan2(y_2, y_1)``, the population vector of the fundamental mode
whatever the cells' spread. It is a starting point: :func:`neurodyn.inference.core.fit_activity`
places the cells on it and decodes again by maximum likelihood.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d

__all__ = ["smoothed_activity", "ring_coordinate"]



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
