"""Simulating networks: batched, fixed-step or adaptive (torchdiffeq), or with noise.

.. math:: \\tau\\, du = (-u - \\nabla F(r) + b + \\textstyle\\sum_a v_a(t) T_a(r))\\, dt
          + \\tau\\, \\sigma\\, dW

Deterministic runs integrate with ``torchdiffeq.odeint`` (``euler``, ``midpoint``, ``rk4`` on a
fixed grid of step ``dt``; ``dopri5`` adaptive), chunk by chunk between saved steps. With noise
``sigma > 0`` the run uses Euler-Maruyama. Every evaluation checks that the state is finite; a
non-finite state stops the run with :class:`NonFiniteStateError` naming the time and step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torchdiffeq import odeint

from .geometry import wrap_angle
from .inputs import OrnsteinUhlenbeck, Velocity, reference_phase
from .network import HopfieldNetwork
from .progress import progress

__all__ = ["SimulationResult", "simulate", "NonFiniteStateError", "METHODS"]

FIXED_METHODS = ("euler", "midpoint", "rk4")
ADAPTIVE_METHODS = ("dopri5",)
METHODS = FIXED_METHODS + ADAPTIVE_METHODS


class NonFiniteStateError(FloatingPointError):
    """The state of a simulation became non-finite.

    Attributes
    ----------
    time : the simulation time at which it was detected.
    step : index of the step in which it appeared (``floor(time / dt)``).
    """

    def __init__(self, time: float, step: int):
        self.time, self.step = time, step
        super().__init__(
            f"simulation state became non-finite at t={time:.6g} (step {step}); "
            "reduce dt, use method='dopri5', or check the network's parameters"
        )


@dataclass
class SimulationResult:
    """Saved states of a simulation.

    Attributes
    ----------
    t : ``(T,)`` times.
    u, r : ``(T, B, *shape)`` potentials and rates.
    energy : ``(T, B)`` Hopfield energy (the input term excluded).
    decoded : ``(T, B, dim)`` population-vector phase in ``[0, 2 pi)``.
    distance : ``(T, B)`` relative distance to the manifold (NaN without a manifold).
    reference : ``(T, B, dim)`` integrated input velocity from the decoded start (unwrapped), or
        ``None`` without velocity input.
    nfe : number of field evaluations.
    """

    t: torch.Tensor
    u: torch.Tensor
    r: torch.Tensor
    energy: torch.Tensor
    decoded: torch.Tensor
    distance: torch.Tensor
    reference: torch.Tensor | None
    nfe: int
    method: str
    dt: float

    def path_error(self) -> torch.Tensor:
        """Wrapped error ``decoded - reference`` per axis, ``(T, B, dim)`` (needs velocity)."""
        if self.reference is None:
            raise ValueError("path_error: the run had no velocity input")
        return wrap_angle(self.decoded - self.reference)

    def arrays(self, squeeze_ring: bool = True) -> dict:
        """NumPy arrays for ``trajectory.npz``; ring phases are squeezed to ``(T, B)``."""
        out = {"t": self.t, "u": self.u, "r": self.r, "energy": self.energy,
               "decoded": self.decoded, "distance": self.distance}
        if self.reference is not None:
            out["reference"] = self.reference
        if squeeze_ring and self.decoded.shape[-1] == 1:
            out["decoded"] = self.decoded[..., 0]
            if self.reference is not None:
                out["reference"] = self.reference[..., 0]
        return {k: v.detach().cpu().numpy() for k, v in out.items()}


def _check_args(network, u0, duration, dt, method, noise, save_every):
    g = network.geometry
    g.check_state(u0, "u0")
    if u0.dim() != g.dim + 1:
        dims = ", ".join(map(str, g.shape))
        raise ValueError(f"u0: shape {tuple(u0.shape)}; expected (B, {dims})")
    for key, v in (("duration", duration), ("dt", dt)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{key}={v!r}: must be a finite number > 0")
    if dt > duration:
        raise ValueError(f"dt={dt}: larger than duration={duration}")
    if method not in METHODS:
        raise ValueError(f"method={method!r}: unknown; choose one of {METHODS}")
    if not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise={noise!r}: must be finite and >= 0")
    if noise > 0 and method != "euler":
        raise ValueError(f"method={method!r}: noise > 0 needs method='euler' (Euler-Maruyama)")
    if not (isinstance(save_every, int) and save_every >= 1):
        raise ValueError(f"save_every={save_every!r}: must be an integer >= 1")


def simulate(network: HopfieldNetwork, u0: torch.Tensor, duration: float, dt: float = 0.1,
             method: str | None = None, velocity: Velocity | None = None, noise: float = 0.0,
             save_every: int = 10, seed: int | None = None, rtol: float = 1e-7,
             atol: float = 1e-9, progress_bar: bool | None = None,
             diagnostics: bool = True, dtype: torch.dtype = torch.float64,
             current=None) -> SimulationResult:
    """Simulate a batch of states.

    Parameters
    ----------
    network : the network.
    u0 : initial potentials ``(B, *shape)``.
    duration : total time (units of ``network.tau``'s unit).
    dt : integration step (the output step of ``dopri5``, which adapts its own).
    method : ``euler``, ``midpoint``, ``rk4`` (default without noise) or ``dopri5``; noise needs
        ``euler`` (Euler-Maruyama, the default with noise).
    velocity : optional velocity input (prepared here for the batch).
    noise : ``sigma``, additive Gaussian noise on ``u`` per square root of time.
    save_every : steps between saved states.
    seed : seeds the noise and random velocities (required when either is used).
    rtol, atol : tolerances of ``dopri5``.
    progress_bar : show a progress bar (default: only on a terminal).
    diagnostics : compute energy, decoded phase and distance for the saved states.
    dtype : floating type of the integration (``torch.float32`` roughly halves the cost; the
        energy audit then needs a float32 tolerance).
    current : optional external input ``I(t)``: a callable of the time returning a tensor
        broadcastable to ``(B, *shape)`` (e.g. a sensory cue, :mod:`neurodyn.cues`).

    Returns
    -------
    SimulationResult
    """
    method = method or ("euler" if noise > 0 else "rk4")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype={dtype}: choose torch.float32 or torch.float64")
    u0 = torch.as_tensor(u0)
    if u0.is_floating_point():
        u0 = u0.to(dtype)
    _check_args(network, u0, duration, dt, method, noise, save_every)
    g = network.geometry
    batch = u0.shape[0]
    steps = int(round(duration / dt))
    if abs(steps * dt - duration) > 1e-9 * max(1.0, duration):
        raise ValueError(f"duration={duration}: must be a whole number of steps dt={dt}")
    needs_seed = noise > 0 or isinstance(velocity, OrnsteinUhlenbeck)
    if needs_seed and seed is None:
        raise ValueError("seed: required for noisy runs and random velocities")
    gen = torch.Generator().manual_seed(seed) if seed is not None else None
    if velocity is not None:
        velocity.prepare(duration, dt, batch, g.dim, gen)
    nfe = 0
    step_now = [0]

    def func(t, u):
        nonlocal nfe
        nfe += 1
        v = velocity(float(t)) if velocity is not None else None
        if v is not None:
            v = v.to(u.dtype).expand(batch, g.dim)
        c = current(float(t)) if current is not None else None
        du = network.field(u, v, current=None if c is None else c.to(u.dtype))
        # a non-finite u makes du non-finite (leak term); NaN and inf propagate into the sum
        if not torch.isfinite(du.sum()):
            tt = float(t)
            raise NonFiniteStateError(tt, int(math.floor(tt / dt + 1e-9)))
        return du

    save_steps = list(range(0, steps + 1, save_every))
    if save_steps[-1] != steps:
        save_steps.append(steps)
    states = [u0.detach().clone()]
    u = u0.detach().clone()
    bar = progress(total=steps, desc="simulate", enabled=progress_bar)
    with torch.no_grad():
        for a, b in zip(save_steps[:-1], save_steps[1:], strict=True):
            if noise > 0:
                for i in range(a, b):
                    step_now[0] = i
                    du = func(torch.tensor(i * dt), u)
                    xi = torch.randn(u.shape, generator=gen, dtype=u.dtype)
                    u = u + dt * du + noise * math.sqrt(dt) * xi
                if not torch.isfinite(u).all():
                    raise NonFiniteStateError(b * dt, b)
            else:
                grid = torch.arange(a, b + 1, dtype=u.dtype) * dt
                if method in FIXED_METHODS:
                    out = odeint(func, u, grid[[0, -1]], method=method,
                                 options={"grid_constructor": lambda f, y0, t, grid=grid: grid})
                else:
                    out = odeint(func, u, grid[[0, -1]], method=method, rtol=rtol, atol=atol)
                u = out[-1]
                if not torch.isfinite(u).all():
                    raise NonFiniteStateError(b * dt, b)
            states.append(u.clone())
            bar.update(b - a)
    bar.close()
    times = torch.tensor(save_steps, dtype=torch.float64) * dt
    us = torch.stack(states)
    with torch.no_grad():
        rs = network.rates(us)
        energy = network.energy(us)
        decoded = g.decode(rs)
        if network.manifold is not None and diagnostics:
            distance = network.manifold.distance(us).distance
        else:
            distance = torch.full(us.shape[:2], float("nan"), dtype=us.dtype)
    reference = None
    if velocity is not None:
        reference = reference_phase(velocity, times, dt, decoded[0].to(torch.float64))
        # unwrap the start so that reference and decoded differ only by the error
    return SimulationResult(times, us, rs, energy, decoded, distance, reference, nfe, method, dt)
