r"""Normal relaxation rates per mode from the autocorrelation of the activity's distance from the
manifold.

Each cell's normalised residual ``e_i(t) = (n_i(t) / dt - b_i) / g_i - p(psi_t - theta_i)`` (the
distance of the bin's activity from the fitted manifold at the bump's position ``psi_t``, cell
by cell; with a covariate ``psi_t`` is :func:`~.decode.bump_frame`, without one the bin's own
decoding) is
projected, bin by bin, on bump-frame modes by weighted least squares (weights ``g_i^2 /
lambda_i``, the inverse Poisson variances): ring ``cos k phi`` and ``sin k phi`` for ``k <=
modes`` with ``phi_i = theta_i - psi_t``; torus the constant and the three fundamental cosines
and sines of the phase difference. Poisson noise and the decoding error are independent from
bin to bin, so they add to the autocovariance at lag 0 only: for a normal mode that relaxes
like an Ornstein-Uhlenbeck process of rate ``lambda``, the autocovariance of its amplitude ``a``
at lags of ``n >= 1`` bins is

.. math:: C(n) = C(1)\, e^{-\lambda (n - 1) dt},

fitted by least squares over lags ``1..L`` (``L`` about ``2 / (lambda dt)``, found in three
rounds from ``max_lag``; a fit of ``log C`` would have to drop the lags where noise makes ``C``
negative and so bias the rate down). The rates of the cosine modes (even in the
bump frame) are reported; they are orthogonal to the tangent, so the decoding error does not
enter them to first order. Intervals: a bootstrap over contiguous blocks of the recording.

How close this comes to the truth is set by the data: on the 600 s ring of
:mod:`neurodyn.datasets` (71 cells, fluctuation 0.06 per mode against a Poisson floor five to
eight times its variance per bin) this least-squares fit scatters by 6 to 11% (sd over
simulated series), as much as the exact Gaussian (Whittle) likelihood of an Ornstein-Uhlenbeck
amplitude under white noise, which is efficient; ``L = 2 / (lambda dt)`` is its best window
(``1 / (lambda dt)`` and ``5 / (lambda dt)`` scatter more).

The fraction of the lag-1 autocovariance of the residual (summed over cells with the same
weights) that the modes carry says whether the fluctuations are those of an attractor (a few
bump-frame modes carry them: near 1) or of independent cells (``modes / cells``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from _runkit.results import Result

__all__ = ["ModeRates", "mode_amplitudes", "relaxation_rates"]


@dataclass(frozen=True)
class ModeRates(Result):
    """Relaxation rates of the normal modes.

    Attributes
    ----------
    names : tuple of str
        The modes (``"cos0"``, ``"cos1"``, ...).
    rate, low, high : ndarray, shape (modes,)
        Rates (1/s) and their 95% bootstrap interval (NaN where the mode's lag-1
        autocovariance is not above zero).
    lag1 : ndarray, shape (modes,)
        Lag-1 autocovariance of each mode's amplitude.
    fraction : float
        Share of the residual's lag-1 autocovariance carried by the modes.
    lags : int
        Largest lag (bins) fitted.
    lag1_total, lag1_se : float
        The residual's weighted lag-1 autocovariance summed over cells, and its standard error
        over the bootstrap blocks (a fraction of a total not above zero means nothing).
    significant : ndarray, shape (modes,)
        Whether the mode's lag-1 autocovariance is more than three standard errors (over the
        blocks) above zero: only those modes fluctuate measurably, and only their rates count.
    """

    names: tuple
    rate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lag1: np.ndarray
    fraction: float
    lags: int
    lag1_total: float = float("nan")
    lag1_se: float = float("nan")
    significant: np.ndarray | None = None

    def to_dict(self) -> dict:
        """JSON-ready: ``{name: {rate, low, high}}``, ``fraction``, ``lags``."""
        sig = self.significant if self.significant is not None else np.ones(len(self.names))
        return {"modes": {n: {"rate": float(r), "low": float(lo), "high": float(hi),
                              "significant": bool(g)}
                          for n, r, lo, hi, g in zip(self.names, self.rate, self.low, self.high,
                                                     sig, strict=True)},
                "fraction_in_modes": float(self.fraction), "lags": int(self.lags),
                "lag1_autocovariance": float(self.lag1_total),
                "lag1_autocovariance_se": float(self.lag1_se)}


def _design(phi: np.ndarray, modes: int) -> tuple[np.ndarray, list[str], list[int]]:
    """Bump-frame mode values ``(..., cells, M)``, their names and the columns reported.

    ``phi`` is ``(..., cells)`` (ring) or ``(..., cells, 2)`` (torus)."""
    if phi.ndim >= 2 and phi.shape[-1] == 2 and phi.ndim == 3:
        d = (phi[..., 0], phi[..., 1], phi[..., 0] - phi[..., 1])
        cols = [np.ones_like(d[0])] + [np.cos(a) for a in d] + [np.sin(a) for a in d]
        names = ["const", "cos_a", "cos_b", "cos_ab", "sin_a", "sin_b", "sin_ab"]
        return np.stack(cols, -1), names, [0, 1, 2, 3]
    cols, names = [np.ones_like(phi)], ["cos0"]
    for k in range(1, modes + 1):
        cols += [np.cos(k * phi), np.sin(k * phi)]
        names += [f"cos{k}", f"sin{k}"]
    return np.stack(cols, -1), names, [0] + [2 * k - 1 for k in range(1, modes + 1)]


def _pairs(modes: int, torus: bool) -> list[tuple[int, int, tuple[int, int]]]:
    """``(cos column, sin column, (n_a, n_b))`` of each rotating pair of :func:`_design`: the
    pair's angle is ``n_a psi_a + n_b psi_b`` (ring: ``k psi``)."""
    if torus:
        return [(1, 4, (1, 0)), (2, 5, (0, 1)), (3, 6, (1, -1))]
    return [(2 * k - 1, 2 * k, (k, 0)) for k in range(1, modes + 1)]


def _separable(phi: np.ndarray):
    """``(theta, psi)`` with ``phi = theta[None] - psi[:, None]`` (per axis), or None."""
    theta = phi[0]
    psi = phi[0, :1] - phi[:, 0]
    ok = np.abs(np.sin(0.5 * (phi - (theta[None] - psi[:, None])))).max() < 1e-9
    return (theta, psi) if ok else None


def _fast_amplitudes(e, theta, psi, weights, modes):
    """Amplitudes and projections of fully observed bins: the normal equations of every bin
    are those at ``psi = 0`` rotated, ``a(theta - psi) = R(psi) a(theta)`` with ``R`` a rotation
    of each (cos, sin) pair, so ``coef_t = R(psi_t) M^{-1} A_0^T W e_t``."""
    A0, _, _ = _design(theta[None], modes)
    A0 = A0[0]
    M = A0.T @ (weights[:, None] * A0) + 1e-9 * np.eye(A0.shape[1])
    gamma = np.linalg.solve(M, (e @ (weights[:, None] * A0)).T).T
    proj = gamma @ A0.T
    coef = gamma.copy()
    torus = theta.ndim == 2
    for c, s_, (na, nb) in _pairs(modes, torus):
        ang = na * psi[:, 0] + nb * psi[:, 1] if torus else na * psi
        C, S = np.cos(ang), np.sin(ang)
        coef[:, c] = C * gamma[:, c] + S * gamma[:, s_]
        coef[:, s_] = C * gamma[:, s_] - S * gamma[:, c]
    return coef, proj


def _general_amplitudes(e, phi, weights, modes):
    A, _, _ = _design(phi, modes)
    w = np.where(np.isfinite(e), weights[None, :], 0.0)
    e = np.where(np.isfinite(e), e, 0.0)
    AtW = A * w[..., None]
    lhs = np.einsum("tcm,tcn->tmn", AtW, A) + 1e-9 * np.eye(A.shape[-1])
    coef = np.linalg.solve(lhs, np.einsum("tcm,tc->tm", AtW, e)[..., None])[..., 0]
    return coef, np.einsum("tcm,tm->tc", A, coef)


def mode_amplitudes(residual, phi, weights, modes: int = 3, chunk: int = 20000):
    """Per-bin weighted least-squares amplitudes of the bump-frame modes.

    Where ``phi`` is ``theta_i - psi_t`` (every caller's case) the bins in which every cell
    was observed are solved at once by rotating one set of normal equations (exact; see
    :func:`_fast_amplitudes`), the others bin by bin.

    Parameters
    ----------
    residual : ndarray, shape (T, cells)
        Normalised residuals (NaN: not observed).
    phi : ndarray, shape (T, cells) or (T, cells, 2)
        Bump-frame angle of every cell per bin.
    weights : ndarray, shape (cells,)
        Least-squares weights.
    modes : int
        Highest harmonic (ring).
    chunk : int
        Bins solved at once.

    Returns
    -------
    amplitudes : ndarray, shape (T, M)
    projected : ndarray, shape (T, cells)
        The residual's part in the span of the modes.
    names : list of str
    reported : list of int
        Columns whose rates are reported.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> theta, psi = rng.uniform(0, 6.3, 30), rng.uniform(0, 6.3, 5)
    >>> phi = theta[None] - psi[:, None]
    >>> e = 0.3 * np.cos(2 * phi) - 0.1
    >>> a, proj, names, rep = mode_amplitudes(e, phi, np.ones(30), modes=3)
    >>> names[3], np.round(a[:, 3], 6).tolist()[:2], np.round(a[:, 0], 6).tolist()[:2]
    ('cos2', [0.3, 0.3], [-0.1, -0.1])
    """
    T = residual.shape[0]
    _, names, reported = _design(phi[:1], modes)
    amps = np.zeros((T, len(names)))
    proj = np.zeros(residual.shape)
    frame = _separable(phi)
    for s in range(0, T, chunk):
        e = residual[s:s + chunk]
        full = np.isfinite(e).all(1) if frame is not None else np.zeros(e.shape[0], bool)
        if full.any():
            rows = np.flatnonzero(full) + s
            amps[rows], proj[rows] = _fast_amplitudes(e[full], frame[0], frame[1][rows],
                                                      weights, modes)
        if not full.all():
            rows = np.flatnonzero(~full) + s
            amps[rows], proj[rows] = _general_amplitudes(e[~full], phi[rows], weights, modes)
    return amps, proj, names, reported


def _block_sums(a: np.ndarray, lags: int, blocks: int) -> np.ndarray:
    """Per-block sums ``(blocks, lags + 1, 2)``: sum of ``a_t a_{t+n}`` and the pair count."""
    T = a.shape[0]
    edges = np.linspace(0, T, blocks + 1).astype(int)
    out = np.zeros((blocks, lags + 1, 2))
    for b in range(blocks):
        lo, hi = edges[b], edges[b + 1]
        for n in range(lags + 1):
            x, y = a[lo:min(hi, T - n)], a[lo + n:min(hi, T - n) + n]
            out[b, n] = (float(np.sum(x * y)), x.size)
    return out


def _rates(C: np.ndarray, dt: float) -> np.ndarray:
    """Least-squares fits of rows ``C(0..L)`` ``(B, L + 1)`` over lags ``1..L`` to ``A exp(-rate
    (n - 1) dt)``: ``A`` in closed form for each rate, the rate the best of 400 log-spaced
    values from ``1e-3 / dt`` to ``5 / dt``, refined by a parabola in the log; NaN where
    ``C(1) <= 0``."""
    c = np.atleast_2d(C)[:, 1:]
    x = np.arange(c.shape[1]) * dt
    log_r = np.linspace(np.log(1e-3 / dt), np.log(5.0 / dt), 400)
    E = np.exp(-np.exp(log_r)[:, None] * x[None, :])  # (rates, L)
    proj = c @ E.T  # (B, rates)
    gain = np.where(proj > 0, proj**2 / np.sum(E**2, axis=1), -1.0)  # loss = |c|^2 - gain
    i = np.clip(np.argmax(gain, axis=1), 1, log_r.size - 2)
    rows = np.arange(c.shape[0])
    g0, g1, g2 = gain[rows, i - 1], gain[rows, i], gain[rows, i + 1]
    den = g0 - 2 * g1 + g2
    ok = (den < 0) & (np.minimum(g0, g2) >= 0)
    off = np.where(ok, 0.5 * (g0 - g2) / np.where(ok, den, -1.0), 0.0)
    step = log_r[1] - log_r[0]
    out = np.exp(log_r[i] + np.clip(off, -1, 1) * step)
    return np.where((c[:, 0] > 0) & (c.shape[1] >= 2), out, np.nan)


def _lags_for(C: np.ndarray, dt: float, lags: int) -> int:
    """``L`` about ``2 / (rate dt)``, found by three rounds of fits from ``L = lags``."""
    L = lags
    for _ in range(3):
        rate = float(_rates(C[:L + 1], dt)[0])
        if not np.isfinite(rate):
            return L
        L = int(np.clip(np.round(2.0 / (rate * dt)), 3, lags))
    return L


def relaxation_rates(amplitudes, projected, residual, weights, dt: float, names, reported,
                     blocks: int = 20, boot: int = 200, seed: int = 0,
                     max_lag: int = 25) -> ModeRates:
    """Relaxation rates of the reported modes with block-bootstrap intervals.

    Parameters
    ----------
    amplitudes : ndarray, shape (T, M)
        From :func:`mode_amplitudes`.
    projected : ndarray, shape (T, cells)
        From :func:`mode_amplitudes`.
    residual : ndarray, shape (T, cells)
        The normalised residuals (NaN: not observed).
    weights : ndarray, shape (cells,)
        The least-squares weights.
    dt : float
        Bin width (s).
    names : list of str
        Mode names.
    reported : list of int
        Columns reported.
    blocks : int
        Contiguous blocks of the bootstrap.
    boot : int
        Bootstrap resamples.
    seed : int
        Seeds the bootstrap.
    max_lag : int
        Largest lag (bins) a fit may use.

    Returns
    -------
    ModeRates
    """
    a = amplitudes - amplitudes.mean(0)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, blocks, size=(boot, blocks))
    rates, lows, highs, lag1s, sig = [], [], [], [], []
    for m in reported:
        sums = _block_sums(a[:, m], max_lag, blocks)
        tot = sums.sum(0)
        C = tot[:, 0] / tot[:, 1]
        lag1s.append(C[1])
        per_block = sums[:, 1, 0] / np.maximum(sums[:, 1, 1], 1)
        sig.append(bool(lag1s[-1] > 3 * per_block.std(ddof=1) / np.sqrt(blocks)))
        L = _lags_for(C, dt, max_lag)
        rates.append(float(_rates(C[:L + 1], dt)[0]))
        boot_sums = sums[pick].sum(1)  # (boot, lags + 1, 2)
        draws = _rates(boot_sums[:, :L + 1, 0] / boot_sums[:, :L + 1, 1], dt)
        draws = draws[np.isfinite(draws)]
        lo, hi = (np.quantile(draws, [0.025, 0.975]) if draws.size > boot // 2 and
                  np.isfinite(rates[-1]) else (np.nan, np.nan))
        lows.append(lo)
        highs.append(hi)
    return ModeRates(tuple(names[m] for m in reported), np.array(rates), np.array(lows),
                     np.array(highs), np.array(lag1s),
                     *_frac_fields(projected, residual, weights, blocks, max_lag),
                     np.array(sig))


def _frac_fields(projected, residual, weights, blocks, max_lag):
    share, _, total, se = _fraction(projected, residual, weights, blocks)
    return share, max_lag, total, se


def _fraction(projected, residual, weights, blocks: int) -> tuple[float, int, float, float]:
    """``(share, lags, total, se)``: the share of the weighted lag-1 autocovariance of the
    residual in the modes' span (``max(C_modes, 0) / (max(C_modes, 0) + max(C_rest, 0))``, a
    fraction in ``[0, 1]`` however the parts' signs fall), a placeholder for the lags (filled
    by the caller), the total and its standard error over ``blocks`` contiguous blocks."""
    ok = np.isfinite(residual)
    e = np.where(ok, residual, 0.0)
    e = e - e.mean(0)
    p = projected - projected.mean(0)
    prod = (e[1:] * e[:-1]) @ weights
    total = float(prod.mean())
    kept = float(((p[1:] * p[:-1]) @ weights).mean())
    per_block = np.array([b.mean() for b in np.array_split(prod, blocks)])
    se = float(per_block.std(ddof=1) / np.sqrt(blocks))
    rest = total - kept
    share = max(kept, 0.0) / max(max(kept, 0.0) + max(rest, 0.0), 1e-300)
    return share, 0, total, se
