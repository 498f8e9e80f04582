r"""Drift of attractor states under noise: diffusion with an interval, theory, horizons.

A noisy run moves the bump along the manifold as a Brownian motion of diffusion tensor ``D``.
Its estimate here uses the increments of the unwrapped decoded phase at several lags ``L``,

.. math:: C_{ab}(L) = \langle \Delta_L\psi_a\, \Delta_L\psi_b \rangle
          = 2 D_{ab} L + c_{ab},

averaged over every window of every run (overlapping windows), and fitted by least squares over
the lags with an intercept ``c`` (the decoding jitter of the phase adds ``2 var`` at every lag).
The 95% interval comes from a bootstrap over runs (runs are independent; windows within a run are
not): runs are resampled with replacement and the fit repeated. This replaces a fit of the
cumulative MSD through the origin, whose points are all correlated and which has no interval.

The theory (independent noise ``sigma dW`` on every ``u_i``) projects the noise on the left null
vectors ``l_a = phi'(u*) t_a`` of the Jacobian, ``t_a = du*/dpsi_a``:

.. math:: D = \frac{\sigma^2}{2} M^{-1} G M^{-T}, \qquad M_{ab} = l_a\cdot t_b,
          \quad G_{ab} = l_a\cdot l_b

(for a ring ``D = sigma^2 |l|^2 / (2 (l.t)^2)``). Derivation, at any ``N``: near a fixed point
``u*`` of ``du = f(u) dt + sigma dW`` write ``u = u*(psi) + y`` with ``l . y = 0``; to first
order ``l^T J = 0`` (``J = -(I + H_F D)/tau`` with ``H_F`` symmetric, so ``J^T (D t) = 0``)
gives ``(l . t) dpsi = sigma l . dW``, a Brownian motion of the stated ``D``. The sums run over
the ``N`` sampled neurons and ``t`` is the exact spectral derivative (the generator of the
continuous rotation), so this is the finite-``N`` result, not a continuum limit. It equals the
projection on the null vectors of the numerically built Jacobian to rounding on the 64-neuron
ring (to 2e-5 on a 16 x 16 sheet, whose sampling breaks the continuous symmetry at that order);
a continuum version (integrals of ``phi'(u*)^2 t^2`` and ``phi'(u*) t^2``) differs from it by
the aliasing of their harmonics above ``N`` only (0.2% at N=16, below 1e-7 from N=32 for the
default bump). Nor does the decoder add a short-lag term: the population vector's gradient
``d psi_hat / d u`` is parallel to ``l`` for a cosine bump, so the decoded phase carries no
first-order jitter from the normal modes. What remains is of order ``sigma^2`` (nonlinear) and
``dt`` (Euler-Maruyama). On the 64-neuron ring (1,024 runs of 400 tau, the same noise draws at
every ``sigma``) the first lowers ``D`` by 0.1% at ``sigma = 0.1`` and 0.7-1.0% at
``sigma = 0.3``; halving ``dt`` from 0.05 moves it by less than the 1% resolution at
``sigma = 0.1`` and ``0.3``.

The error of path integration then grows like
``sqrt(2 tr(D) t)`` and the mean time for the error to first reach ``epsilon`` is
``epsilon^2 / (2 tr(D))`` (the mean exit time of an isotropic Brownian motion from a ball of
radius ``epsilon``; the Burak-Fiete measure of how long integration stays accurate).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

if TYPE_CHECKING:
    from ..network import HopfieldNetwork

__all__ = [
    "DiffusionEstimate", "unwrap_track", "diffusion_estimate", "diffusion_tensor_theory",
    "ErrorGrowth", "error_growth", "IntegrationHorizon", "integration_horizon",
]


def _numpy(x, dtype=None) -> np.ndarray:
    """An array of ``x``, a tensor (on any device) or anything numpy takes; torch is not
    imported for numpy input."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype)


def _as_track(phases) -> np.ndarray:
    p = _numpy(phases)
    p = np.asarray(p, dtype=float)
    if p.ndim == 2:
        p = p[..., None]
    if p.ndim != 3 or p.shape[0] < 3:
        raise BadInput(f"phases: shape {p.shape}; expected (T, B) or (T, B, dim) with T >= 3",
                       param="phases")
    if not np.all(np.isfinite(p)):
        raise BadInput("phases: non-finite values", param="phases")
    return p


def unwrap_track(phases) -> np.ndarray:
    """Unwrapped phase tracks: the cumulative sum of wrapped increments.

    .. math:: \\tilde\\psi_n = \\psi_0 + \\sum_{m<n} \\mathrm{wrap}(\\psi_{m+1} - \\psi_m)

    Parameters
    ----------
    phases : array_like, shape (T, B) or (T, B, dim)
        Phases in radians (any branch).

    Returns
    -------
    array ``(T, B, dim)``.

    Examples
    --------
    >>> import numpy as np
    >>> unwrap_track(np.array([[6.2], [0.05], [0.2]]))[:, 0, 0].round(3).tolist()
    [6.2, 6.333, 6.483]
    """
    p = _as_track(phases)
    d = np.diff(p, axis=0)
    d = (d + np.pi) % (2 * np.pi) - np.pi
    out = np.empty_like(p)
    out[0] = p[0]
    out[1:] = p[0] + np.cumsum(d, axis=0)
    return out


@dataclass(frozen=True)
class DiffusionEstimate(Result):
    """Diffusion coefficient from increments at several lags, with a bootstrap interval.

    Attributes
    ----------
    D : per-axis diffusion coefficient ``tr(D) / dim`` (rad^2 per time unit).
    low, high : the ``level`` bootstrap percentile interval of ``D``.
    level : coverage of the interval (0.95).
    tensor : ``(dim, dim)`` point estimate of ``D_ab``.
    lags : lags in time units.
    msd : per-axis mean squared increment at each lag (``tr C(L) / dim``).
    intercept : fitted per-axis intercept ``tr(c) / dim``.
    runs, boot : runs and bootstrap resamples.
    """

    D: float
    low: float
    high: float
    level: float
    tensor: tuple
    lags: tuple
    msd: tuple
    intercept: float
    runs: int
    boot: int

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in ``[low, high]``."""
        return bool(self.low <= value <= self.high)

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return asdict(self)


def _lag_steps(t: np.ndarray, lags, steps: int) -> np.ndarray:
    dt = float(t[1] - t[0])
    if np.max(np.abs(np.diff(t) - dt)) > 1e-6 * dt:
        raise BadInput("t: saved times must be uniformly spaced", param="t")
    if lags is None:
        top = max(1, (steps - 1) // 4)
        k = np.unique(np.round(np.geomspace(max(1, top // 8), top, 5)).astype(int))
    else:
        k = np.rint(np.asarray(lags, dtype=float) / dt).astype(int)
        if k.ndim != 1 or k.size < 2 or np.any(k < 1) or np.any(k >= steps):
            raise BadInput(f"lags={lags!r}: need >= 2 lags of at least one saved step and "
                           f"shorter than the run ({(steps - 1) * dt:g})", param="lags")
        k = np.unique(k)
    return k


def diffusion_estimate(phases, t, lags=None, skip: float = 0.0, boot: int = 1000,
                       level: float = 0.95, seed: int = 0,
                       intercept: bool = True) -> DiffusionEstimate:
    """Diffusion coefficient of decoded phases from increments at several lags.

    .. math:: C(L) = \\frac{1}{B}\\sum_b \\frac{1}{T-L}\\sum_n
              \\Delta_L\\psi_{b,n} \\Delta_L\\psi_{b,n}^T = 2 D L + c

    fitted over the lags by least squares; ``D`` is reported per axis (``tr D / dim``) with a
    percentile bootstrap interval over runs.

    Parameters
    ----------
    phases : array_like, shape (T, B) or (T, B, dim)
        Decoded phases of ``B`` independent runs.
    t : array_like, shape (T,)
        Saved times, uniformly spaced.
    lags : array_like or None, shape (L,)
        Lags in time units (default: five lags from 1/32 to 1/4 of the run).
    skip : float
        Time discarded at the start.
    boot : int
        Bootstrap resamples (>= 100).
    level : float
        Coverage of the interval, in (0, 1).
    seed : int
        Seeds the bootstrap.
    intercept : bool
        Fit ``c`` (default) or force the fit through the origin.

    Returns
    -------
    DiffusionEstimate

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(401) * 0.5
    >>> psi = np.cumsum(rng.normal(0, np.sqrt(2 * 0.01 * 0.5), (401, 64)), axis=0)
    >>> est = diffusion_estimate(psi, t, seed=1)
    >>> bool(est.contains(0.01)), bool(abs(est.D / 0.01 - 1) < 0.15)
    (True, True)
    """
    psi, tt = _kept_track(phases, t, skip, boot, level)
    steps, runs, dim = psi.shape
    k = _lag_steps(tt, lags, steps)
    dt = float(tt[1] - tt[0])
    # per-run second moments of the increments: (runs, lags, dim, dim)
    per = np.stack([np.einsum("nba,nbc->bac", psi[j:] - psi[:-j], psi[j:] - psi[:-j])
                    / (steps - j) for j in k], axis=1)
    x = k * dt
    fit = _msd_fit(x, intercept)
    mean = per.mean(0)
    d_tensor, c0 = fit(mean)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(runs, np.full(runs, 1.0 / runs), size=boot) / runs  # (boot, runs)
    resampled = np.einsum("sb,blac->slac", weights, per)
    d_boot = np.trace(fit(resampled)[0], axis1=-2, axis2=-1) / dim
    alpha = (1 - level) / 2
    low, high = np.quantile(d_boot, [alpha, 1 - alpha])
    return DiffusionEstimate(
        D=float(np.trace(d_tensor) / dim), low=float(low), high=float(high), level=level,
        tensor=tuple(map(tuple, d_tensor.tolist())), lags=tuple(float(v) for v in x),
        msd=tuple(float(np.trace(m) / dim) for m in mean),
        intercept=float(np.trace(c0) / dim) if intercept else 0.0, runs=runs, boot=boot)


def _kept_track(phases, t, skip: float, boot: int, level: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The unwrapped phases ``(T', B, dim)`` and times ``(T',)`` after ``skip``; ``BadInput``
    for mismatched times, fewer than 3 steps or 2 runs left, or a bad ``boot`` or ``level``."""
    psi = unwrap_track(phases)
    tt = _numpy(t, float)
    if tt.shape != (psi.shape[0],):
        raise BadInput(f"t: shape {tt.shape}; expected ({psi.shape[0]},) like the phases",
                       param="t")
    keep = tt >= tt[0] + skip - 1e-12
    psi, tt = psi[keep], tt[keep]
    if psi.shape[0] < 3:
        raise BadInput(f"skip={skip}: leaves fewer than 3 saved steps", param="skip")
    if not (isinstance(boot, int) and boot >= 100):
        raise BadInput(f"boot={boot!r}: must be an integer >= 100", param="boot")
    if not 0 < level < 1:
        raise BadInput(f"level={level!r}: must be in (0, 1)", param="level")
    runs = psi.shape[1]
    if runs < 2:
        raise BadInput(f"phases: {runs} run; the bootstrap needs at least 2 independent runs",
                       param="phases")
    return psi, tt


def _msd_fit(x: np.ndarray, intercept: bool):
    """The least-squares fit of second moments ``(..., lags, dim, dim)`` at the lag times ``x``
    to ``2 D x (+ c)``: a function returning the ``D`` and ``c`` tensors (``c`` zero without
    ``intercept``)."""
    design = np.stack([2 * x, np.ones_like(x)], axis=1) if intercept else (2 * x)[:, None]
    pinv = np.linalg.pinv(design)  # (p, lags)

    def fit(c):  # c: (..., lags, dim, dim) -> D tensor, intercept tensor
        coef = np.einsum("pl,...lac->...pac", pinv, c)
        return coef[..., 0, :, :], (coef[..., 1, :, :] if intercept else 0 * coef[..., 0, :, :])

    return fit


def diffusion_tensor_theory(network: HopfieldNetwork, noise: float) -> np.ndarray:
    """Diffusion tensor of the bump for independent noise ``noise * dW`` on every ``u_i``.

    .. math:: D = \\frac{\\sigma^2}{2} M^{-1} G M^{-T}, \\quad l_a = \\phi'(u^*) t_a,
              \\quad M_{ab} = l_a \\cdot t_b, \\quad G_{ab} = l_a \\cdot l_b

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold (ring or torus).
    noise : float
        ``sigma`` (>= 0), as passed to :func:`neurodyn.dynamics.simulation.simulate`.

    Returns
    -------
    array ``(dim, dim)`` in rad^2 per time unit.
    """
    if network.manifold is None:
        raise BadInput("network: has no target manifold; build it with one (fit does)",
                       param="network")
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise >= 0):
        raise BadInput(f"noise={noise!r}: must be a finite number >= 0", param="noise")
    import torch

    g = network.geometry
    psi = torch.zeros(g.dim, dtype=torch.float64)
    m = network.manifold
    with torch.no_grad():
        u = m.u_star(psi).reshape(-1)
        tang = torch.stack([m.tangent(psi, a).reshape(-1) for a in range(g.dim)])
        left = network.activation.derivative(u) * tang
        mm = (left @ tang.T).numpy()
        gg = (left @ left.T).numpy()
    inv = np.linalg.inv(mm)
    return 0.5 * noise**2 * inv @ gg @ inv.T


@dataclass(frozen=True)
class ErrorGrowth(Result):
    """RMS path-integration error over time with a bootstrap band and the diffusion prediction.

    Attributes
    ----------
    t : ``(T,)`` times.
    rms, low, high : ``(T,)`` RMS error ``sqrt(<|e|^2>)`` over runs and its interval.
    predicted : ``(T,)`` ``sqrt(2 tr(D) t)`` (NaN without a theory).
    """

    t: np.ndarray
    rms: np.ndarray
    low: np.ndarray
    high: np.ndarray
    predicted: np.ndarray

    def ratio_final(self) -> float:
        """Measured over predicted RMS error at the last time."""
        return float(self.rms[-1] / self.predicted[-1])


def error_growth(error, t, d_trace: float | None = None, boot: int = 500, level: float = 0.95,
                 seed: int = 0) -> ErrorGrowth:
    """RMS error of path integration over time against ``sqrt(2 tr(D) t)``.

    Parameters
    ----------
    error : array_like, shape (T, B) or (T, B, dim)
        Errors (decoded minus true; wrapped or metric).
    t : array_like, shape (T,)
        Times from the start.
    d_trace : float or None
        ``tr(D)`` of the theory (per time unit), or None.
    boot : int
        Bootstrap resamples over runs.
    level : float
        Coverage of the interval, in (0, 1).
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    ErrorGrowth
    """
    e = _as_track(error)
    tt = _numpy(t, float)
    sq = (e**2).sum(-1)  # (T, B)
    runs = sq.shape[1]
    rng = np.random.default_rng(seed)
    w = rng.multinomial(runs, np.full(runs, 1.0 / runs), size=boot) / runs
    bs = np.sqrt(sq @ w.T)  # (T, boot)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(bs, [alpha, 1 - alpha], axis=1)
    pred = (np.sqrt(2 * d_trace * (tt - tt[0])) if d_trace is not None
            else np.full_like(tt, np.nan))
    return ErrorGrowth(tt, np.sqrt(sq.mean(1)), lo, hi, pred)


@dataclass(frozen=True)
class IntegrationHorizon(Result):
    """How long (and how far) integration stays within an error ``threshold``.

    Attributes
    ----------
    threshold : the error bound.
    mean_time, low, high : mean first time the error reaches the threshold, with a bootstrap
        interval over runs (NaN unless every run crossed: a censored mean is not reported).
    median_time : median first-passage time (NaN if fewer than half crossed).
    crossed : fraction of runs whose error reached the threshold within the run.
    theory_time : ``threshold^2 / (2 tr(D))`` (NaN without a theory).
    theory_time_sampled : the same for an error looked at only every ``dt`` (the saved steps):
        the barrier is effectively raised by ``0.5826 sqrt(2 tr(D) dt / dim)`` (the discrete
        monitoring correction of Broadie, Glasserman and Kou 1997), which a sampled error
        crosses later.
    mean_distance : ``mean_time * speed`` (NaN without a speed).
    """

    threshold: float
    mean_time: float
    low: float
    high: float
    median_time: float
    crossed: float
    theory_time: float
    theory_time_sampled: float
    mean_distance: float

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return asdict(self)


def integration_horizon(error, t, threshold: float, d_trace: float | None = None,
                        speed: float | None = None, boot: int = 500, seed: int = 0
                        ) -> IntegrationHorizon:
    """First time the path-integration error reaches ``threshold``: mean, median, theory.

    .. math:: \\tau_\\epsilon = \\min\\{t : |e(t)| \\ge \\epsilon\\}, \\qquad
              E[\\tau_\\epsilon] = \\epsilon^2 / (2\\, \\mathrm{tr}\\, D)

    Parameters
    ----------
    error : array_like, shape (T, B) or (T, B, dim)
        Errors of ``B`` runs.
    t : array_like, shape (T,)
        Times from the start.
    threshold : float
        The error bound (> 0), in the unit of ``error``.
    d_trace : float or None
        ``tr(D)`` for the theory.
    speed : float or None
        Mean speed, to turn the time into a distance.
    boot, seed : int
        The bootstrap over runs.

    Returns
    -------
    IntegrationHorizon
    """
    if not (isinstance(threshold, (int, float)) and threshold > 0):
        raise BadInput(f"threshold={threshold!r}: must be a number > 0", param="threshold")
    e = _as_track(error)
    tt = _numpy(t, float)
    tt = tt - tt[0]
    norm = np.sqrt((e**2).sum(-1))
    hit = norm >= threshold
    crossed = hit.any(0)
    first = np.where(crossed, tt[np.argmax(hit, axis=0)], np.inf)
    frac = float(crossed.mean())
    nan = math.nan
    mean = lo = hi = nan
    if crossed.all():
        mean = float(first.mean())
        rng = np.random.default_rng(seed)
        w = rng.multinomial(first.size, np.full(first.size, 1 / first.size), size=boot)
        bs = (w @ first) / first.size
        lo, hi = (float(x) for x in np.quantile(bs, [0.025, 0.975]))
    median = float(np.median(first)) if frac >= 0.5 else nan
    theory = sampled = nan
    if d_trace:
        theory = threshold**2 / (2 * d_trace)
        step = float(np.median(np.diff(tt)))
        shifted = threshold + 0.5826 * math.sqrt(2 * d_trace * step / e.shape[-1])
        sampled = shifted**2 / (2 * d_trace)
    dist = mean * speed if speed is not None else nan
    return IntegrationHorizon(float(threshold), mean, lo, hi, median, frac, theory, sampled,
                              dist)
