"""Entropic optimal transport computed stably: log-domain Sinkhorn with epsilon scaling.

For point clouds x (n, d), y (n', d) with uniform weights a, b and the squared Euclidean cost
C_ij = ||x_i - y_j||^2, the entropic transport cost is

    OT_eps(x, y) = min_{P in U(a, b)} <P, C> + eps KL(P | a b^T) = <a, f> + <b, g>,

f, g the optimal dual potentials, found by Sinkhorn's iterations written in the log domain
(f_i = -eps log sum_j b_j exp((g_j - C_ij) / eps) and symmetrically for g), so no kernel
exp(-C / eps) is ever formed and nothing underflows however far apart the clouds are. The
regularisation starts at the largest cost and is halved down to its target with one sweep per
stage (epsilon scaling, each stage warm-started from the last, as in geomloss), and the final
stage over-relaxes the alternating updates (omega = 1.6, reduced whenever the error rises),
which keeps the number of iterations small: 300 noise points against the 64-D digits take 34
iterations in all instead of 153 (98 with plain updates). A solve that does not reach the marginal
tolerance raises (``strict``, the default), or with ``strict=False`` is returned flagged
``converged=False`` with its marginal error; a failure is never passed off as a converged
number.

The debiased Sinkhorn divergence S = OT_eps(x, y) - (OT_eps(x, x) + OT_eps(y, y)) / 2 is >= 0,
zero for equal clouds and tends to W2^2 as eps -> 0 (Feydy et al., 2019).

The target ``reg`` is relative: eps = reg * s with s the mean squared distance between two
points of the reference y (a property of the reference alone, so a value and its noise floor,
both measured against the same reference, use the same eps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from _runkit.results import Result

from ..errors import FlowsError, RunFailed, check_finite, check_positive, check_positive_int

__all__ = ["EntropicOT", "SinkhornDivergence", "entropic_ot", "sinkhorn_divergence",
           "sinkhorn_result"]

MAX_COST_BYTES = 1 << 30
"""Largest cost matrix (in bytes, float64) a solve may allocate."""

RELAXATION = 1.6
"""Over-relaxation of the final stage's alternating updates (1: plain Sinkhorn)."""


@dataclass(frozen=True)
class EntropicOT(Result):
    """Result of :func:`entropic_ot`.

    Attributes
    ----------
    value : float
        OT_eps = <a, f> + <b, g> (squared-distance units).
    eps : float
        Absolute regularisation used.
    iterations : int
        Sinkhorn iterations over all stages.
    marginal_error : float
        ||P 1 - a||_1 of the potentials returned (the columns are exact after each g-update).
    converged : bool
        marginal_error < tol.
    """

    value: float
    eps: float
    iterations: int
    marginal_error: float
    converged: bool = True


def _cloud(x: torch.Tensor | np.ndarray, name: str) -> torch.Tensor:
    t = torch.as_tensor(x)
    if t.ndim != 2 or t.shape[0] == 0:
        raise FlowsError(f"{name} has shape {tuple(t.shape)}; a non-empty (n, d) array is required")
    return check_finite(name, t.detach().to(torch.float64))


def _cost(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    nbytes = 8 * x.shape[0] * y.shape[0]
    if nbytes > MAX_COST_BYTES:
        raise FlowsError(f"an entropic OT between {x.shape[0]} and {y.shape[0]} points needs a "
                         f"{nbytes / 2**30:.1f} GiB cost matrix; at most "
                         f"{MAX_COST_BYTES / 2**30:.0f} GiB is allowed: subsample the clouds")
    return torch.cdist(x, y).square_()


def reference_scale(y: torch.Tensor | np.ndarray) -> float:
    """Mean squared distance between two independent points of y: 2 sum_k Var(y_k).

    Computed as 2 n / (n - 1) times the summed per-coordinate variance (n = 1 gives 0).
    y of shape (n, d).

    Examples
    --------
    >>> round(reference_scale(torch.tensor([[0.0, 0.0], [2.0, 0.0]])), 6)
    4.0
    """
    y = _cloud(y, "reference")
    n = y.shape[0]
    if n < 2:
        return 0.0
    return float(2.0 * y.var(dim=0, unbiased=True).sum())


def entropic_ot(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray, eps: float,
                tol: float = 1e-6, max_iter: int = 5000, strict: bool = True) -> EntropicOT:
    """Entropic OT cost OT_eps(x, y) with uniform weights, by log-domain Sinkhorn.

    Parameters
    ----------
    x : array, shape (n, d)
    y : array, shape (n', d)
        Passing the same object as x solves the symmetric problem with the averaged update
        f <- (f + T(f)) / 2, which converges where the alternating one oscillates.
    eps : float
        Absolute regularisation (squared-distance units), > 0.
    tol : float
        Required L1 error of the row marginals at the end.
    max_iter : int
        Iterations allowed at the final eps (the scaling stages come on top).
    strict : bool
        True: a solve that does not converge raises. False: it is returned with
        ``converged=False`` and its marginal error (NaN potentials still raise).

    Returns
    -------
    EntropicOT

    Raises
    ------
    RunFailed (a RuntimeError; exit code 1 on the command line)
        If the marginal error is still above ``tol`` after ``max_iter`` iterations (``strict``)
        or the potentials are not finite.

    Examples
    --------
    >>> r = entropic_ot(torch.zeros(3, 2), torch.ones(4, 2), eps=0.01)
    >>> round(r.value, 6), r.converged
    (2.0, True)
    """
    symmetric = x is y
    c, eps, max_iter = _checked_cost(x, y, eps, tol, max_iter)
    n, k = c.shape
    log_w = (-math.log(n), -math.log(k))
    f = torch.zeros(n, dtype=torch.float64)
    g = torch.zeros(k, dtype=torch.float64)
    stage, iters = max(float(c.max()), eps), 0
    while stage > eps:  # epsilon scaling: one sweep per halving, warm-started
        f, g, _, _ = _sinkhorn_stage(c, f, g, stage, log_w, symmetric, 1, None)
        iters += 1
        stage = stage / 2
    f, g, err, done = _sinkhorn_stage(c, f, g, eps, log_w, symmetric, max_iter, tol, RELAXATION)
    iters += done
    if not (torch.isfinite(f).all() and torch.isfinite(g).all()):
        raise RunFailed(f"Sinkhorn produced non-finite potentials at eps={eps:.3g}; raise reg")
    converged = err < tol
    if strict and not converged:
        raise RunFailed(f"Sinkhorn did not converge: row-marginal error {err:.3g} > tol={tol} "
                        f"after {iters} iterations at eps={eps:.3g}; raise max_iter="
                        f"{max_iter} or reg")
    return EntropicOT(float(f.mean() + g.mean()), eps, iters, err, bool(converged))


def _checked_cost(x, y, eps: float, tol: float, max_iter: int
                  ) -> tuple[torch.Tensor, float, int]:
    """The cost matrix ``(n, k)`` of two checked point clouds of one dimension, and the checked
    ``eps`` and ``max_iter`` (:class:`FlowsError` otherwise)."""
    x, y = _cloud(x, "x"), _cloud(y, "y")
    if x.shape[1] != y.shape[1]:
        raise FlowsError(f"x has dimension {x.shape[1]} but y has {y.shape[1]}; they must agree")
    eps = check_positive("eps", eps)
    check_positive("tol", tol)
    max_iter = check_positive_int("max_iter", max_iter)
    return _cost(x, y), eps, max_iter


def _sinkhorn_stage(c: torch.Tensor, f: torch.Tensor, g: torch.Tensor, cur: float,
                    log_weights: tuple[float, float], symmetric: bool, sweeps: int,
                    tol: float | None, omega: float = 1.0):
    """At most ``sweeps`` log-domain Sinkhorn updates of the potentials ``f`` ``(n,)`` and
    ``g`` ``(k,)`` at regularisation ``cur`` for the cost ``c`` ``(n, k)``, stopping once the
    row-marginal error is below ``tol`` (None: never). Returns ``(f, g, error, updates)``.

    ``omega`` > 1 over-relaxes the alternating updates, f <- (1 - omega) f + omega T(g) and
    likewise g (Thibault et al., 2021, "Overrelaxed Sinkhorn-Knopp algorithm for regularized
    optimal transport"), halving omega - 1 whenever the error rises. A relaxed pair that meets
    ``tol`` gets the exact update of g (columns exact) and is checked once more, so a pair
    returned as converged has exact columns and rows within ``tol``."""
    log_a, log_b = log_weights
    n = c.shape[0]
    kc = c / -cur  # -C / eps, and its transpose for the column updates
    kc_t = kc if symmetric else kc.T.contiguous()
    done, err, last_err, exact = 0, math.inf, math.inf, False
    checked = (f, g)
    for _ in range(sweeps):
        # f_new from the current g; the rows of P(f, g) sum to a_i exp((f_i - f_new_i) / eps),
        # so the marginal error of the current iterate comes for free
        f_new = -cur * torch.logsumexp(kc + (g / cur + log_b)[None, :], dim=1)
        err = float(((f - f_new) / cur).exp_().sub_(1.0).abs_().sum()) / n
        done += 1
        if symmetric:  # averaged update: the alternating one oscillates when x = y
            f = g = 0.5 * (f + f_new)
            if tol is not None and err < tol:
                break
            continue
        checked = (f, g)  # the pair whose row error err is
        if tol is not None and err < tol:
            if exact:
                break
            # a relaxed pair met tol: make g the exact update of f; the next sweep re-checks
            g, exact = -cur * torch.logsumexp(kc_t + (f / cur + log_a)[None, :], dim=1), True
            continue
        if err > last_err:
            omega = 1.0 + 0.5 * (omega - 1.0)
        last_err, exact = err, omega == 1.0
        f = f_new if exact else (1.0 - omega) * f + omega * f_new
        g_new = -cur * torch.logsumexp(kc_t + (f / cur + log_a)[None, :], dim=1)
        g = g_new if exact else (1.0 - omega) * g + omega * g_new
    if not symmetric and tol is not None:
        f, g = checked  # the pair whose error was measured
    return f, g, err, done


@dataclass(frozen=True)
class SinkhornDivergence(Result):
    """Result of :func:`sinkhorn_result`: the debiased divergence and how its solves ended.

    Attributes
    ----------
    value : float
        S = OT_eps(x, y) - (OT_eps(x, x) + OT_eps(y, y)) / 2 (squared-distance units).
    reg, eps : float
        Relative and absolute regularisation.
    iterations : int
        Sinkhorn iterations of the three solves together.
    marginal_error : float
        The largest row-marginal error of the three solves.
    converged : bool
        All three solves reached ``tol``; False: ``value`` is the number the potentials give,
        not a converged one.
    """

    value: float
    reg: float
    eps: float
    iterations: int
    marginal_error: float
    converged: bool


def sinkhorn_result(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
                    reg: float = 0.05, tol: float = 1e-6, max_iter: int = 5000,
                    strict: bool = False) -> SinkhornDivergence:
    """:func:`sinkhorn_divergence` with its regularisation, iterations and convergence.

    Shapes (n, d) and (n', d); ``strict=False`` (the default here) reports a solve that did not
    reach ``tol`` as ``converged=False`` instead of raising.

    Examples
    --------
    >>> r = sinkhorn_result(torch.zeros(3, 2), torch.ones(4, 2), reg=0.05)
    >>> round(r.value, 6), r.converged
    (2.0, True)
    """
    reg = check_positive("reg", reg)
    scale = reference_scale(y)
    eps = reg * (scale if scale > 0 else 1.0)
    parts = [entropic_ot(a, b, eps, tol, max_iter, strict) for a, b in ((x, y), (x, x), (y, y))]
    return SinkhornDivergence(parts[0].value - 0.5 * (parts[1].value + parts[2].value), reg, eps,
                              sum(p.iterations for p in parts),
                              max(p.marginal_error for p in parts),
                              all(p.converged for p in parts))


def sinkhorn_divergence(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
                        reg: float = 0.05, tol: float = 1e-6, max_iter: int = 5000) -> float:
    """Debiased Sinkhorn divergence for the squared Euclidean cost, computed stably.

    S = OT_eps(x, y) - (OT_eps(x, x) + OT_eps(y, y)) / 2 with eps = reg * s, s the mean squared
    distance between two points of the reference y (:func:`reference_scale`); s = 1 if y has a
    single point or no spread. S is in squared-distance units (S -> W2^2 as reg -> 0).

    Parameters
    ----------
    x : array, shape (n, d)
        Samples.
    y : array, shape (n', d)
        Reference (sets the scale of eps).
    reg : float
        Relative regularisation, > 0.
    tol, max_iter : see :func:`entropic_ot`; any non-converged solve raises RunFailed.

    Returns
    -------
    float

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> a = torch.randn(200, 2, generator=g)
    >>> s = sinkhorn_divergence(a + torch.tensor([10.0, 0.0]), torch.randn(200, 2, generator=g))
    >>> 90 < s < 110
    True
    """
    return sinkhorn_result(x, y, reg, tol, max_iter, strict=True).value
