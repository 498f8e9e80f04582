"""Certified Lipschitz constants of a two-layer ReLU field in x, read from its weights alone.

Field (:mod:`flows.field`): v(x, t) = s A^T relu(W z), s = m^{-1/2}, z = z_hat or z_hat / ||z_hat||
with z_hat = [x, t, phi(t), e_c, 1]; W (m, p), A (m, d), a_r and w_r the rows, W_x = W[:, :d]
the columns that multiply x. Almost everywhere the Jacobian in x is

    J(x, t) = s A^T D W P,      D = diag(1[W z > 0]),
    P = E_x (plain z)   or   P = (I - z z^T) E_x / ||z_hat|| (normalised z),

E_x the embedding of x's coordinates. v is continuous and piecewise linear in z, so its
Lipschitz constant in x is sup ||J|| over the points where J exists, and the one-sided constant
sup_{x != y} (x - y).(v(x) - v(y)) / ||x - y||^2 is sup lambda_max(sym J). Each bound below
replaces the activation pattern D of the point by the worst of all 2^m patterns, reachable or
not, so nothing is sampled and every number is an upper bound for all x, t (and labels).

- ``product``: ||J|| <= s ||A||_2 ||W P||_2 <= s ||A||_2 ||W_x||_2 (plain) or s ||A||_2 ||W||_2
  (normalised: ||(I - z z^T) E_x|| <= 1 and ||z_hat|| >= 1, the constant feature).
- ``lift``: sup_D ||s A^T D B|| = s max_{||u|| = ||v|| = 1} sum_r relu((a_r.u)(b_r.v)) with B = W_x
  (plain) or W (normalised). With y = [u; v], (a.u)(b.v) = y^T M y, M = [[0, a b^T], [b a^T, 0]]
  / 2, whose positive part is (||a|| ||b|| / 2) e e^T, e = [a / ||a||; b / ||b||] / sqrt(2); and
  relu(y^T M y) <= y^T M^+ y. Hence the bound 2 s lambda_max(sum_r M_r^+) (||y||^2 = 2).
  Neither of ``product`` and ``lift`` is always the smaller; the certificate takes the minimum.
- ``one_sided`` (plain z only): u^T J u = s sum_r D_r (a_r.u)(w_r.u) with w_r the row of W_x, so
  sup_D lambda_max(sym J) = s max_{||u|| = 1} sum_r relu(g_r(u)), g_r(u) = (a_r.u)(w_r.u). For
  d = 2 this maximum is computed exactly: with u = (cos(phi/2), sin(phi/2)), g_r = alpha_r +
  beta_r cos phi + gamma_r sin phi; between consecutive zeros of the g_r the active set is
  fixed and the sum is one sinusoid, whose maximum on the arc is closed-form. For other d,
  relu(u^T S u) <= u^T S^+ u with S = sym(a w^T), whose positive part is (||a|| ||w|| / 4) (a /
  ||a|| + w / ||w||)(...)^T: the bound s lambda_max(sum_r S_r^+). For normalised z the one-sided
  constant is bounded by the Lipschitz constant itself.

What this is worth. For weights near their initialisation (rows of W ~ N(0, I), entries of A of
order 1) the worst pattern lines every neuron's sign up, and each bound is of order sqrt(m),
while at the points the field visits the signs are mixed and ||J|| is of order 1. The
certificate is exact about the weights and blind to which patterns occur: e^{mu} is
astronomically large at the widths of the theory runs. See ``docs/theory_bounds.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from _runkit import Result

from ..errors import FlowsError
from ..field import TwoLayerReLUField


@dataclass(frozen=True)
class LipschitzCertificate(Result):
    """Certified constants of v(., t) in x for every t (module docstring).

    Attributes
    ----------
    lipschitz : float
        min(product, lift): sup ||J||, the Lipschitz constant's upper bound.
    mu : float
        Upper bound on the one-sided constant sup lambda_max(sym J) (<= ``lipschitz``).
    product : float
        s ||A||_2 ||W_x||_2 (plain z) or s ||A||_2 ||W||_2 (normalised z).
    lift : float
        2 s lambda_max(sum_r M_r^+).
    one_sided : float or None
        s max_u sum_r relu((a_r.u)(w_r.u)) (exact for d = 2, the PSD bound otherwise; plain
        z only, else None).
    normalized : bool
        Whether z is normalised.
    certified : bool
        Always True: nothing here is sampled.
    """

    lipschitz: float
    mu: float
    product: float
    lift: float
    one_sided: float | None
    normalized: bool
    certified: bool = True


def _lift_bound(a: np.ndarray, b: np.ndarray) -> float:
    """max_{||u|| = ||v|| = 1} sum_r relu((a_r.u)(b_r.v)) <= 2 lambda_max(sum_r M_r^+), for
    rows a (m, d), b (m, q) (module docstring)."""
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    keep = (na > 0) & (nb > 0)
    e = np.concatenate([a[keep] / na[keep, None], b[keep] / nb[keep, None]], 1) / math.sqrt(2)
    if not keep.any():
        return 0.0
    m_plus = (e * (na[keep] * nb[keep] / 2)[:, None]).T @ e
    return float(2 * np.linalg.eigvalsh(m_plus)[-1])


def _psd_bound(a: np.ndarray, w: np.ndarray) -> float:
    """max_{||u|| = 1} sum_r relu((a_r.u)(w_r.u)) <= lambda_max(sum_r S_r^+), S_r = sym(a_r w_r^T);
    a, w of shape (m, d)."""
    na, nw = np.linalg.norm(a, axis=1), np.linalg.norm(w, axis=1)
    keep = (na > 0) & (nw > 0)
    if not keep.any():
        return 0.0
    e = a[keep] / na[keep, None] + w[keep] / nw[keep, None]
    s_plus = (e * (na[keep] * nw[keep] / 4)[:, None]).T @ e
    return float(np.linalg.eigvalsh(s_plus)[-1])


def _sinusoid_max(c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray) -> float:
    """max over the arcs [lo_k, hi_k] of c0_k + c1_k cos(phi) + c2_k sin(phi)."""
    def at(phi):
        return c0 + c1 * np.cos(phi) + c2 * np.sin(phi)

    best = np.maximum(at(lo), at(hi))
    peak = np.arctan2(c2, c1) % (2 * math.pi)  # where the sinusoid is largest
    peak = np.where(peak < lo, peak + 2 * math.pi, peak)
    inside = peak <= hi
    best = np.where(inside, np.maximum(best, c0 + np.hypot(c1, c2)), best)
    return float(best.max())


def one_sided_pattern_max_2d(a: np.ndarray, w: np.ndarray) -> float:
    """Exactly max_{||u|| = 1} sum_r relu((a_r.u)(w_r.u)) for a, w of shape (m, 2).

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> round(one_sided_pattern_max_2d(a, a), 12)  # sum of u_1^2 and u_2^2: 1 everywhere
    1.0
    >>> round(one_sided_pattern_max_2d(a, -a), 12)  # never positive
    0.0
    """
    # (a.u)(w.u) with u = (cos(phi/2), sin(phi/2)) is alpha + beta cos(phi) + gamma sin(phi)
    alpha = (a[:, 0] * w[:, 0] + a[:, 1] * w[:, 1]) / 2
    beta = (a[:, 0] * w[:, 0] - a[:, 1] * w[:, 1]) / 2
    gamma = (a[:, 0] * w[:, 1] + a[:, 1] * w[:, 0]) / 2
    rho = np.hypot(beta, gamma)
    always = alpha >= rho  # positive (or zero) everywhere
    crosses = np.abs(alpha) < rho
    psi = np.arctan2(gamma, beta)
    half = np.arccos(np.clip(-alpha[crosses] / np.where(crosses, rho, 1)[crosses], -1, 1))
    enter = (psi[crosses] - half) % (2 * math.pi)  # g rises through 0
    leave = (psi[crosses] + half) % (2 * math.pi)  # g falls through 0
    coef = np.stack([alpha, beta, gamma], 1)
    c = coef[crosses]
    # active at phi = 0: g(0) = alpha + beta > 0 (at a zero, the side it moves to)
    g0 = c[:, 0] + c[:, 1]
    active0 = (g0 > 0) | ((g0 == 0) & (enter == 0))
    start = coef[always].sum(0) + c[active0].sum(0)
    events = np.concatenate([enter, leave])
    sign = np.concatenate([np.ones(enter.size), -np.ones(leave.size)])
    delta = np.concatenate([c, c]) * sign[:, None]
    order = np.argsort(events, kind="stable")
    events, delta = events[order], delta[order]
    # the arcs [0, e_1], [e_1, e_2], ..., [e_K, 2 pi] and the sums on them
    sums = start[None, :] + np.concatenate([np.zeros((1, 3)), np.cumsum(delta, 0)])
    bounds = np.concatenate([[0.0], events, [2 * math.pi]])
    return max(0.0, _sinusoid_max(sums[:, 0], sums[:, 1], sums[:, 2], bounds[:-1], bounds[1:]))


def certified_lipschitz(field: TwoLayerReLUField) -> LipschitzCertificate:
    """The certified constants of ``field`` in x (module docstring); no sampling.

    Parameters
    ----------
    field : flows.field.TwoLayerReLUField
        Any regime; plain or normalised features, with or without Fourier or class columns.

    Returns
    -------
    LipschitzCertificate

    Examples
    --------
    >>> from flows.field import FieldSpec
    >>> f = TwoLayerReLUField(FieldSpec(dim=2, width=64), seed=0)
    >>> c = certified_lipschitz(f)
    >>> c.certified, c.mu <= c.lipschitz <= c.product
    (True, True)
    """
    if not isinstance(field, TwoLayerReLUField):
        raise FlowsError(f"field={type(field).__name__} is not allowed; the certified "
                         "Lipschitz constant needs the built-in two-layer ReLU field")
    a = field.A.detach().double().cpu().numpy()
    w = field.W.detach().double().cpu().numpy()
    d = a.shape[1]
    s = float(field.scale)
    norm = bool(field.spec.normalize)
    b = w if norm else w[:, :d]
    product = s * float(np.linalg.norm(a, 2)) * float(np.linalg.norm(b, 2))
    lift = s * _lift_bound(a, b)
    lipschitz = min(product, lift)
    one_sided = None
    if not norm:
        one_sided = s * (one_sided_pattern_max_2d(a, b) if d == 2 else _psd_bound(a, b))
    mu = lipschitz if one_sided is None else min(lipschitz, one_sided)
    return LipschitzCertificate(lipschitz, mu, product, lift, one_sided, norm)
