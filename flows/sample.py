"""Integrate a velocity field with torchdiffeq: samples, trajectories and log-likelihoods.

dx/dt = v(x, t) from t = 0 (source) to t = 1 (target). Fixed-step solvers "euler", "midpoint"
(default: the field is piecewise linear, so second order pays) and "rk4" take ``steps`` equal
steps; "dopri5" is adaptive (``rtol``, ``atol``). Every evaluation of v is counted (NFE).

Log-likelihood by the instantaneous change of variables,

    log p_1(x(1)) = log p_0(x(0)) - int_0^1 div v(x(t), t) dt,

with the exact divergence (d autograd passes) for small d or Hutchinson's estimator
div v ~ eps^T (dv/dx) eps with a fixed Rademacher probe eps drawn from a seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torchdiffeq import odeint

from .errors import FlowsError, as_generator, check_choice, check_positive_int

Field = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
SOLVERS = ("euler", "midpoint", "rk4", "dopri5")
FIXED_STEP = ("euler", "midpoint", "rk4")


@dataclass(frozen=True)
class SampleResult:
    """Result of :func:`integrate`.

    Attributes
    ----------
    x : torch.Tensor, shape (N, d)
        States at t = 1.
    nfe : int
        Number of velocity evaluations.
    times : torch.Tensor, shape (T,)
        Times of the saved trajectory.
    trajectory : torch.Tensor or None, shape (T, N, d)
        States at ``times`` (when requested).
    """

    x: torch.Tensor
    nfe: int
    times: torch.Tensor
    trajectory: torch.Tensor | None = None


class _Counted(nn.Module):
    """ODE right-hand side f(t, x) = v(x, t) that counts calls and stops on non-finite values."""

    def __init__(self, field: Field) -> None:
        super().__init__()
        self.field = field
        self.nfe = 0

    def forward(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        self.nfe += 1
        v = self.field(x, t)
        if not torch.isfinite(v).all():
            raise FlowsError(f"the velocity became non-finite at t={float(t):.6g} "
                             f"(evaluation {self.nfe}); the state or the field diverged")
        return v


def _options(solver: str, steps: int) -> dict:
    if solver in FIXED_STEP:
        return {"step_size": 1.0 / check_positive_int("steps", steps)}
    return {}


def integrate(field: Field, x0: torch.Tensor, solver: str = "midpoint", steps: int = 20,
              rtol: float = 1e-5, atol: float = 1e-5, save_trajectory: bool = False,
              t0: float = 0.0, t1: float = 1.0) -> SampleResult:
    """Solve dx/dt = v(x, t) from t0 to t1.

    Parameters
    ----------
    field : callable
        v(x, t): x of shape (N, d), t a scalar tensor, returns (N, d).
    x0 : torch.Tensor, shape (N, d)
        Initial states (source samples).
    solver : str
        One of "euler", "midpoint", "rk4", "dopri5".
    steps : int
        Number of equal steps (fixed-step solvers; ignored by dopri5).
    rtol, atol : float
        Tolerances of dopri5.
    save_trajectory : bool
        Also return the states at every step (fixed-step) or at 21 times (dopri5).

    Returns
    -------
    SampleResult

    Examples
    --------
    >>> r = integrate(lambda x, t: -x, torch.ones(3, 1), solver="rk4", steps=10)
    >>> round(float(r.x[0, 0]), 4), r.nfe
    (0.3679, 40)
    """
    check_choice("solver", solver, SOLVERS)
    if x0.ndim != 2 or x0.shape[0] == 0:
        raise FlowsError(f"x0 has shape {tuple(x0.shape)}; a non-empty (N, d) tensor is required")
    f = _Counted(field)
    n_t = (check_positive_int("steps", steps) + 1) if solver in FIXED_STEP else 21
    times = torch.linspace(t0, t1, n_t if save_trajectory else 2, dtype=x0.dtype)
    with torch.no_grad():
        traj = odeint(f, x0, times, method=solver, rtol=rtol, atol=atol,
                      options=_options(solver, steps))
    return SampleResult(traj[-1], f.nfe, times, traj if save_trajectory else None)


def divergence(field: Field, x: torch.Tensor, t: torch.Tensor, probe: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """Velocity and divergence div v = sum_k d v_k / d x_k at (x, t).

    Exact (d vector-Jacobian products) when ``probe`` is None, else Hutchinson's
    eps^T (dv/dx) eps with ``probe`` eps of shape (N, d). Returns (v (N, d), div (N,)).
    """
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        v = field(x, t)
        if probe is not None:
            (jp,) = torch.autograd.grad(v, x, probe, create_graph=False)
            return v.detach(), (jp * probe).sum(1)
        div = torch.zeros(x.shape[0], dtype=x.dtype)
        for k in range(x.shape[1]):
            (gk,) = torch.autograd.grad(v[:, k].sum(), x, retain_graph=k < x.shape[1] - 1)
            div += gk[:, k]
    return v.detach(), div


@dataclass(frozen=True)
class LikelihoodResult:
    """Result of :func:`log_likelihood`.

    Attributes
    ----------
    logp : torch.Tensor, shape (N,)
        log p_1(x) under the flow from N(0, I).
    x0 : torch.Tensor, shape (N, d)
        The points mapped back to t = 0.
    nfe : int
        Number of velocity evaluations.
    method : str
        "exact" or "hutchinson".
    """

    logp: torch.Tensor
    x0: torch.Tensor
    nfe: int
    method: str


def log_likelihood(field: Field, x: torch.Tensor, solver: str = "midpoint", steps: int = 50,
                   method: str = "auto", seed: int | torch.Generator = 0,
                   exact_max_dim: int = 8) -> LikelihoodResult:
    """Log-density of points under the flow from a N(0, I) source.

    log p_1(x) = log N(x(0); 0, I) - int_0^1 div v(x(t), t) dt, integrating x back from t = 1.

    Parameters
    ----------
    field : callable
        v(x, t) (differentiable in x).
    x : torch.Tensor, shape (N, d)
    solver, steps : see :func:`integrate`.
    method : str
        "exact", "hutchinson" or "auto" (exact when d <= ``exact_max_dim``).
    seed : int or torch.Generator
        Randomness of the Hutchinson probe (one Rademacher probe per point, fixed in t).

    Returns
    -------
    LikelihoodResult
    """
    check_choice("method", method, ("auto", "exact", "hutchinson"))
    check_choice("solver", solver, SOLVERS)
    n, d = x.shape
    use = method if method != "auto" else ("exact" if d <= exact_max_dim else "hutchinson")
    probe = None
    if use == "hutchinson":
        g = as_generator(seed)
        probe = torch.randint(0, 2, (n, d), generator=g).to(x.dtype) * 2 - 1
    counter = {"nfe": 0}

    def rhs(t: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        counter["nfe"] += 1
        v, div = divergence(field, state[:, :d], t, probe)
        out = torch.cat([v, div[:, None]], 1)
        if not torch.isfinite(out).all():
            raise FlowsError(f"the velocity or divergence became non-finite at t={float(t):.6g}")
        return out

    state = torch.cat([x, torch.zeros(n, 1, dtype=x.dtype)], 1)
    times = torch.tensor([1.0, 0.0], dtype=x.dtype)
    end = odeint(rhs, state, times, method=solver, options=_options(solver, steps))[-1]
    z, acc = end[:, :d].detach(), end[:, d].detach()
    logp0 = -0.5 * z.square().sum(1) - 0.5 * d * math.log(2 * math.pi)
    return LikelihoodResult(logp0 + acc, z, counter["nfe"], use)
