r"""Grid cells of one module on a hexagonal torus: the lattice, each cell's phase, gain, baseline.

The lattice: every cell's rate map (bins of ``map_bin`` metres) and its spatial autocorrelogram
(:func:`neurodyn.spatial.ratemaps.autocorrelogram`) are averaged over cells; the six local
maxima nearest the centre are the lattice's shortest vectors ``a_j``, so the spacing is their
mean length and the orientation of the wave vectors is theirs less 30 degrees (modulo 60): the
hexagonal pattern ``sum_j cos(k_j . x)`` peaks on the lattice ``k_j . a in 2 pi Z``.

The phases of the position are ``c_t = (k_1 . x_t, k_2 . x_t) mod 2 pi``
(:func:`neurodyn.spatial.phases.position_to_phase`). On ``bins x bins`` phase bins each cell's
tuning is one shared profile placed at its phase, ``f_i(c) = b_i + g_i p(c - theta_i)``, fitted
by the ring's alternating least squares (:mod:`.cells`) with two-dimensional Fourier series
(``harmonics`` per axis): ``P = sum_i g_i F_i e^{i k.theta_i} / sum_i g_i^2``, ``theta_i`` the
maximum of the cross-correlation on a 128 x 128 grid, ``b_i, g_i`` by regression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

from ..spatial.phases import phase_to_position_delta, position_to_phase
from ..spatial.ratemaps import autocorrelogram
from .decode import bump_frame, decode_ml, wrapped

__all__ = ["TorusCells", "torus_profile_values", "place_torus_cells", "estimate_lattice",
           "fit_torus_parts", "NoLattice"]

#: decoded phases per axis
GRID = 64


def torus_profile_values(coef, phi) -> np.ndarray:
    """``p(phi) = Re sum_{k1, k2} P[k1, k2] exp(i (k1 phi_1 + k2 phi_2))``.

    Parameters
    ----------
    coef : ndarray, shape (K, K)
        Complex coefficients for wave numbers ``-H .. H`` on each axis (``K = 2 H + 1``).
    phi : array_like, shape (..., 2)
        Phases.

    Returns
    -------
    ndarray, shape (...,)

    Examples
    --------
    >>> c = np.zeros((3, 3), complex); c[2, 1] = c[0, 1] = 0.5     # cos(phi_1)
    >>> round(float(torus_profile_values(c, np.array([0.0, 1.0]))), 6)
    1.0
    """
    coef = np.asarray(coef)
    phi = np.asarray(phi, dtype=float)
    H = coef.shape[0] // 2
    k = np.arange(-H, H + 1)
    flat = phi.reshape(-1, 2)
    out = np.empty(flat.shape[0])
    for s in range(0, flat.shape[0], 200_000):  # bounded memory: chunks of 200k phases
        e1 = np.exp(1j * np.outer(flat[s:s + 200_000, 0], k))
        e2 = np.exp(1j * np.outer(flat[s:s + 200_000, 1], k))
        out[s:s + 200_000] = np.real(np.sum((e1 @ coef) * e2, axis=1))
    return out.reshape(phi.shape[:-1])


@dataclass(frozen=True)
class TorusCells(Result):
    """Cells placed on a hexagonal torus.

    Attributes
    ----------
    preferred : ndarray, shape (cells, 2)
        Preferred phases in ``[0, 2 pi)^2``.
    gain, baseline : ndarray, shape (cells,)
        Hz.
    profile : ndarray, shape (K, K)
        Complex coefficients of the shared profile (:func:`torus_profile_values`).
    own : ndarray, shape (cells, K, K) or None
        Complex coefficients of each cell's own tuning on the phases (Hz), the same form.
    """

    preferred: np.ndarray
    gain: np.ndarray
    baseline: np.ndarray
    profile: np.ndarray
    own: np.ndarray | None = None

    def rates(self, psi) -> np.ndarray:
        """Expected rates ``(..., cells)`` (Hz) with the bump at phases ``psi`` (..., 2)."""
        psi = np.asarray(psi, dtype=float)
        d = psi[..., None, :] - self.preferred
        return self.baseline + self.gain * torus_profile_values(self.profile, d)

    def own_rates(self, psi, derivative: bool = False) -> np.ndarray:
        """Each cell's own tuning ``f_i(psi)`` (Hz), shape ``(..., cells)``, or with
        ``derivative`` its gradient along the two phases, shape ``(..., cells, 2)``; the
        shared model (:meth:`rates`) where ``own`` is None."""
        psi = np.asarray(psi, dtype=float)
        if self.own is None:
            if not derivative:
                return self.rates(psi)
            d = 1e-4
            steps = (np.array([d, 0.0]), np.array([0.0, d]))
            return np.stack([(self.rates(psi + s) - self.rates(psi - s)) / (2 * d)
                             for s in steps], -1)
        H = self.own.shape[1] // 2
        k = np.arange(-H, H + 1)
        e1 = np.exp(1j * psi[..., 0, None] * k)                          # (..., K)
        e2 = np.exp(1j * psi[..., 1, None] * k)
        if not derivative:
            return np.real(np.einsum("...a,cab,...b->...c", e1, self.own, e2))
        return np.stack([np.real(np.einsum("...a,cab,...b->...c", e1 * 1j * k, self.own, e2)),
                         np.real(np.einsum("...a,cab,...b->...c", e1, self.own, e2 * 1j * k))],
                        -1)


class NoLattice(BadInput):
    """The rate maps show no hexagonal lattice (fewer than six autocorrelogram peaks)."""


def estimate_lattice(position, counts, dt: float, map_bin: float = 0.025) -> tuple[float, float]:
    """The module's spacing (m) and wave-vector orientation in ``[0, pi / 3)`` (rad).

    Parameters
    ----------
    position : ndarray, shape (T, 2)
        Positions (m).
    counts : ndarray, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    map_bin : float
        Side of a rate-map bin (m).

    Returns
    -------
    spacing, orientation : float
    """
    lo, hi = position.min(0), position.max(0)
    nb = np.maximum(2, np.ceil((hi - lo) / map_bin).astype(int))
    idx = np.minimum(((position - lo) / map_bin).astype(int), nb - 1)
    flat = idx[:, 1] * nb[0] + idx[:, 0]
    occ = np.bincount(flat, minlength=nb[0] * nb[1]).astype(float)
    x = np.where(np.isfinite(counts), counts, 0.0)
    sums = np.stack([np.bincount(flat, x[:, i], nb[0] * nb[1]) for i in range(x.shape[1])])
    maps = np.where(occ > 0, sums / np.maximum(occ, 1) / dt, np.nan).reshape(-1, nb[1], nb[0])
    stack = autocorrelogram(maps)
    seen = np.isfinite(stack)
    ac = np.where(seen.any(0), np.where(seen, stack, 0.0).sum(0) / np.maximum(seen.sum(0), 1),
                  np.nan)
    cy, cx = nb[1] - 1, nb[0] - 1
    a = np.where(np.isfinite(ac), ac, -np.inf)
    core = a[1:-1, 1:-1]
    peak = np.ones_like(core, dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                peak &= core > a[1 + dy:a.shape[0] - 1 + dy, 1 + dx:a.shape[1] - 1 + dx]
    py, px = np.nonzero(peak & (core > 0))
    vec = np.stack([px + 1 - cx, py + 1 - cy], axis=1) * map_bin
    r = np.hypot(vec[:, 0], vec[:, 1])
    keep = r > 2 * map_bin
    vec, r = vec[keep], r[keep]
    if r.size < 6:
        raise NoLattice("position, counts: no hexagonal autocorrelogram found (fewer than six "
                        "peaks); give the module's spacing and orientation")
    near = np.argsort(r)[:6]
    spacing = float(np.median(r[near]))
    ang = np.mod(np.arctan2(vec[near, 1], vec[near, 0]) - math.pi / 6, math.pi / 3)
    orient = float(np.angle(np.mean(np.exp(6j * ang))) / 6) % (math.pi / 3)
    return spacing, orient


def _curves(counts, coord, dt, bins):
    idx = np.minimum((np.mod(coord, 2 * np.pi) * bins / (2 * np.pi)).astype(int), bins - 1)
    flat = idx[:, 0] * bins + idx[:, 1]
    seen = np.isfinite(counts)
    x = np.where(seen, counts, 0.0)
    occ = np.stack([np.bincount(flat, seen[:, i], bins * bins) for i in range(x.shape[1])])
    sums = np.stack([np.bincount(flat, x[:, i], bins * bins) for i in range(x.shape[1])])
    curves = np.where(occ > 0, sums / np.maximum(occ, 1) / dt, np.nan)
    curves = curves.reshape(-1, bins, bins)
    fill = np.nanmean(curves, axis=(1, 2), keepdims=True)
    return np.where(np.isfinite(curves), curves, fill)


def _coefs(curves, bins, H):
    """Fourier coefficients (cells, K, K) of curves sampled at bin centres, ``-H..H``."""
    F = np.fft.fft2(curves) / bins**2
    k = np.r_[np.arange(-H, 0), np.arange(0, H + 1)]
    F = F[:, k][:, :, k]
    # bin centres at (j + 1/2) 2 pi / bins: shift the phase reference to 0
    half = np.exp(-1j * np.pi * np.r_[np.arange(-H, 0), np.arange(0, H + 1)] / bins)
    return F * half[None, :, None] * half[None, None, :]


def _best_phase(F, coef, size: int = 128):
    H = coef.shape[0] // 2
    spec = np.zeros((F.shape[0], size, size), dtype=complex)
    k = np.r_[np.arange(-H, 0), np.arange(0, H + 1)] % size
    X = F * np.conj(coef)[None]
    spec[:, k[:, None], k[None, :]] = X
    corr = np.real(np.fft.ifft2(spec)) * size * size
    best = corr.reshape(F.shape[0], -1).argmax(1)
    i, j = np.divmod(best, size)
    return np.mod(np.stack([i, j], 1) * 2 * np.pi / size, 2 * np.pi)


def _normalised(coef, mesh):
    """The profile rescaled to ``[0, 1]`` with its peak moved to phase 0."""
    H = coef.shape[0] // 2
    kk = np.arange(-H, H + 1)
    vals = torus_profile_values(coef, mesh)
    peak = mesh.reshape(-1, 2)[int(np.argmax(vals))]
    span = max(float(vals.max() - vals.min()), 1e-12)
    out = coef * np.exp(1j * (kk[:, None] * peak[0] + kk[None, :] * peak[1])) / span
    out[H, H] -= vals.min() / span
    return out


def place_torus_cells(counts, coord, dt: float, bins: int = 24, harmonics: int = 4,
                      iterations: int = 5, own_bins: int = 32,
                      own_harmonics: int = 8) -> TorusCells:
    """Preferred phases, gains, baselines and the shared profile (module docstring).

    Parameters
    ----------
    counts : ndarray, shape (T, cells)
        Counts per bin (NaN: not observed).
    coord : ndarray, shape (T, 2)
        Lattice phases per bin.
    dt : float
        Bin width (s).
    bins : int
        Phase bins per axis.
    harmonics : int
        Fourier terms per axis of the profile (< bins / 2).
    iterations : int
        Rounds of the alternating least squares.
    own_bins, own_harmonics : int
        Phase bins per axis and Fourier terms per axis of each cell's own tuning.

    Returns
    -------
    TorusCells
    """
    curves = _curves(counts, coord, dt, bins)
    F = _coefs(curves, bins, harmonics)
    H = harmonics
    kk = np.arange(-H, H + 1)
    centres = (np.arange(bins) + 0.5) * 2 * np.pi / bins
    mesh = np.stack(np.meshgrid(centres, centres, indexing="ij"), -1)
    g = np.maximum(curves.max((1, 2)) - curves.min((1, 2)), 1e-9)
    # start: each cell's peak bin, with the mean curve aligned on it as the profile
    peak = curves.reshape(curves.shape[0], -1).argmax(1)
    theta = np.stack(np.divmod(peak, bins), 1) * 2 * np.pi / bins + np.pi / bins
    for _ in range(iterations):
        shift = np.exp(1j * (kk[None, :, None] * theta[:, None, None, 0]
                             + kk[None, None, :] * theta[:, None, None, 1]))
        coef = np.sum(g[:, None, None] * F * shift, 0) / np.sum(g**2)
        coef = _normalised(coef, mesh)
        theta = _best_phase(F, coef)
        p = torus_profile_values(coef, mesh[None] - theta[:, None, None, :]).reshape(len(g), -1)
        y = curves.reshape(len(g), -1)
        pm, ym = p.mean(1, keepdims=True), y.mean(1, keepdims=True)
        g = np.maximum(((p - pm) * (y - ym)).sum(1) / np.maximum(((p - pm) ** 2).sum(1), 1e-12),
                       1e-9)
        b = (ym - g[:, None] * pm)[:, 0]
    own = _coefs(_curves(counts, coord, dt, own_bins), own_bins, own_harmonics)
    return TorusCells(theta, g, b, coef, own)


def _phase_error_m(a, b, spacing, orientation):
    return np.hypot(*phase_to_position_delta(wrapped(a - b), spacing, orientation).T)


def fit_torus_parts(x, dt, position, bins=60, harmonics=12, window=5, folds=5, spacing=None,
                    orientation=None) -> dict:
    """The torus counterpart of the ring's parts in :func:`~.core.fit_activity`: the cells,
    the windowed decoding, held-out errors (m) and chance, the bump frame ``psi``, the
    reference phases (of the positions) and the lattice, as a dict of
    :class:`~.core.Parts`' fields."""
    if position is None:
        raise BadInput("covariate: a torus needs the positions (T, 2); fitting a torus from "
                       "the activity alone is not supported")
    if spacing is None or orientation is None:
        spacing, orientation = estimate_lattice(position, x, dt)
    coord = np.mod(position_to_phase(position, spacing, orientation), 2 * np.pi)
    tb, th = min(bins, 24), min(harmonics, 4)
    grid = np.arange(GRID) * 2 * np.pi / GRID
    mesh = np.stack(np.meshgrid(grid, grid, indexing="ij"), -1)
    cells = place_torus_cells(x, coord, dt, tb, th)
    errors = np.full(x.shape[0], np.nan)
    edges = np.linspace(0, x.shape[0], folds + 1).astype(int)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        train = x.copy()
        train[lo:hi] = np.nan
        c = place_torus_cells(train, coord, dt, tb, th)
        dec = decode_ml(x[lo:hi], dt, c.rates(mesh), grid, window)
        errors[lo:hi] = _phase_error_m(dec, coord[lo:hi], spacing, orientation)
    decoded = decode_ml(x, dt, cells.rates(mesh), grid, window)
    rng = np.random.default_rng(0)
    chance = float(np.median(_phase_error_m(rng.uniform(0, 2 * np.pi, (4000, 2)),
                                            rng.uniform(0, 2 * np.pi, (4000, 2)),
                                            spacing, orientation)))
    return {"cells": cells, "decoded": decoded, "errors": errors, "chance": chance,
            "psi": bump_frame(decoded, coord, dt), "reference": coord,
            "lattice": {"spacing": float(spacing), "orientation": float(orientation)}}
