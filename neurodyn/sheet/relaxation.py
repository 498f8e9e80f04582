"""Relaxation of a large sheet by fixed-step RK4, with the energy audited as it runs, and the
Jacobian's zero modes at the resting bump found matrix-free.

Nothing of the trajectory is kept but one number per step (the energy); a run of any length
holds the state, three RK4 work sheets and the FFT's spectra.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from _runkit import BadInput, Diverged, Result

from .field import SheetField

__all__ = ["SheetRun", "relax", "rk4_steps", "ZeroModes", "zero_modes", "AUDIT_RTOL", "PATHS"]

#: how :func:`relax` and :func:`rk4_steps` integrate: ``compiled`` (:mod:`.fast`, one numba
#: call for every step), ``torch`` (the reference, :func:`_rk4_step` step by step) or ``auto``
#: (compiled where it applies)
PATHS = ("auto", "compiled", "torch")

#: default relative tolerance of the energy audit per dtype: ``E`` may rise by at most
#: ``rtol * (1 + |E|)`` between steps (the rounding of a sum over the sheet)
AUDIT_RTOL = {torch.float64: 1e-10, torch.float32: 1e-6}


@dataclass(frozen=True)
class SheetRun(Result):
    """A relaxation: the final state and the audited energy.

    Attributes
    ----------
    u : torch.Tensor, shape (n1, n2)
        The final potentials, in the field's dtype.
    energy : torch.Tensor, shape (steps + 1,)
        The Hopfield energy at every step (float64): all that is kept of the trajectory.
    max_rise : float
        The largest increase of ``E`` between two steps relative to ``1 + |E|`` (0 when it
        never rose).
    rtol : float
        The audit's tolerance on that ratio; ``ok`` is ``max_rise <= rtol``.
    steps, dt : int, float
        RK4 steps and their size (in units of ``tau``).
    cpu_seconds, wall_seconds : float
        Time of the loop (process CPU time and wall time).
    """

    u: torch.Tensor
    energy: torch.Tensor
    max_rise: float
    rtol: float
    steps: int
    dt: float
    cpu_seconds: float
    wall_seconds: float

    @property
    def ok(self) -> bool:
        """Whether the energy never rose beyond the tolerance."""
        return self.max_rise <= self.rtol

    def __repr__(self) -> str:
        return (f"SheetRun(steps={self.steps}, dt={self.dt}, E {float(self.energy[0]):.6g} -> "
                f"{float(self.energy[-1]):.6g}, max_rise={self.max_rise:.2e} "
                f"(rtol {self.rtol:g}, ok={self.ok}), cpu={self.cpu_seconds:.1f} s)")


def _rk4_step(field: SheetField, u: torch.Tensor, dt: float) -> torch.Tensor:
    """One classical RK4 step with two work sheets besides the stage derivative."""
    k = field.field(u)
    acc = u + (dt / 6) * k
    tmp = torch.add(u, k, alpha=dt / 2)
    k = field.field(tmp)
    acc.add_(k, alpha=dt / 3)
    torch.add(u, k, alpha=dt / 2, out=tmp)
    k = field.field(tmp)
    acc.add_(k, alpha=dt / 3)
    torch.add(u, k, alpha=dt, out=tmp)
    k = field.field(tmp)
    return acc.add_(k, alpha=dt / 6)


def _compiled(field: SheetField, path: str):
    """The field's compiled stepper for ``path``, or None for the reference."""
    from .fast import CompiledSteps, compiled_reason

    if path not in PATHS:
        raise BadInput(f"path={path!r}: choose one of {PATHS}")
    reason = None if path == "torch" else compiled_reason(field)
    if path == "compiled" and reason is not None:
        raise BadInput(f"path='compiled': {reason}; use path='torch'")
    if path == "torch" or reason is not None:
        return None
    if getattr(field, "_steps", None) is None:  # built once per field
        field._steps = CompiledSteps(field)
    return field._steps


def rk4_steps(field: SheetField, u0: torch.Tensor, steps: int, dt: float = 0.1,
              path: str = "auto") -> torch.Tensor:
    """``steps`` classical RK4 steps from ``u0`` without the audit: the state after them.

    Parameters
    ----------
    field : SheetField
        The network's field.
    u0 : torch.Tensor, shape (n1, n2)
        The initial potentials (converted to the field's dtype; not modified).
    steps : int
        Number of steps (>= 0).
    dt : float
        Step size in units of time.
    path : str
        One of :data:`PATHS`.

    Returns
    -------
    torch.Tensor, shape (n1, n2), in the field's dtype
    """
    stepper = _compiled(field, path)
    if stepper is None:
        u = u0.to(field.dtype)
        with torch.no_grad():
            for _ in range(steps):
                u = _rk4_step(field, u, dt)
        return u
    u = u0.detach().to(field.dtype).clone().contiguous()
    stepper.run(u.numpy(), steps, dt, audit=False)
    return u


def relax(field: SheetField, u0: torch.Tensor, steps: int, dt: float = 0.1,
          audit: bool = True, rtol: float | None = None, path: str = "auto") -> SheetRun:
    """Integrate ``tau du/dt = -u - grad F(phi(u)) + b`` by RK4, auditing the energy.

    Parameters
    ----------
    field : SheetField
        The network's field.
    u0 : torch.Tensor, shape (n1, n2)
        The initial potentials (converted to the field's dtype).
    steps : int
        Number of RK4 steps (>= 1).
    dt : float
        Step size in units of time (``tau`` is the field's).
    audit : bool
        Evaluate the energy at every step (one more ``rfft2`` a step); without it ``energy``
        holds the first and last values only.
    rtol : float or None
        The audit's tolerance (None: :data:`AUDIT_RTOL` of the dtype).
    path : str
        One of :data:`PATHS` (default: the compiled path where it applies). The compiled path
        sums the energy's per-neuron terms in float64 from float64 values; the reference from
        values in the field's dtype.

    Returns
    -------
    SheetRun

    Raises
    ------
    Diverged
        The energy (hence the state) became non-finite; the message names the step.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise BadInput(f"steps={steps!r}: must be an integer >= 1")
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise BadInput(f"dt={dt!r}: must be a finite number > 0")
    rtol = AUDIT_RTOL[field.dtype] if rtol is None else float(rtol)
    stepper = _compiled(field, path)
    cpu, wall = time.process_time(), time.perf_counter()
    if stepper is not None:
        u = u0.detach().to(field.dtype).clone().contiguous()
        energies, bad = _compiled_steps(stepper, u.numpy(), steps, dt, audit)
    else:
        energies, u, bad = _reference_steps(field, u0.to(field.dtype), steps, dt, audit)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if bad is not None:
        raise Diverged(f"relax: the state became non-finite at step {bad} "
                       f"(t = {bad * dt:g}); lower dt={dt:g}", step=bad, parameter="dt")
    e = torch.tensor(energies, dtype=torch.float64)
    rise = (e[1:] - e[:-1]) / (1 + e[:-1].abs())
    return SheetRun(u, e, max(float(rise.max()), 0.0), rtol, steps, float(dt), cpu, wall)


def _reference_steps(field: SheetField, u: torch.Tensor, steps: int, dt: float,
                     audit: bool) -> tuple[list, torch.Tensor, int | None]:
    """The reference loop: the energies (every step, or first and last), the final state and
    the step at which the energy became non-finite (None: never)."""
    energies = [field.energy(u)]
    with torch.no_grad():
        for step in range(steps):
            u = _rk4_step(field, u, dt)
            if audit or step == steps - 1:
                energies.append(field.energy(u))
                if not math.isfinite(energies[-1]):
                    return energies, u, step + 1
    return energies, u, None


def _compiled_steps(stepper, u, steps: int, dt: float, audit: bool) -> tuple[list, int | None]:
    """The compiled loop on ``u`` (in place): the energies as :func:`_reference_steps` keeps
    them and the step at which the state or its energy became non-finite (None: never)."""
    if audit:
        taken, energies = stepper.run(u, steps, dt, audit=True)
        energies = energies[:taken + 1].tolist()
    else:
        first = float(stepper.run(u, 0, dt, audit=True)[1][0])
        taken, _ = stepper.run(u, steps, dt, audit=False)
        energies = [first, float(stepper.run(u, 0, dt, audit=True)[1][0])]
    if taken < steps:
        return energies, taken
    bad = next((i for i, e in enumerate(energies) if not math.isfinite(e)), None)
    return energies, (steps if bad is not None and not audit else bad)


@dataclass(frozen=True)
class ZeroModes(Result):
    """The Jacobian ``J = -(I + H D)/tau`` at a resting bump, seen through the symmetric
    ``S = I + D^{1/2} H D^{1/2}`` (``J`` is similar to ``-S/tau``).

    Attributes
    ----------
    tangent_eigenvalues : tuple of float
        ``-q.S q / tau`` for the two translation generators ``q_a = D^{1/2} du*/dpsi_a``
        (orthonormalised): the Jacobian's eigenvalues along them.
    tangent_residuals : tuple of float
        ``|S q_a| / tau``: each generator is an eigenvector to within this (an eigenvalue of
        ``J`` lies within it of 0).
    normal_range : tuple of float
        The smallest and largest Ritz values of ``-S/tau`` on the complement of the generators
        (``iterations`` Lanczos steps from a seeded start): the normal eigenvalues' span.
    iterations : int
    """

    tangent_eigenvalues: tuple[float, float]
    tangent_residuals: tuple[float, float]
    normal_range: tuple[float, float]
    iterations: int

    def count(self, atol: float = 1e-6) -> int:
        """Directions with ``|eigenvalue| <= atol``: the generators within ``atol`` of 0, plus
        the complement's if its slowest Ritz value is within ``atol`` too."""
        tangent = sum(abs(v) + r <= atol for v, r in zip(self.tangent_eigenvalues,
                                                          self.tangent_residuals, strict=True))
        return int(tangent) + int(abs(self.normal_range[1]) <= atol)


def zero_modes(field: SheetField, u: torch.Tensor, tau: float = 1.0, iterations: int = 30,
               seed: int = 0) -> ZeroModes:
    """The neutral directions of the dynamics at a resting bump ``u``, matrix-free.

    The Hessian enters only through :meth:`SheetField.hvp` (two FFTs); the translation
    generators are the spectral derivatives of ``u``; the rest of the spectrum is bounded by
    Lanczos (three-term recurrence, no vector kept beyond three) on the complement.

    Parameters
    ----------
    field : SheetField
        The network's field (float64 recommended).
    u : torch.Tensor, shape (n1, n2)
        A fixed point (the fitted bump ``net.manifold.u0``).
    tau : float
        The network's time constant.
    iterations : int
        Lanczos steps.
    seed : int
        Seeds the start vector.

    Returns
    -------
    ZeroModes
    """
    g = field.geometry
    u = u.to(field.dtype)
    sq = field.activation.derivative(u).sqrt_()

    def op(v):
        return field.hvp(u, sq * v).mul_(sq).add_(v)

    gens = []
    for axis in range(2):
        q = -g.derivative(u, axis) * sq
        for p in gens:
            q -= (q * p).sum() * p
        gens.append(q / q.norm())
    vals, res = [], []
    for q in gens:
        s = op(q)
        vals.append(-float((q * s).sum()) / tau)
        res.append(float(s.norm()) / tau)

    def project(v):
        for p in gens:
            v -= (v * p).sum() * p
        return v

    gen = torch.Generator().manual_seed(seed)
    v = project(torch.randn(g.shape, generator=gen, dtype=torch.float64).to(field.dtype))
    v /= v.norm()
    prev, beta, alphas, betas = torch.zeros_like(v), 0.0, [], []
    for _ in range(iterations):
        w = op(v)
        alpha = float((w * v).sum())
        w = project(w.sub_(v, alpha=alpha).sub_(prev, alpha=beta))  # after: no growth
        alphas.append(alpha)
        beta = float(w.norm())
        if beta < 1e-14:
            break
        betas.append(beta)
        prev, v = v, w.div_(beta)
    t = torch.diag(torch.tensor(alphas, dtype=torch.float64))
    off = torch.tensor(betas[:len(alphas) - 1], dtype=torch.float64)
    t += torch.diag(off, 1) + torch.diag(off, -1)
    ritz = torch.linalg.eigvalsh(t)
    return ZeroModes(tuple(vals), tuple(res), (-float(ritz[-1]) / tau, -float(ritz[0]) / tau),
                     len(alphas))
