r"""Maximum-likelihood decoding of the bump's position from spike counts.

Under independent Poisson counts ``n_i`` in a bin of ``dt`` seconds, with expected rates
``lambda_i(psi)`` of the fitted cells, the log-likelihood of the bump at ``psi`` is

.. math:: \ell(\psi) = \sum_i n_i \log \lambda_i(\psi) - dt \sum_i \lambda_i(\psi),

(summed over the bins of a window when the counts of a few neighbouring bins are pooled),
evaluated on a grid of ``grid`` angles (ring) or ``grid x grid`` phases (torus), refined by a
parabola through the best point and its neighbours along each axis. Cells not observed in a
bin (NaN counts) are left out of that bin's sum. Rates are floored at ``1e-3`` of the mean rate
so a cell silent at the decoded point cannot veto it.

With a covariate, :func:`bump_frame` gives the bump's position for the normal residual: the
covariate plus the decoded offset from it, less the decoder's bias as a function of the
covariate, averaged over a few seconds.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import uniform_filter1d

from _runkit import BadInput

__all__ = ["decode_ml", "windowed", "wrapped", "bump_frame"]

#: time bins decoded at once (memory: chunk x grid floats)
_CHUNK = 20000


def wrapped(x) -> np.ndarray:
    """Angles in ``(-pi, pi]``; shape as the input.

    Parameters
    ----------
    x : array_like, shape (...,)
        Angles (rad).

    Returns
    -------
    ndarray, shape (...,)

    Examples
    --------
    >>> wrapped(np.array([3 * np.pi / 2])).round(4).tolist()
    [-1.5708]
    """
    return np.angle(np.exp(1j * np.asarray(x, dtype=float)))


def _parabola(lm: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    den = lo - 2 * lm + hi
    return np.where(den < 0, 0.5 * (lo - hi) / np.where(den < 0, den, -1), 0.0)


def windowed(counts, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts summed over a centred window of bins, and the number of observed bins per cell.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin (NaN: not observed).
    window : int
        Bins per window (odd, >= 1; cut at the ends of the record).

    Returns
    -------
    sums, observed : ndarray, shape (T, cells)

    Examples
    --------
    >>> s, n = windowed(np.ones((4, 1)), 3)
    >>> s[:, 0].tolist(), n[:, 0].tolist()
    ([2.0, 3.0, 3.0, 2.0], [2.0, 3.0, 3.0, 2.0])
    """
    x = np.asarray(counts, dtype=float)
    if not (isinstance(window, int) and window >= 1 and window % 2 == 1):
        raise BadInput(f"window={window!r}: must be an odd integer >= 1", param="window")
    seen = np.isfinite(x)
    if window == 1:
        return np.where(seen, x, 0.0), seen.astype(float)
    half = window // 2

    def run(a):
        c = np.vstack([np.zeros((1, a.shape[1])), np.cumsum(a, axis=0)])
        hi = np.minimum(np.arange(a.shape[0]) + half + 1, a.shape[0])
        lo = np.maximum(np.arange(a.shape[0]) - half, 0)
        return c[hi] - c[lo]

    return run(np.where(seen, x, 0.0)), run(seen.astype(float))


def decode_ml(counts, dt: float, rates_on_grid, grid: np.ndarray, window: int = 1
              ) -> np.ndarray:
    """The maximum-likelihood bump position per bin (from the counts of ``window`` bins
    centred on it: the bump is taken to stay put over the window).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin (NaN: not observed).
    dt : float
        Bin width (s).
    rates_on_grid : array_like, shape (G, cells) or (G, G, cells)
        Expected rates (Hz) with the bump at each grid angle (ring) or phase pair (torus).
    grid : ndarray, shape (G,)
        The grid's angles, uniformly spaced over ``[0, 2 pi)`` (both axes on a torus).
    window : int
        Odd number of bins pooled per decoded bin (see :func:`windowed`).

    Returns
    -------
    ndarray, shape (T,) or (T, 2)
        Decoded angles or phases in ``[0, 2 pi)``.

    Examples
    --------
    >>> grid = np.arange(90) * 2 * np.pi / 90
    >>> theta = np.arange(12) * 2 * np.pi / 12
    >>> lam = 1 + 30 * np.exp(2 * (np.cos(grid[:, None] - theta) - 1))
    >>> n = np.random.default_rng(0).poisson(lam[[10, 40]] * 20.0)
    >>> (decode_ml(n, 20.0, lam, grid) * 90 / (2 * np.pi)).round().tolist()
    [10.0, 40.0]
    """
    sums, observed = windowed(counts, window)
    lam = np.asarray(rates_on_grid, dtype=float)
    torus = lam.ndim == 3
    g = grid.size
    flat = lam.reshape(-1, lam.shape[-1])
    flat = np.maximum(flat, 1e-3 * max(float(flat.mean()), 1e-12))
    log_lam, rate_sum = np.log(flat).T, flat.T * dt
    full = bool((observed == observed.max()).all())
    out = np.empty((sums.shape[0], 2) if torus else sums.shape[0])
    step = 2 * np.pi / g
    for s in range(0, sums.shape[0], _CHUNK):
        ll = sums[s:s + _CHUNK] @ log_lam
        ok = observed[s:s + _CHUNK]
        ll -= (ok[0, 0] * rate_sum.sum(0))[None] if full else ok @ rate_sum
        if torus:
            ll = ll.reshape(-1, g, g)
            best = ll.reshape(ll.shape[0], -1).argmax(1)
            i, j = np.divmod(best, g)
            r = np.arange(ll.shape[0])
            di = _parabola(ll[r, i, j], ll[r, (i - 1) % g, j], ll[r, (i + 1) % g, j])
            dj = _parabola(ll[r, i, j], ll[r, i, (j - 1) % g], ll[r, i, (j + 1) % g])
            out[s:s + _CHUNK] = np.stack([(i + di) * step, (j + dj) * step], axis=1)
        else:
            i = ll.argmax(1)
            r = np.arange(ll.shape[0])
            di = _parabola(ll[r, i], ll[r, (i - 1) % g], ll[r, (i + 1) % g])
            out[s:s + _CHUNK] = (i + di) * step
    return np.mod(out, 2 * np.pi)


def _debiased(decoded, covariate, bins: int = 60) -> np.ndarray:
    """The decoded coordinate less its mean error as a function of the covariate (the
    decoder's bias where cells are sparse): ``bins`` sectors of a ring, ``bins / 5`` squared
    phase bins of a torus (the bias depends on both phases)."""
    r = wrapped(decoded - covariate)
    c = np.mod(covariate, 2 * np.pi)
    if r.ndim == 1:
        idx, size = np.minimum((c * bins / (2 * np.pi)).astype(int), bins - 1), bins
    else:
        side = max(2, bins // 5)
        ij = np.minimum((c * side / (2 * np.pi)).astype(int), side - 1)
        idx, size = ij[:, 0] * side + ij[:, 1], side * side
    z = np.exp(1j * r)
    bias = [np.angle(np.bincount(idx, z[:, a].real if r.ndim > 1 else z.real, size)
                     + 1j * np.bincount(idx, z[:, a].imag if r.ndim > 1 else z.imag, size))
            for a in range(1 if r.ndim == 1 else r.shape[1])]
    if r.ndim == 1:
        return decoded - bias[0][idx]
    return decoded - np.stack([b[idx] for b in bias], axis=1)


def bump_frame(decoded, covariate, dt: float, seconds: float = 3.0) -> np.ndarray:
    """The bump's position for the normal residual: the covariate plus the decoder's
    bias-free offset from it averaged over ``seconds`` (circular moving average, per axis).

    The bump follows the covariate up to a slowly drifting offset (its diffusion about it), so
    this position is far more precise than a single bin's decoding (about 2 degrees against 12
    on the ring of :mod:`neurodyn.datasets`). A single bin's decoding error ``delta`` multiplies
    every mode ``cos k phi`` by about ``exp(-k^2 var(delta) / 2)`` and so loses a quarter of the
    second mode's fluctuation; the error of this average is slow and small, and enters the
    even modes only at second order.

    Parameters
    ----------
    decoded : ndarray, shape (T,) or (T, 2)
        Windowed decoding (rad).
    covariate : ndarray, shape (T,) or (T, 2)
        The covariate's angle or phases (rad).
    dt : float
        Bin width (s).
    seconds : float
        Width of the moving average (s).

    Returns
    -------
    ndarray, shape (T,) or (T, 2)
        Angles in ``[0, 2 pi)``.

    Examples
    --------
    >>> h = np.linspace(0, 40, 2000)
    >>> rng = np.random.default_rng(0)
    >>> drift = 0.3 * np.sin(h / 7)                   # a slow offset from the covariate
    >>> noisy = h + drift + rng.normal(0, 0.2, h.size)
    >>> psi = bump_frame(noisy, h, 0.02, seconds=1.0)
    >>> bool(np.median(np.abs(wrapped(psi - h - drift))) < 0.05)
    True
    """
    r = wrapped(_debiased(decoded, covariate) - covariate)
    size = max(1, int(round(seconds / dt)))
    z = np.exp(1j * r)
    mean = (uniform_filter1d(z.real, size, axis=0, mode="nearest")
            + 1j * uniform_filter1d(z.imag, size, axis=0, mode="nearest"))
    return np.mod(covariate + np.angle(mean), 2 * np.pi)
