"""A computed generalization bound for a theory-regime field, from the distance it moved.

Theorem: derived here (written out in ``docs/theory_bounds.md``), a uniform-convergence bound
over the weights within a per-neuron radius of their initialisation, assembled from standard
tools: symmetrisation, Maurer's vector-contraction inequality (A. Maurer, 2016, "A
vector-contraction inequality for Rademacher complexities", ALT), Talagrand's contraction
(M. Ledoux and M. Talagrand, 1991, "Probability in Banach spaces", Theorem 4.12), the
Efron-Stein inequality (S. Boucheron, G. Lugosi and P. Massart, 2013, "Concentration
inequalities", Theorem 3.1) with Chebyshev, and a union over 61 radii. Constants: delta =
0.05, the radius grid 2^{-10} .. 2^{20} in steps of sqrt(2).

ESTIMATED (``certified`` False): every step is a proof, but the bound needs two population
expectations (E[L_j^2] and the second moment of the jump below), which are Monte Carlo
estimates (each entered at the upper end of its 95% interval); the number holds with
probability 1 - delta only if those two estimates are not below the truth.

Setting (:mod:`flows.theory.ntk`): v_W(z) = m^{-1/2} A^T relu(W z), A in {-1, +1}^{m x d}
fixed, ||z|| = 1, W_0 drawn before the data (seed "init"). The training objective averages over
n i.i.d. groups s_j = (x1_j, k draws (t, x0)): G(v, s) = (1/k) sum_q g_v(s_q) with the excess loss

    g_v = ||v(z) - u||^2 - ||u*(z) - u||^2,        E g_v = E ||v - u*||^2 (the excess risk).

The measured excess gap (:func:`flows.theory.sweeps.risk_point`) is E G(v_T) - (1/n) sum_j
G(v_T, s_j) (the test side read on fresh draws). It is at most Phi(S) = sup_{v in F} (E G -
(1/n) sum_j G(v, s_j)) over any class F that holds v_T.

Class. F_b = {W : ||w_r - w0_r|| <= b for every neuron r}, radius beta = sqrt(m) b. On F_b,
|v_l(z) - v0_l(z)| <= m^{-1/2} sum_r ||w_r - w0_r|| <= beta (relu is 1-Lipschitz, ||z|| = 1),
so ||v(z) - v0(z)|| <= sqrt(d) beta everywhere.

Expected gap (symmetrization, Maurer's vector contraction, Talagrand's contraction).
E Phi <= 2 E (1/n) E_sigma sup_F sum_j sigma_j G(v, s_j). G(., s_j), as a function of the k d
outputs, is L_j-Lipschitz with L_j = (1/k) (sum_q L_jq^2)^{1/2}, L_jq = 2 (||v0(z_jq) - u_jq|| +
sqrt(d) beta) (the gradient 2 (v - u) on F_b). Maurer's inequality gives sqrt(2) E sup sum_{j,q,l}
sigma_jql L_j v_l(z_jq); the sup splits over outputs l and neurons r (a product of balls), and
per neuron Talagrand's contraction (relu(c s) = c relu(s), c >= 0) leaves
b E ||sum sigma L_j z_jq|| <= b (k sum_j L_j^2)^{1/2}. With Jensen,

    E Phi <= R = 2 sqrt(2) d beta (k E[L_j^2] / n)^{1/2}.

Deviation (Efron-Stein, no boundedness needed). Replacing group j by an independent copy s'
moves Phi by at most (1/n) sup_F |G(v, s_j) - G(v, s')| <= (1/n) (|G0(s_j) - G0(s')| + D(s_j)
+ D(s')), G0 = G(v0, .), D(s) = (1/k) sum_q sqrt(d) beta (2 ||v0(z_q) - u_q|| + sqrt(d) beta)
(from ||v - u||^2 - ||v0 - u||^2 = ||v - v0||^2 + 2 (v - v0) . (v0 - u)). Hence
Var Phi <= E[(|G0(s) - G0(s')| + D(s) + D(s'))^2] / (2 n), and Chebyshev: Phi <= R +
(Var Phi / delta')^{1/2} with probability >= 1 - delta'. The source is Gaussian and unbounded:
no truncation is made; the second moments (the tail term) are expectations over the population,
computed by Monte Carlo on ``groups`` fresh pairs of groups with the exact u*; each of the two
expectations enters at the upper end of its 95% Monte Carlo interval.

Radius read after training. beta is rounded up to the grid :data:`RADIUS_GRID` (steps of
sqrt(2)); a union over the grid's radii gives delta' = delta / len(RADIUS_GRID). So with
probability >= 1 - delta over the training draws, for the run's field,

    excess gap <= R(beta_grid) + (len(grid) E[(...)^2] / (2 n delta))^{1/2}.

It holds whatever the width or the training; it is informative only below L* (the irreducible
part of the objective): ``ratio`` = bound / L*, ``vacuous`` when >= 1. The radius it needs is the
worst neuron's move times sqrt(m); in the theory runs (lr 2, 500 steps) that is tens, so the
bound is vacuous by orders of magnitude.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import Result

from ..data import Dataset, Mixture
from ..errors import FlowsError, as_generator, check_positive, check_positive_int
from .excess import optimal_velocity, path_draws

__all__ = ["GeneralizationBound", "generalization_bound"]

RADIUS_GRID = 2.0 ** (np.arange(-20, 41) / 2.0)
"""Radii beta the union bound covers: 2^-10 ... 2^20 in steps of sqrt(2) (61 values)."""

DELTA = 0.05
"""Failure probability of the bound over the training draws."""


@dataclass(frozen=True)
class GeneralizationBound(Result):
    """The computed bound on the excess generalization gap of one theory-regime field.

    Attributes
    ----------
    bound : float
        ``rademacher + deviation``.
    rademacher : float
        R = 2 sqrt(2) d beta (k E[L_j^2] / n)^{1/2} at the grid radius.
    deviation : float
        (len(grid) Var-bound / delta)^{1/2}: the Efron-Stein / Chebyshev term, tails included.
    radius, radius_grid : float
        beta = sqrt(m) max_r ||w_r - w0_r|| and the grid radius it is rounded up to.
    distance : float
        ||W - W_0||_F (for comparison with beta).
    delta : float
        Failure probability.
    population_minimum : float
        L*, the number that makes the bound informative.
    ratio : float
        bound / L*.
    vacuous : bool
        ratio >= 1.
    certified : bool
        False: two population expectations in it are Monte Carlo estimates (ESTIMATED).
    """

    bound: float
    rademacher: float
    deviation: float
    radius: float
    radius_grid: float
    distance: float
    delta: float
    population_minimum: float
    ratio: float
    vacuous: bool
    certified: bool = False


def grid_radius(beta: float) -> float:
    """The smallest radius of :data:`RADIUS_GRID` that is >= beta.

    Examples
    --------
    >>> grid_radius(3.0), grid_radius(4.0)
    (4.0, 4.0)
    """
    above = RADIUS_GRID[RADIUS_GRID >= beta]
    if not np.isfinite(beta) or beta < 0 or above.size == 0:
        raise FlowsError(f"radius {beta!r} is outside the bound's grid [0, "
                         f"{RADIUS_GRID[-1]:g}]")
    return float(above[0])


def _initial_outputs(field, w0: torch.Tensor, x: torch.Tensor, t: torch.Tensor,
                     chunk: int = 8192) -> torch.Tensor:
    """v0(x, t) of ``field`` with W replaced by ``w0``; x (B, d), t (B, 1); float64 (B, d)."""
    start = copy.deepcopy(field)
    with torch.no_grad():
        start.W.copy_(w0)
        return torch.cat([start(x[i:i + chunk].float(), t[i:i + chunk].float()).double()
                          for i in range(0, x.shape[0], chunk)])


def _upper_mean(v: torch.Tensor) -> float:
    """Upper end of the 95% interval of the mean of the Monte Carlo values v (B,)."""
    return float(v.mean() + 1.96 * v.std() / math.sqrt(v.numel()))


def generalization_bound(field, initial_w: torch.Tensor, ds: Dataset, mix: Mixture, n: int,
                         k: int, lstar: float, delta: float = DELTA, groups: int = 1000,
                         seed: int = 0) -> GeneralizationBound:
    """The bound of the module docstring for a trained theory-regime field.

    Parameters
    ----------
    field : flows.field.TwoLayerReLUField
        Trained, regime "theory" (A in {-1, +1}, z normalised).
    initial_w : torch.Tensor, shape (m, p)
        W at initialisation.
    ds : flows.data.Dataset
        The target (N(0, I) source, linear path).
    mix : flows.data.Mixture
        Its mixture form (gives u*).
    n, k : int
        Training points and draws per point.
    lstar : float
        The population minimum L*.
    delta : float
        Failure probability.
    groups : int
        Monte Carlo pairs of population groups behind E[L_j^2] and the second moment.
    seed : int

    Returns
    -------
    GeneralizationBound
    """
    n, k = check_positive_int("n", n), check_positive_int("k", k)
    delta, lstar = check_positive("delta", delta), check_positive("lstar", lstar)
    if getattr(field, "spec", None) is None or field.spec.regime != "theory" \
            or not field.spec.normalize or not bool((field.A.abs() == 1).all()):
        raise FlowsError("the generalization bound needs a theory-regime field (A = +-1 fixed, "
                         "normalised inputs)")
    dw = field.W.detach().double() - initial_w.double()
    m, d = field.A.shape
    beta = math.sqrt(m) * float(dw.norm(dim=1).max())
    bg = grid_radius(beta)
    g = as_generator(seed)
    x_t, t, u = path_draws(ds.sample(2 * groups, g).double().repeat_interleave(k, 0), g)
    v0 = _initial_outputs(field, initial_w.to(field.W.dtype), x_t, t)
    r0 = (v0 - u).norm(dim=1)
    lip2 = (2 * (r0 + math.sqrt(d) * bg)).square().reshape(2 * groups, k).sum(1) / k**2
    rademacher = 2 * math.sqrt(2) * d * bg * math.sqrt(k * _upper_mean(lip2) / n)
    g0 = ((v0 - u).square().sum(1)
          - (optimal_velocity(mix, x_t, t) - u).square().sum(1)).reshape(2 * groups, k).mean(1)
    dd = (math.sqrt(d) * bg * (2 * r0 + math.sqrt(d) * bg)).reshape(2 * groups, k).mean(1)
    jump = (g0[:groups] - g0[groups:]).abs() + dd[:groups] + dd[groups:]
    deviation = math.sqrt(RADIUS_GRID.size * _upper_mean(jump.square()) / (2 * n * delta))
    bound = rademacher + deviation
    return GeneralizationBound(bound, rademacher, deviation, beta, bg, float(dw.norm()), delta,
                               lstar, bound / lstar, bool(bound >= lstar))
