"""Integrate a velocity field with torchdiffeq: samples, trajectories and log-likelihoods.

dx/dt = v(x, t) from t = 0 (source) to t = 1 (target). The ODE method is named as in
torchdiffeq (``method=``): fixed-step "euler", "midpoint" (default for sampling: the field is
piecewise linear, so second order pays) and "rk4" take ``steps`` equal steps; "dopri5" is
adaptive (``rtol``, ``atol``) within a budget of ``max_nfe`` evaluations. Every evaluation of v
is counted (NFE). Tensors stay on the device of the input points.

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

from _runkit import Diverged, Registry, RunFailed
from _runkit.results import Result
from _runkit.runtime import with_threads

from ..errors import FlowsError, as_generator, check_choice, check_positive, check_positive_int

Field = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
# ODE methods by torchdiffeq's names: True for the fixed-step ones (``steps`` equal steps)
METHODS = Registry("method")
for _name, _fixed in (("euler", True), ("midpoint", True), ("rk4", True), ("dopri5", False)):
    METHODS.add(_name, _fixed)
FIXED_STEP = tuple(k for k in METHODS if METHODS.get(k))


class BudgetExceeded(RunFailed):
    """An adaptive solve needed more velocity evaluations than its ``max_nfe`` budget."""


@dataclass(frozen=True)
class SampleResult(Result):
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


def _check_budget(nfe: int, max_nfe: int | None, rtol: float, atol: float) -> None:
    if max_nfe is not None and nfe > max_nfe:
        raise BudgetExceeded(f"the adaptive solve needed more than max_nfe={max_nfe} velocity "
                             f"evaluations at rtol={rtol:g}, atol={atol:g}; raise max_nfe or the "
                             "tolerances, or use a fixed-step method")


class SamplingDiverged(Diverged):
    """The velocity (or the state) became non-finite while integrating (exit code 1).

    ``str(err)`` names the time, the step and the parameter to change with the library's
    names (``steps``, ``method``, ``rtol``); :meth:`message` names them as a command line does.

    Attributes
    ----------
    step : int
        The fixed step (1..steps) of the evaluation, or the evaluation count for dopri5.
    parameter : str
        The parameter to change, as named: ``steps`` (``rtol`` for dopri5), or ``field`` when
        the velocity is non-finite already at the starting points.
    t : float
        Time at which a non-finite value appeared.
    nfe : int
        The velocity evaluation that gave it.
    method : str
    steps : int or None
        Steps of a fixed-step method (None for dopri5).
    rtol : float
    what : str
        What became non-finite (``"velocity"``, ``"velocity or divergence"``).
    """

    def __init__(self, t: float, nfe: int, method: str, steps: int | None, rtol: float,
                 what: str = "velocity", span: tuple[float, float] = (0.0, 1.0),
                 names: dict[str, str | None] | None = None):
        self.t, self.nfe, self.method, self.steps, self.rtol, self.what = \
            t, nfe, method, steps, rtol, what
        self.span = span
        self.names = {"steps": "steps", "method": "method", "rtol": "rtol", "field": "field",
                      **(names or {})}
        if nfe == 1:  # non-finite at the initial states: no step size is to blame
            parameter = self.names["field"]
        elif steps is not None:
            parameter = self.names["steps"]
        else:
            parameter = self.names["rtol"] or self.names["method"]
        super().__init__(self.message(**self.names), step=self.step_index or nfe,
                         parameter=parameter)

    @property
    def step_index(self) -> int | None:
        """The fixed step (1..steps) whose evaluation gave the value (None for dopri5)."""
        if self.steps is None:
            return None
        t0, t1 = self.span
        done = (self.t - t0) / (t1 - t0) if t1 != t0 else 0.0
        return max(1, min(self.steps, int(done * self.steps + 1e-9) + 1))

    def renamed(self, **names: str | None) -> SamplingDiverged:
        """The same failure naming the parameters as given (``steps="sample_steps"``;
        ``rtol=None`` where there is no tolerance to set): a run function whose arguments are
        called differently from :func:`integrate`'s re-raises it so.

        >>> try:
        ...     integrate(lambda x, t: x / (0.5 - t), torch.ones(2, 1), "euler", 2)
        ... except SamplingDiverged as err:
        ...     print(err.renamed(steps="sample_steps").parameter)
        sample_steps
        """
        return SamplingDiverged(self.t, self.nfe, self.method, self.steps, self.rtol, self.what,
                                self.span, {**self.names, **names})

    def message(self, steps: str = "steps", method: str = "method",
                rtol: str | None = "rtol", field: str = "field") -> str:
        """The one-line message, naming the parameters ``steps``, ``method``, ``rtol`` and
        ``field`` as given (e.g. ``sample_steps`` and ``model`` where a run function calls them
        so; ``rtol=None``: there is none)."""
        if self.nfe == 1:
            return (f"the {self.what} is non-finite at the starting points (t={self.t:.6g}, "
                    f"first evaluation): the {field} itself is broken (from a diverged "
                    f"training?); check or retrain the {field}")
        where = f"the {self.what} became non-finite at t={self.t:.6g}"
        if self.steps is not None:
            return (f"{where} (step {self.step_index} of {self.steps}, evaluation "
                    f"{self.nfe}): the state diverged; raise {steps} (now {self.steps}) or "
                    f"choose a higher-order {method} than {self.method!r}")
        fix = f"lower {rtol} (now {self.rtol:g}) or choose" if rtol else "choose"
        return (f"{where} (evaluation {self.nfe} of the adaptive {self.method!r}): the state "
                f"diverged; {fix} a fixed-step {method} with more {steps}")


class _Counted(nn.Module):
    """ODE right-hand side f(t, x) = v(x, t) that counts calls, stops on non-finite values and
    on an exhausted evaluation budget."""

    def __init__(self, field: Field, max_nfe: int | None = None, rtol: float = 0.0,
                 atol: float = 0.0, method: str = "dopri5", steps: int | None = None,
                 span: tuple[float, float] = (0.0, 1.0)) -> None:
        super().__init__()
        self.field = field
        self.nfe = 0
        self.max_nfe, self.rtol, self.atol = max_nfe, rtol, atol
        self.method, self.steps, self.span = method, steps, span

    def forward(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        self.nfe += 1
        _check_budget(self.nfe, self.max_nfe, self.rtol, self.atol)
        v = self.field(x, t)
        if not isinstance(v, torch.Tensor) or v.shape != x.shape:
            got = tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__
            raise FlowsError(f"field: returned {got} for x of shape {tuple(x.shape)}; a velocity "
                             "of the same shape (N, d) is required")
        if not torch.isfinite(v).all():
            raise SamplingDiverged(float(t), self.nfe, self.method, self.steps, self.rtol,
                                   span=self.span)
        return v


def _options(method: str, steps: int) -> dict:
    if METHODS.get(method):
        return {"step_size": 1.0 / check_positive_int("steps", steps)}
    return {}


def _check_solve(method: str, rtol: float, atol: float, max_nfe: int | None) -> None:
    METHODS.get(method)  # unknown names are refused, listing the valid ones
    check_positive("rtol", rtol)
    check_positive("atol", atol)
    if max_nfe is not None:
        check_positive_int("max_nfe", max_nfe)


@with_threads
def integrate(field: Field, x0: torch.Tensor, method: str = "midpoint", steps: int = 20,
              rtol: float = 1e-5, atol: float = 1e-5, save_trajectory: bool = False,
              t0: float = 0.0, t1: float = 1.0, max_nfe: int | None = 100_000) -> SampleResult:
    """Solve dx/dt = v(x, t) from t0 to t1.

    Parameters
    ----------
    field : callable
        v(x, t): x of shape (N, d), t a scalar tensor, returns (N, d).
    x0 : torch.Tensor, shape (N, d)
        Initial states (source samples), on the device the field runs on.
    method : str
        torchdiffeq's method: "euler", "midpoint", "rk4" (fixed step) or "dopri5" (adaptive).
    steps : int
        Number of equal steps (fixed-step methods; ignored by dopri5).
    rtol, atol : float
        Relative and absolute tolerances of dopri5.
    save_trajectory : bool
        Also return the states at every step (fixed-step) or at 21 times (dopri5).
    max_nfe : int or None
        Budget of velocity evaluations; an adaptive solve that needs more raises
        :class:`BudgetExceeded` (None: no budget).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    SampleResult

    Examples
    --------
    >>> r = integrate(lambda x, t: -x, torch.ones(3, 1), method="rk4", steps=10)
    >>> round(float(r.x[0, 0]), 4), r.nfe
    (0.3679, 40)
    """
    _check_solve(method, rtol, atol, max_nfe)
    if x0.ndim != 2 or x0.shape[0] == 0:
        raise FlowsError(f"x0 has shape {tuple(x0.shape)}; a non-empty (N, d) tensor is required")
    fixed = METHODS.get(method)
    f = _Counted(field, max_nfe, rtol, atol, method,
                 check_positive_int("steps", steps) if fixed else None, (t0, t1))
    n_t = (steps + 1) if fixed else 21
    times = torch.linspace(t0, t1, n_t if save_trajectory else 2, dtype=x0.dtype,
                           device=x0.device)
    with torch.no_grad():
        traj = odeint(f, x0, times, method=method, rtol=rtol, atol=atol,
                      options=_options(method, steps))
    return SampleResult(traj[-1], f.nfe, times, traj if save_trajectory else None)


def velocity_divergence(field: Field, x: torch.Tensor, t: torch.Tensor,
                        probe: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Velocity and divergence div v = sum_k d v_k / d x_k at (x, t).

    Exact when ``probe`` is None (the field's own closed form ``field.divergence(x, t)`` when it
    has one, as :class:`flows.field.TwoLayerReLUField` does, else d vector-Jacobian products),
    else Hutchinson's eps^T (dv/dx) eps with ``probe`` eps of shape (N, d).
    Returns (v (N, d), div (N,)).
    """
    closed = getattr(field, "divergence", None)
    if probe is None and callable(closed):
        with torch.no_grad():
            out = closed(x, t)
        if out is not None:
            return out
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        v = field(x, t)
        if probe is not None:
            (jp,) = torch.autograd.grad(v, x, probe, create_graph=False)
            return v.detach(), (jp * probe).sum(1)
        div = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
        for k in range(x.shape[1]):
            (gk,) = torch.autograd.grad(v[:, k].sum(), x, retain_graph=k < x.shape[1] - 1)
            div += gk[:, k]
    return v.detach(), div


@dataclass(frozen=True)
class LikelihoodResult(Result):
    """Result of :func:`log_likelihood`.

    Attributes
    ----------
    logp : torch.Tensor, shape (N,)
        log p_1(x) under the flow from N(0, I).
    x0 : torch.Tensor, shape (N, d)
        The points mapped back to t = 0.
    nfe : int
        Number of velocity evaluations.
    divergence : str
        "exact" or "hutchinson".
    """

    logp: torch.Tensor
    x0: torch.Tensor
    nfe: int
    divergence: str


@with_threads
def log_likelihood(field: Field, x: torch.Tensor, method: str = "dopri5", steps: int = 50,
                   rtol: float = 1e-5, atol: float = 1e-5, max_nfe: int | None = 20_000,
                   divergence: str = "auto", seed: int | torch.Generator = 0,
                   exact_max_dim: int = 8) -> LikelihoodResult:
    """Log-density of points under the flow from a N(0, I) source.

    log p_1(x) = log N(x(0); 0, I) - int_0^1 div v(x(t), t) dt, integrating x back from t = 1.

    Parameters
    ----------
    field : callable
        v(x, t) (differentiable in x).
    x : torch.Tensor, shape (N, d)
    method : str
        ODE method, as in :func:`integrate` (default dopri5, adaptive).
    steps : int
        Steps of a fixed-step method.
    rtol, atol : float
        Tolerances of dopri5 on the augmented state (x, log-density change).
    max_nfe : int or None
        Budget of evaluations of the augmented right-hand side; when an adaptive solve needs
        more it stops with :class:`BudgetExceeded` (None: no budget).
    divergence : str
        "exact", "hutchinson" or "auto" (exact when d <= ``exact_max_dim``).
    seed : int or torch.Generator
        Randomness of the Hutchinson probe (one Rademacher probe per point, fixed in t).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    LikelihoodResult

    Examples
    --------
    >>> r = log_likelihood(lambda x, t: 0 * x, torch.zeros(1, 2))  # the identity flow
    >>> round(float(r.logp[0]), 4)  # log N(0; 0, I_2) = -log(2 pi)
    -1.8379
    """
    check_choice("divergence", divergence, ("auto", "exact", "hutchinson"))
    _check_solve(method, rtol, atol, max_nfe)
    n, d = x.shape
    use = divergence if divergence != "auto" else ("exact" if d <= exact_max_dim else "hutchinson")
    probe = None
    if use == "hutchinson":
        g = as_generator(seed)
        probe = (torch.randint(0, 2, (n, d), generator=g).to(x.dtype) * 2 - 1).to(x.device)
    counter = {"nfe": 0}
    rhs = _likelihood_rhs(field, d, probe, counter, method, steps, rtol, atol, max_nfe)
    state = torch.cat([x, torch.zeros(n, 1, dtype=x.dtype, device=x.device)], 1)
    times = torch.tensor([1.0, 0.0], dtype=x.dtype, device=x.device)
    end = odeint(rhs, state, times, method=method, rtol=rtol, atol=atol,
                 options=_options(method, steps))[-1]
    z, acc = end[:, :d].detach(), end[:, d].detach()
    logp0 = -0.5 * z.square().sum(1) - 0.5 * d * math.log(2 * math.pi)
    return LikelihoodResult(logp0 + acc, z, counter["nfe"], use)


def _likelihood_rhs(field: Field, d: int, probe: torch.Tensor | None, counter: dict,
                    method: str, steps: int, rtol: float, atol: float, max_nfe: int | None):
    """The right-hand side of the augmented ODE ``(x, log-density change)``, ``(N, d + 1)``:
    the velocity and its divergence (exact, or Hutchinson's with ``probe``), counting its
    calls in ``counter["nfe"]`` against ``max_nfe`` and raising :class:`SamplingDiverged` on a
    non-finite value."""

    def rhs(t: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        counter["nfe"] += 1
        _check_budget(counter["nfe"], max_nfe, rtol, atol)
        v, div = velocity_divergence(field, state[:, :d], t, probe)
        out = torch.cat([v, div[:, None]], 1)
        if not torch.isfinite(out).all():
            raise SamplingDiverged(float(t), counter["nfe"], method,
                                   steps if METHODS.get(method) else None, rtol,
                                   "velocity or divergence", span=(1.0, 0.0))
        return out

    return rhs
