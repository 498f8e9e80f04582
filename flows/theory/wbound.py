"""W2 bounds for generated samples: Groenwall along the straight path, ESTIMATED and CERTIFIED.

Theorem. Benton, Deligiannidis and Doucet (2024), "Error bounds for flow matching methods"
(Transactions on Machine Learning Research; arXiv:2305.16860): if the flow of the true field u*
carries p_0 to p_1 through the marginals p_t, the model field v(., t) is L_t-Lipschitz in x, and
eps^2 = int_0^1 E_{p_t} ||v - u*||^2 dt, then the flow of v from p_0 ends at q_1 with
W2(q_1, p_1) <= eps exp(int_0^1 L_t dt). Both bounds below are that argument, sharpened in two
places (both still rigorous): the one-sided constant mu_t <= L_t replaces L_t, and the
Cauchy-Schwarz step keeps the weight inside the integral, G <= exp(int_0^1 mu_t^+ dt). The
derivation is written out in ``docs/theory_bounds.md``.

- :func:`w2_bound`, ESTIMATED (``certified`` False): mu_t is the largest value sampled on 200
  pairs at the solver's grid points, and the excess risk is a Monte Carlo estimate.
- :func:`certified_w2_bound`, CERTIFIED GIVEN THE ESTIMATED EXCESS RISK (``certified`` True):
  mu is the constant read from the weights alone (:func:`certified_lipschitz`, below), valid for
  every x and t; the one input that is still an estimate is the excess risk, an expectation
  over the population, entered at the upper end of its 95% Monte Carlo interval.

Let p_t be the marginals of the linear path from p_0 = N(0, I) to the data p_1, transported
by the exact field u* (:mod:`flows.theory.excess`), and q_t the marginals of the model flow
dX/dt = v(X, t) from the same X_0 = Y_0 ~ p_0, with dY/dt = u*(Y, t). For one pair, with
e = X - Y and delta_s = v(Y_s, s) - u*(Y_s, s),

    d/dt ||e|| <= mu_t ||e|| + ||delta_t||,  mu_t = sup_{z in [X_t, Y_t]} lambda_max(sym J_v(z, t))

(the one-sided Lipschitz constant of v(., t) on the segment; mu_t <= ||J_v||), since
e . (v(X) - v(Y)) = int_0^1 e^T J_v(Y + r e) e dr. Groenwall and Cauchy-Schwarz on [0, 1] give

    ||e_1|| <= int_0^1 exp(int_s^1 mu) ||delta_s|| ds <= G (int_0^1 ||delta_s||^2 ds)^{1/2},
    G = (int_0^1 exp(2 int_s^1 mu_r dr) ds)^{1/2}            (G <= e^{L} if mu <= L),

and, averaging over pairs (Minkowski) with Y_s ~ p_s,

    W2(q_1, p_1) <= (E ||X_1 - Y_1||^2)^{1/2} <= G sqrt(E_s E_{p_s} ||v - u*||^2)
                  = G sqrt(excess risk).

The excess risk is the objective minus its minimum (:func:`flows.theory.excess.excess_risk`, the
upper end of its 95% interval is used). mu_t is taken as the largest value over the sampled
pairs and over points of each segment (5 per segment) at every step of the solver's grid: the
bound is rigorous for the sampled pairs up to that grid, an estimate for the distribution.
Reported beside the direct coupling bound (E ||X_1 - Y_1||^2)^{1/2} and the measured W2 to
held-out data with its floor.

Factor along the trajectories. The same Groenwall step per pair i, with that pair's own
mu^i_t (the largest value on its own segment), gives ||e^i_1||^2 <= G_i^2 I_i, I_i =
int_0^1 ||delta^i_s||^2 ds, and averaging, E ||e_1||^2 <= E[G_i^2 I_i] = G_traj^2 E[I_i] with

    G_traj^2 = E[G_i^2 I_i] / E[I_i],        E[I_i] = excess risk (Y_s ~ p_s),

a weighted mean of the pairs' factors instead of the largest constant of any pair at each step:
G_traj <= G always. I_i is integrated (trapezoid) on the solver's grid along the exact flow.

Each bound is informative only below W2(p_0, p_1), the distance of the model that does nothing
(its samples are the source's): ``ratio_source`` = bound / W2(source sample, held-out data),
``vacuous`` when >= 1.

Certified Lipschitz constants of a two-layer ReLU field in x, read from its weights alone
(:func:`certified_lipschitz`, used by :func:`certified_w2_bound`).

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
import torch

from _runkit import Result

from ..errors import FlowsError, check_positive_int
from ..field import TwoLayerReLUField
from ..sampling.ode import integrate
from .excess import Mixture, optimal_velocity

__all__ = ["CertifiedW2Bound", "LipschitzCertificate", "WassersteinBound", "certified_lipschitz",
           "certified_w2_bound", "w2_bound"]

SEGMENT_POINTS = 5


def jacobian(field, x: torch.Tensor, t: float) -> torch.Tensor:
    """J_v(x, t) = d v / d x, shape (B, d, d), by one backward pass per output coordinate."""
    x = x.detach().float().requires_grad_(True)
    with torch.enable_grad():
        v = field(x, torch.tensor(float(t)))
        rows = [torch.autograd.grad(v[:, k].sum(), x, retain_graph=k < v.shape[1] - 1)[0]
                for k in range(v.shape[1])]
    return torch.stack(rows, 1).double()


def one_sided_lipschitz(field, xs: torch.Tensor, ys: torch.Tensor, t: float,
                        points: int = SEGMENT_POINTS) -> tuple[float, float]:
    """(max lambda_max(sym J), max ||J||_2) over ``points`` points of each segment [x_i, y_i].

    xs, ys of shape (B, d).
    """
    mu, lip = pairwise_lipschitz(field, xs, ys, t, points)
    return float(mu.max()), float(lip.max())


def pairwise_lipschitz(field, xs: torch.Tensor, ys: torch.Tensor, t: float,
                       points: int = SEGMENT_POINTS) -> tuple[torch.Tensor, torch.Tensor]:
    """Per segment [x_i, y_i]: max lambda_max(sym J) and max ||J||_2 over ``points`` points.

    xs, ys of shape (B, d); returns two tensors of shape (B,).
    """
    r = torch.linspace(0, 1, points, dtype=xs.dtype)
    z = (xs[None] + r[:, None, None] * (ys - xs)[None]).reshape(-1, xs.shape[1])
    j = jacobian(field, z, t)
    sym = 0.5 * (j + j.transpose(1, 2))
    mu = torch.linalg.eigvalsh(sym)[:, -1].reshape(points, -1).amax(0)
    return mu, torch.linalg.matrix_norm(j, ord=2).reshape(points, -1).amax(0)


def groenwall_factor(mu: np.ndarray, dt: float) -> float:
    """G = (int_0^1 exp(2 int_s^1 mu) ds)^{1/2} for mu piecewise constant on steps of dt.

    Examples
    --------
    >>> round(groenwall_factor(np.zeros(10), 0.1), 6)  # mu = 0: G = 1
    1.0
    >>> round(groenwall_factor(np.ones(1000), 0.001), 3)  # mu = 1: sqrt((e^2 - 1) / 2)
    1.787
    """
    mu = np.asarray(mu, dtype=np.float64)
    tail = np.concatenate([np.cumsum(mu[::-1])[::-1] * dt, [0.0]])  # int_{t_j}^1 mu
    # exact integral of exp(2 (tail_{j+1} + mu_j (t_{j+1} - s))) over step j
    a = 2 * mu
    ex = np.exp(2 * tail[1:])
    with np.errstate(over="ignore"):
        step = np.where(np.abs(a) > 1e-12, ex * np.expm1(a * dt) / np.where(a == 0, 1, a),
                        ex * dt)
    return float(math.sqrt(step.sum()))


@dataclass(frozen=True)
class WassersteinBound(Result):
    """The Groenwall bound on W2(q_1, p_1) and what it is made of.

    Attributes
    ----------
    bound : float
        G sqrt(excess_upper).
    factor : float
        G.
    excess : float, excess_upper : float
        Excess risk and the upper end of its 95% interval.
    coupling : float
        (mean ||X_1 - Y_1||^2)^{1/2} over the sampled pairs (the middle of the chain).
    mu_max, lipschitz_max : float
        Largest one-sided and two-sided Lipschitz constants over the grid.
    mu : list of float
        mu_t per solver step.
    factor_trajectory : float
        G_traj = (E[G_i^2 I_i] / E[I_i])^{1/2}, the pairs' own factors weighted by their
        integrated squared error (<= ``factor``).
    bound_trajectory : float
        G_traj sqrt(excess_upper).
    certified : bool
        False: mu_t is sampled on pairs (ESTIMATED; :func:`certified_w2_bound` is the
        certified bound).
    """

    bound: float
    factor: float
    excess: float
    excess_upper: float
    coupling: float
    mu_max: float
    lipschitz_max: float
    mu: list
    factor_trajectory: float = float("nan")
    bound_trajectory: float = float("nan")
    certified: bool = False


def w2_bound(field, mix: Mixture, x0: torch.Tensor, excess, steps: int = 40,
             pairs: int = 200) -> WassersteinBound:
    """Groenwall bound W2(q_1, p_1) <= G sqrt(excess risk) (see the module docstring).

    Parameters
    ----------
    field : callable v(x, t)
        The model field (differentiable in x).
    mix : Mixture
        The data distribution (gives u*).
    x0 : torch.Tensor, shape (B, d)
        Source points; the first ``pairs`` are followed by both flows (midpoint, ``steps``).
    excess : flows.theory.excess.Estimate
        Excess risk of ``field``.
    steps : int
    pairs : int

    Returns
    -------
    WassersteinBound
    """
    steps = check_positive_int("steps", steps)
    x0 = x0[: check_positive_int("pairs", pairs)].float()

    def star(x, t):
        return optimal_velocity(mix, x, float(t)).float()

    xs = integrate(field, x0, "midpoint", steps, save_trajectory=True)
    ys = integrate(star, x0, "midpoint", steps, save_trajectory=True)
    times = xs.times.tolist()
    ends = [pairwise_lipschitz(field, xs.trajectory[i], ys.trajectory[i], times[i])
            for i in range(steps + 1)]
    # per pair and step, the larger of the constants at both ends of the step
    mu_pairs = torch.stack([torch.maximum(ends[j][0], ends[j + 1][0]) for j in range(steps)])
    lips = [float(torch.maximum(ends[j][1], ends[j + 1][1]).max()) for j in range(steps)]
    mus = mu_pairs.amax(1).tolist()
    g = groenwall_factor(np.asarray(mus), 1.0 / steps)
    upper = excess.value + excess.half_width
    coupling = float((xs.x - ys.x).double().square().sum(1).mean().sqrt())
    g_traj = trajectory_factor(field, star, ys, mu_pairs.double().numpy())
    root = math.sqrt(max(upper, 0.0))
    return WassersteinBound(g * root, g, excess.value, upper, coupling, max(mus), max(lips), mus,
                            g_traj, g_traj * root)


def trajectory_factor(field, star, ys, mu_pairs: np.ndarray) -> float:
    """G_traj = (sum_i G_i^2 I_i / sum_i I_i)^{1/2} (module docstring).

    ``ys`` is the exact flow's solution with its trajectory (steps + 1 grid points, B pairs),
    ``star`` the exact field u*(x, t) and ``mu_pairs`` (steps, B) each pair's mu per step.
    Where every error vanishes, the unweighted (sum_i G_i^2 / B)^{1/2}.
    """
    steps = mu_pairs.shape[0]
    err = []
    for i, t in enumerate(ys.times.tolist()):
        with torch.no_grad():
            tt = torch.tensor(float(t))
            err.append((field(ys.trajectory[i], tt).double()
                        - star(ys.trajectory[i], tt).double()).square().sum(1))
    e = torch.stack(err).numpy()  # (steps + 1, B)
    integral = 0.5 * (e[:-1] + e[1:]).sum(0) / steps  # I_i, trapezoid
    g2 = np.array([groenwall_factor(mu_pairs[:, i], 1.0 / steps) ** 2
                   for i in range(mu_pairs.shape[1])])
    total = integral.sum()  # all errors 0 (the exact field): the unweighted mean
    return float(math.sqrt((g2 * integral).sum() / total if total > 0 else g2.mean()))


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


@dataclass(frozen=True)
class CertifiedW2Bound(Result):
    """W2(q_1, p_1) <= G(mu) sqrt(excess_upper) with mu certified from the weights.

    Attributes
    ----------
    bound : float
        G(mu) sqrt(excess_upper) (``inf`` where G overflows a float; ``log10_bound`` is finite).
    log10_bound : float
        log10 of ``bound``.
    factor : float
        G(mu) = ((e^{2 mu} - 1) / (2 mu))^{1/2} (1 at mu = 0).
    mu : float
        The certified one-sided constant (:attr:`LipschitzCertificate.mu`).
    lipschitz : float
        The certified Lipschitz constant (>= mu).
    excess_upper : float
        Upper end of the 95% interval of the excess risk: the one estimated input.
    certified : bool
        True: nothing in the constant is sampled; the bound holds given ``excess_upper``.
    """

    bound: float
    log10_bound: float
    factor: float
    mu: float
    lipschitz: float
    excess_upper: float
    certified: bool = True


def log_groenwall_constant(mu: float) -> float:
    """log G for a constant mu >= 0: mu + (1/2) log((1 - e^{-2 mu}) / (2 mu)), 0 at mu = 0.

    Finite where G itself overflows a float.

    Examples
    --------
    >>> round(math.exp(log_groenwall_constant(1.0)), 3)  # sqrt((e^2 - 1) / 2)
    1.787
    >>> round(log_groenwall_constant(1000.0) / math.log(10), 1)  # G = 10^432.6
    432.6
    """
    if mu <= 1e-12:
        return 0.0
    return mu + 0.5 * math.log(-math.expm1(-2 * mu) / (2 * mu))


def certified_w2_bound(field, excess) -> CertifiedW2Bound:
    """Benton et al.'s W2 bound with a constant read from the weights (module docstring).

    W2(q_1, p_1) <= G(mu) (excess risk)^{1/2}, G(mu) = ((e^{2 mu} - 1) / (2 mu))^{1/2}, with mu
    the certified one-sided constant of :func:`certified_lipschitz`
    (valid for every x and t, so the Groenwall step holds for every pair, not only sampled
    ones). q_1 is the law of the exact flow of ``field`` from N(0, I), p_1 the data.

    Parameters
    ----------
    field : flows.field.TwoLayerReLUField
    excess : flows.theory.excess.Estimate
        Excess risk of ``field``; the upper end of its 95% interval is used.

    Returns
    -------
    CertifiedW2Bound
    """
    cert = certified_lipschitz(field)
    upper = max(excess.value + excess.half_width, 0.0)
    log_g = log_groenwall_constant(cert.mu)
    log_b = log_g + 0.5 * math.log(upper) if upper > 0 else -math.inf
    with np.errstate(over="ignore"):
        factor, bound = float(np.exp(log_g)), float(np.exp(log_b))
    return CertifiedW2Bound(bound, log_b / math.log(10), factor, cert.mu, cert.lipschitz, upper)
