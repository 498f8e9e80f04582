r"""Cells on a ring from their tuning: preferred angle, gain, baseline and the shared bump profile.

Every cell's tuning curve over the ring coordinate ``c`` (the heading, or a coordinate decoded
from the activity) is modelled as one shared profile ``p`` (peak 1 at 0, minimum 0) placed at the
cell's preferred angle, with the cell's own gain and baseline (Hz):

.. math:: f_i(c) = b_i + g_i\, p(c - \theta_i).

In Fourier space ``F_{ik} = g_i P_k e^{-i k \theta_i}`` (``k >= 1``), so the fit alternates three
least-squares steps: ``P_k = \sum_i g_i F_{ik} e^{i k\theta_i} / \sum_i g_i^2``; ``theta_i`` the
maximum of the cross-correlation of ``f_i`` with ``p`` (on 2048 angles); ``b_i, g_i`` by
regression of ``f_i`` on ``p(c - theta_i)``. The profile keeps ``harmonics`` Fourier terms, is
rescaled to ``[0, 1]`` and rotated so its peak is at 0. Cells need not be uniformly spread:
nothing assumes their angles. Bins that a cell was not observed in (NaN counts) are left out of
its curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from _runkit import BadInput
from _runkit.results import Result

__all__ = ["RingCells", "binned_curves", "place_ring_cells", "profile_values"]

#: angles evaluated at once by :func:`profile_values`
_CHUNK = 1 << 18


@dataclass(frozen=True)
class RingCells(Result):
    """Cells placed on a ring.

    Attributes
    ----------
    preferred : ndarray, shape (cells,)
        Preferred angles ``theta_i`` in ``[0, 2 pi)``.
    gain, baseline : ndarray, shape (cells,)
        ``g_i``, ``b_i`` in Hz.
    profile : ndarray, shape (harmonics + 1,)
        Complex Fourier coefficients ``P_k`` of the shared profile (``p(phi) = Re sum_k w_k P_k
        e^{i k phi}``, ``w_0 = 1``, ``w_k = 2``).
    centres : ndarray, shape (bins,)
        Bin centres of the tuning curves.
    curves : ndarray, shape (cells, bins)
        Observed tuning curves (Hz; NaN where unobserved).
    own : ndarray, shape (cells, harmonics + 1)
        Complex Fourier coefficients of each cell's own curve (Hz): ``f_i(c) = Re sum_k w_k
        F_ik e^{i k c}`` (same weights as the profile); heterogeneous widths included.
    """

    preferred: np.ndarray
    gain: np.ndarray
    baseline: np.ndarray
    profile: np.ndarray
    centres: np.ndarray
    curves: np.ndarray
    own: np.ndarray | None = None

    def rates(self, psi) -> np.ndarray:
        """Expected rates ``(..., cells)`` (Hz) with the bump at ``psi`` of shape (...,)."""
        psi = np.asarray(psi, dtype=float)
        p = profile_values(self.profile, psi[..., None] - self.preferred)
        return self.baseline + self.gain * p

    def own_rates(self, psi, derivative: int = 0) -> np.ndarray:
        """Each cell's own curve ``f_i(psi)`` (Hz), or its ``derivative``-th derivative
        (Hz/rad^n), shape ``(..., cells)``; from the shared model (:meth:`rates`) where
        ``own`` is None."""
        psi = np.asarray(psi, dtype=float)
        if self.own is None:
            d = 1e-3
            if derivative == 2:
                return (self.rates(psi + d) - 2 * self.rates(psi) + self.rates(psi - d)) / d**2
            if derivative:
                return (self.rates(psi + d) - self.rates(psi - d)) / (2 * d)
            return self.rates(psi)
        k = np.arange(self.own.shape[1])
        w = np.where(k == 0, 1.0, 2.0) * (1j * k) ** int(derivative)
        basis = np.exp(1j * psi[..., None] * k)                  # (..., K + 1)
        return np.real(basis @ (w[:, None] * self.own.T))


def profile_values(coef, phi) -> np.ndarray:
    """``p(phi) = Re sum_k w_k P_k exp(i k phi)`` of Fourier coefficients ``P``.

    Parameters
    ----------
    coef : ndarray, shape (K + 1,)
        Complex ``P_0 .. P_K``.
    phi : array_like, shape (...,)
        Angles.

    Returns
    -------
    ndarray, shape (...,)

    Examples
    --------
    >>> round(float(profile_values(np.array([0.5, 0.25]), 0.0)), 6)    # 0.5 + cos(0)/2
    1.0
    """
    coef = np.asarray(coef, dtype=complex)
    phi = np.asarray(phi, dtype=float)
    w = np.where(np.arange(coef.size) == 0, 1.0, 2.0) * coef
    flat = phi.reshape(-1)
    out = np.empty(flat.size)
    for s in range(0, flat.size, _CHUNK):  # chunks of 2^18 angles: memory stays in cache
        c1, s1 = np.cos(flat[s:s + _CHUNK]), np.sin(flat[s:s + _CHUNK])
        ck, sk = np.ones_like(c1), np.zeros_like(c1)
        acc = np.full_like(c1, w[0].real)
        for k in range(1, coef.size):  # cos k phi, sin k phi by the angle-addition recurrence
            ck, sk = ck * c1 - sk * s1, sk * c1 + ck * s1
            acc += w[k].real * ck - w[k].imag * sk
        out[s:s + _CHUNK] = acc
    return out.reshape(phi.shape)


def binned_curves(counts, coord, dt: float, bins: int = 60):
    """Tuning curves of every cell over a ring coordinate.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin (NaN: not observed).
    coord : array_like, shape (T,)
        The coordinate (rad) per time bin.
    dt : float
        Bin width (s).
    bins : int
        Equal sectors of ``[0, 2 pi)``.

    Returns
    -------
    centres : ndarray, shape (bins,)
    curves : ndarray, shape (cells, bins)
        Mean rate (Hz) per sector, NaN where a cell was never observed.

    Examples
    --------
    >>> c = np.linspace(0, 2 * np.pi, 600, endpoint=False)
    >>> centres, f = binned_curves(np.c_[1 + np.cos(c)], c, 1.0, bins=6)
    >>> f.shape
    (1, 6)
    """
    x = np.asarray(counts, dtype=float)
    c = np.mod(np.asarray(coord, dtype=float), 2 * np.pi)
    idx = np.minimum((c * bins / (2 * np.pi)).astype(int), bins - 1)
    onehot = sparse.csr_matrix((np.ones(c.size), (idx, np.arange(c.size))),
                               shape=(bins, c.size))
    seen = np.isfinite(x)
    occ = np.asarray(onehot @ seen.astype(float)).T
    sums = np.asarray(onehot @ np.where(seen, x, 0.0)).T
    curves = np.full(sums.shape, np.nan)
    np.divide(sums, occ * dt, out=curves, where=occ > 0)
    return (np.arange(bins) + 0.5) * 2 * np.pi / bins, curves


def _coefficients(curves: np.ndarray, centres: np.ndarray, harmonics: int) -> np.ndarray:
    """Fourier coefficients ``(cells, harmonics + 1)`` of curves sampled at ``centres`` (NaN
    bins filled by circular interpolation)."""
    filled = curves.copy()
    for row in filled:
        bad = ~np.isfinite(row)
        if bad.any() and (~bad).any():
            row[bad] = np.interp(centres[bad], centres[~bad], row[~bad], period=2 * np.pi)
        row[~np.isfinite(row)] = 0.0
    k = np.arange(harmonics + 1)
    return filled @ np.exp(-1j * np.outer(centres, k)) / centres.size


def _regress(curves, centres, coef, theta):
    """Per-cell least squares of the curve on ``[1, p(c - theta)]``: ``(b, g)``."""
    p = profile_values(coef, centres[None, :] - theta[:, None])
    ok = np.isfinite(curves)
    n = ok.sum(1)
    y = np.where(ok, curves, 0.0)
    pm = np.where(ok, p, 0.0)
    sp, sy = pm.sum(1), y.sum(1)
    spp, spy = (pm * pm).sum(1), (pm * y).sum(1)
    den = n * spp - sp**2
    g = np.where(den > 0, (n * spy - sp * sy) / np.where(den > 0, den, 1), 0.0)
    b = (sy - g * sp) / np.maximum(n, 1)
    return b, g


def _best_shift(F: np.ndarray, coef: np.ndarray, size: int = 2048) -> np.ndarray:
    """Angles maximising ``sum_k Re(F_ik conj(P_k) e^{i k theta})`` (``k >= 1``)."""
    spec = np.zeros((F.shape[0], size // 2 + 1), dtype=complex)
    spec[:, 1:F.shape[1]] = F[:, 1:] * np.conj(coef[1:])
    corr = np.fft.irfft(spec, n=size, axis=1)  # corr[j] = sum_k Re(X_k e^{i k 2 pi j / size})
    j = np.argmax(corr, axis=1)
    # parabolic refinement between the neighbouring angles
    rows = np.arange(F.shape[0])
    a, b0, c = corr[rows, j - 1], corr[rows, j], corr[rows, (j + 1) % size]
    den = a - 2 * b0 + c
    off = np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1), 0.0)
    return np.mod((j + off) * 2 * np.pi / size, 2 * np.pi)


def _normalised(coef: np.ndarray, theta: np.ndarray):
    """The profile rescaled to ``[0, 1]`` with its peak at 0, and the angles rotated with it."""
    grid = np.arange(2048) * 2 * np.pi / 2048
    vals = profile_values(coef, grid)
    lo, hi = float(vals.min()), float(vals.max())
    peak = grid[int(np.argmax(vals))]
    k = np.arange(coef.size)
    out = coef * np.exp(1j * k * peak) / max(hi - lo, 1e-12)
    out[0] = out[0] - lo / max(hi - lo, 1e-12)
    return out, np.mod(theta + peak, 2 * np.pi)


def place_ring_cells(counts, coord, dt: float, bins: int = 60, harmonics: int = 12,
                     iterations: int = 6) -> RingCells:
    """Preferred angles, gains, baselines and the shared profile (module docstring).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin (NaN: not observed).
    coord : array_like, shape (T,)
        Ring coordinate per bin (rad).
    dt : float
        Bin width (s).
    bins : int
        Sectors of the tuning curves.
    harmonics : int
        Fourier terms of the profile (< bins / 2).
    iterations : int
        Rounds of the alternating least squares.

    Returns
    -------
    RingCells

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(0, 2 * np.pi, 20000)
    >>> theta = np.array([0.5, 2.0, 4.0])
    >>> lam = 2 + 20 * np.exp(2 * (np.cos(c[:, None] - theta) - 1))
    >>> cells = place_ring_cells(rng.poisson(lam * 0.1), c, 0.1)
    >>> bool(np.abs(np.angle(np.exp(1j * (cells.preferred - theta)))).max() < 0.05)
    True
    """
    if not 1 <= harmonics < bins // 2:
        raise BadInput(f"harmonics={harmonics!r}: must be in 1..bins/2 - 1 = {bins // 2 - 1}",
                       param="harmonics")
    centres, curves = binned_curves(counts, coord, dt, bins)
    F = _coefficients(curves, centres, harmonics)
    theta = np.mod(-np.angle(F[:, 1]), 2 * np.pi)
    g = np.maximum(np.nanmax(curves, 1) - np.nanmin(curves, 1), 1e-9)
    for _ in range(iterations):
        coef = (g[:, None] * F * np.exp(1j * np.outer(theta, np.arange(harmonics + 1)))
                ).sum(0) / np.sum(g**2)
        coef, theta = _normalised(coef, theta)
        theta = _best_shift(F, coef)
        b, g = _regress(curves, centres, coef, theta)
        g = np.maximum(g, 1e-9)
    return RingCells(theta, g, b, coef, centres, curves, F)
