r"""Coherent bump-frame fluctuations beyond a shared gain: the ``fluctuations`` test.

Each cell's residual about its **own** tuning curve at the bump's position ``psi_t``,

.. math:: e_i(t) = \big(n_i(t)/dt - f_i(\psi_t)\big) / g_i,

(``f_i`` the cell's own Fourier-smoothed curve, estimated against ``psi_t`` itself, so neither
heterogeneous widths nor a blur leave a mismatch that would follow the bump), weighted by the
inverse Poisson variances ``w_i = g_i^2 / \bar f_i``, is split bin by bin by weighted least
squares into four parts:

- the **gain**: the tuning itself, ``u_i(t) = (f_i(\psi_t) - \min f_i) / g_i`` -- a shared
  multiplicative gain (a feed-forward population's classic confound) lies entirely here, and
  so does the bump's amplitude;
- the **tangent**: each cell's tuning slope ``f_i'(\psi_t) / g_i`` (per axis): the bump's
  position about ``psi_t``, which the ``drift`` test judges (so it is kept out of this one),
  and, where ``psi_t`` is each bin's own decoding (no covariate), the tuning's curvature
  ``f_i''(\psi_t) / g_i``, the decoding error's second-order imprint;
- the **modes**: the bump-frame modes (ring ``cos k phi``, ``sin k phi``, ``k <= modes``;
  torus the constant and the cosines and sines of the hexagonal lattice's first ``modes``
  shells of wave vectors, :data:`SHELLS`), made orthogonal to the gain and the tangent: the
  bump's width and shape;
- the **rest**: what no mode carries.

With a covariate, each cell's part linear in the covariate's angular velocity along its own
tuning slope, ``omega_t f_i'(\psi_t)``, is removed first (cells that anticipate or lag the
covariate by their own time constants look coherent otherwise).

Poisson noise is independent from bin to bin, so a lag-1 autocovariance (summed over cells with
the weights) holds slow fluctuations alone. Cells fluctuating each on their own also leak into
the modes: cell ``i``'s share is the projection's leverage ``P_ii(t)`` on it, so their
contribution to the modes' autocovariance is ``L = sum_i w_i P_ii(t) e_i(t) e_i(t+1)``
(averaged over bins). The statistic is the **coherent excess**

.. math:: E = C_{modes} - L,

near 0 for independent cells and for a shared gain (removed), positive when the cells' shape
fluctuations are coherent in the bump frame, as an attractor's are; its standard error is
taken over contiguous blocks. The test:

- ``pass``: ``E`` above three standard errors;
- ``fail``: ``E`` below that although a coherent shape fluctuation of ``smallest`` (5%) of the
  bump would have shown -- the detectable size ``sqrt(3 SE / P_u)``, ``P_u`` the weighted power
  of the tuning itself, is below it;
- ``inconclusive`` otherwise (too few cells or spikes to see).

Where ``psi_t`` is decoded from the bin itself (no covariate) the decoding's error leaves an
imprint on the modes that follows the spike count, and so a shared gain: ``E`` is then judged
by its excess over surrogates made under a shared gain alone (``null``).
"""

from __future__ import annotations

import math

import numpy as np

from ..relaxation import _design
from .rule import Evidence

__all__ = ["bump_frame_fluctuations", "lag1_parts", "judged", "SMALLEST", "SHELLS"]

#: the hexagonal lattice's wave vectors in index space, shell by shell (the first shell is
#: the three fundamental modes)
SHELLS = (((1, 0), (0, 1), (1, -1)), ((1, 1), (2, -1), (1, -2)), ((2, 0), (0, 2), (2, -2)))
#: the smallest coherent shape fluctuation (relative to the bump) a ``fail`` must rule out
SMALLEST = 0.05
#: bins solved at once
_CHUNK = 20000


def _without_lag(e, slope, omega):
    """``e`` less each cell's least-squares multiple of ``omega_t slope_i(t)`` (per axis)."""
    if omega is None:
        return e
    v = slope * (omega[:, None, :] if omega.ndim == 2 else omega[:, None, None])
    ok = np.isfinite(e)
    e0 = np.where(ok, e, 0.0)
    v = np.where(ok[..., None], v, 0.0)
    G = np.einsum("tca,tcb->cab", v, v) + 1e-12 * np.eye(v.shape[-1])
    beta = np.linalg.solve(G, np.einsum("tca,tc->ca", v, e0)[..., None])[..., 0]
    return e - np.einsum("tca,ca->tc", v, beta)


def _gram_solve(N, w, Y):
    """``(N^T W N)^{-1} N^T W Y`` per bin (ridged), and the inverse Gram matrices."""
    NtW = N * w[..., None]
    G = np.einsum("tck,tcj->tkj", NtW, N)
    G += 1e-9 * np.trace(G, axis1=1, axis2=2)[:, None, None] * np.eye(N.shape[-1]) + \
        1e-300 * np.eye(N.shape[-1])
    Ginv = np.linalg.inv(G)
    return Ginv @ np.einsum("tck,tcm->tkm", NtW, Y), Ginv


def _modes(phi, modes):
    """Bump-frame mode values ``(T, cells, M)``: the ring's harmonics up to ``modes``, or the
    constant and the cosines and sines of the torus's first ``modes`` shells (at most 3)."""
    if phi.ndim == 2:
        return _design(phi, modes)[0]
    cols = [np.ones(phi.shape[:-1])]
    for shell in SHELLS[:max(1, min(modes, len(SHELLS)))]:
        for a, b in shell:
            ang = a * phi[..., 0] + b * phi[..., 1]
            cols += [np.cos(ang), np.sin(ang)]
    return np.stack(cols, -1)


def _split(e, u, slope, phi, weights, modes, curvature=None):
    """Per-bin parts ``(gain, tangent, modes, rest)`` of ``e`` (each (T, cells), 0 where
    unobserved) and each cell's leverage in the modes' projection ``(T, cells)``."""
    ok = np.isfinite(e)
    w = np.where(ok, weights[None, :], 0.0)
    e0 = np.where(ok, e, 0.0)
    cols = [np.where(ok, u, 0.0)[..., None], np.where(ok[..., None], slope, 0.0)]
    if curvature is not None:
        cols.append(np.where(ok, curvature, 0.0)[..., None])
    N = np.concatenate(cols, -1)
    beta, _ = _gram_solve(N, w, e0[..., None])
    gain = N[..., 0] * beta[:, 0, 0][:, None]
    e1 = e0 - np.einsum("tck,tkm->tcm", N, beta)[..., 0]
    A = _modes(phi, modes)
    c, _ = _gram_solve(N, w, A)
    A1 = A - np.einsum("tck,tkm->tcm", N, c)
    a, Ginv = _gram_solve(A1, w, e1[..., None])
    mode = np.einsum("tcm,tmk->tck", A1, a)[..., 0]
    leverage = np.einsum("tcm,tmn,tcn->tc", A1, Ginv, A1) * w
    return gain, e0 - e1 - gain, mode * ok, (e1 - mode) * ok, leverage * ok


def _lag1(prod, blocks):
    """Mean of per-bin lag-1 products and its standard error over contiguous blocks."""
    per = np.array([b.mean() for b in np.array_split(prod, blocks)])
    return float(prod.mean()), float(per.std(ddof=1) / np.sqrt(blocks))


def lag1_parts(residual, tuning, phi, weights, *, slope=None, omega=None, curvature=None,
               modes: int = 3, blocks: int = 20) -> dict:
    """Lag-1 autocovariances (with standard errors) of the gain, tangent, modes and rest, the
    leak of the cells' own fluctuations into the modes, the coherent excess, and the tuning's
    weighted power (arguments as :func:`bump_frame_fluctuations`).

    Returns
    -------
    dict
        ``gain``, ``tangent``, ``modes``, ``rest``, ``leak``, ``excess`` (each ``(C, SE)``)
        and ``tuning_power``.
    """
    e = _without_lag(np.asarray(residual, dtype=float), slope, omega)
    T = e.shape[0]
    slope = np.zeros(e.shape + (0,)) if slope is None else slope
    parts = [np.zeros(e.shape) for _ in range(5)]
    for s in range(0, T, _CHUNK):
        sl = slice(s, s + _CHUNK)
        curv = None if curvature is None else curvature[sl]
        for store, part in zip(parts, _split(e[sl], tuning[sl], slope[sl], phi[sl], weights,
                                             modes, curv), strict=True):
            store[sl] = part
    *kept, lev = parts
    for x in kept:  # centred in place: the parts are (T, cells) each
        x -= x.mean(0)
    prods = {k: (x[1:] * x[:-1]) @ weights for k, x in zip(("gain", "tangent", "modes", "rest"),
                                                             kept, strict=True)}
    own = kept[2] + kept[3]
    prods["leak"] = (lev[:-1] * own[1:] * own[:-1]) @ weights
    prods["excess"] = prods["modes"] - prods["leak"]
    out = {k: _lag1(v, blocks) for k, v in prods.items()}
    ok = np.isfinite(tuning) & np.isfinite(e)
    out["tuning_power"] = float(np.mean(np.where(ok, tuning, 0.0) ** 2 @ weights))
    return out


def judged(parts: dict, null=None, smallest: float = SMALLEST) -> Evidence:
    """The ``fluctuations`` test's decision from :func:`lag1_parts` (module docstring); with
    ``null`` (:func:`lag1_parts` of surrogates), the coherent excess less the surrogates'
    mean, its standard error combined with theirs and their spread."""
    excess, se = parts["excess"]
    details = {k: list(parts[k]) for k in ("gain", "tangent", "modes", "rest", "leak")}
    if null:
        base = np.array([n["excess"][0] for n in null])
        ses = np.array([n["excess"][1] for n in null])
        spread = base.std(ddof=1) if base.size > 1 else 0.0
        details["excess_measured"] = [excess, se]
        details["excess_null"] = [float(base.mean()), float(np.sqrt(np.mean(ses**2)))]
        excess -= float(base.mean())
        se = float(np.sqrt(se**2 + (np.mean(ses**2) + spread**2) / base.size))
    p_u = parts["tuning_power"]
    detectable = math.sqrt(3 * se / p_u) if p_u > 0 else math.inf
    details.update({"excess": [excess, se], "detectable": detectable, "smallest": smallest,
                    "tuning_power": p_u})
    z = excess / se if se > 0 else 0.0
    if z > 3:
        status, why = "pass", (f"the cells' shape fluctuations are coherent in the bump frame "
                               f"beyond a shared gain ({z:.1f} standard errors)")
    elif detectable <= smallest:
        status, why = "fail", (f"no coherent shape fluctuation beyond the gain ({z:.1f} "
                               f"standard errors), where one of {detectable:.1%} of the bump "
                               "would show")
    else:
        status, why = "inconclusive", (f"coherent excess {z:.1f} standard errors; only a shape "
                                       f"fluctuation of {detectable:.1%} of the bump would show")
    return Evidence("fluctuations", "specific", status, float(z), 3.0, power=status !=
                    "inconclusive", reason=why, details=details)


def bump_frame_fluctuations(residual, tuning, phi, weights, *, slope=None, omega=None,
                            curvature=None, null=None, modes: int = 3, blocks: int = 20,
                            smallest: float = SMALLEST) -> Evidence:
    """The ``fluctuations`` test (module docstring).

    Parameters
    ----------
    residual : ndarray, shape (T, cells)
        ``e_i(t)``, normalised by each cell's gain (NaN: not observed).
    tuning : ndarray, shape (T, cells)
        The gain direction ``u_i(t)``.
    phi : ndarray, shape (T, cells) or (T, cells, 2)
        Bump-frame angle of every cell per bin.
    weights : ndarray, shape (cells,)
        Inverse Poisson variances of the residuals.
    slope : ndarray, shape (T, cells, axes) or None
        Each cell's tuning slope ``f_i'(psi_t) / g_i`` along the manifold's axes (the tangent;
        None: no tangent part).
    omega : ndarray, shape (T,) or (T, axes), or None
        The covariate's angular velocity (rad/s); None: nothing removed.
    curvature : ndarray, shape (T, cells) or None
        Each cell's second derivative ``f_i''(psi_t) / g_i``, removed with the tangent.
    null : list of dict or None
        :func:`lag1_parts` of surrogates made under a shared gain alone.
    modes : int
        Highest harmonic of the ring's modes, or the torus's shells (at most 3).
    blocks : int
        Contiguous blocks of the standard errors.
    smallest : float
        Smallest shape fluctuation a ``fail`` must rule out.

    Returns
    -------
    Evidence
        ``statistic`` the coherent excess in standard errors, ``threshold`` 3; ``details``
        each part's lag-1 autocovariance and standard error, the detectable size and ``P_u``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> T, n = 4000, 40
    >>> theta = rng.uniform(0, 2 * np.pi, n)
    >>> phi = theta[None] - np.linspace(0, 60, T)[:, None]
    >>> u = np.exp(2 * (np.cos(phi) - 1))
    >>> slow = lambda k: np.convolve(rng.normal(0, 1, (T, k)).T.ravel(), np.ones(20) / 20 ** .5,
    ...                              "same").reshape(k, T).T
    >>> noise = rng.normal(0, 0.3, (T, n))
    >>> width = 0.15 * slow(1) * 2 * (np.cos(phi) - 1) * u        # coherent width changes
    >>> bump_frame_fluctuations(width + noise, u, phi, np.ones(n)).status
    'pass'
    >>> gain = 0.15 * slow(1) * u                                  # a shared gain only
    >>> bump_frame_fluctuations(gain + noise, u, phi, np.ones(n)).status
    'fail'
    >>> own = 0.15 * slow(n) * u                                   # each cell on its own
    >>> bump_frame_fluctuations(own + noise, u, phi, np.ones(n)).status
    'fail'
    """
    parts = lag1_parts(residual, tuning, phi, weights, slope=slope, omega=omega,
                       curvature=curvature, modes=modes, blocks=blocks)
    return judged(parts, null, smallest)
