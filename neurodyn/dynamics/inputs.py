"""Velocity inputs: constant, sinusoidal, piecewise-constant steps, Ornstein-Uhlenbeck, arrays.

A velocity is prepared for a run (duration, step, batch, manifold dimension, random generator)
and then evaluated at any time ``t`` as a tensor ``(batch, dim)`` in radians of phase per unit
time. A positive velocity moves the bump toward increasing phase.

Spec strings (as on the command line)::

    constant:V            constant:V1,V2            (torus)
    sine:AMP:FREQ         sine:A1,A2:FREQ           v = AMP sin(2 pi FREQ t)
    steps:V1,V2,...:HOLD  steps:V1x,V1y;V2x,V2y:HOLD  each value held for HOLD time units
    ou:SIGMA:TIMESCALE[:VMAX]   Ornstein-Uhlenbeck, stationary std SIGMA, clipped to |v| <= VMAX
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import BadInput

__all__ = ["Velocity", "Constant", "Sine", "Steps", "OrnsteinUhlenbeck", "ArrayVelocity",
           "parse_velocity", "VELOCITY_KINDS", "reference_phase"]

VELOCITY_KINDS = ("constant", "sine", "steps", "ou")


class Velocity(ABC):
    """A velocity signal ``v(t)`` of shape ``(batch, dim)``."""

    def prepare(self, duration: float, dt: float, batch: int, dim: int,
                generator: torch.Generator | None = None) -> Velocity:
        """Bind the signal to a run; returns ``self`` (after validation or sampling)."""
        self.batch, self.dim = batch, dim
        return self

    @abstractmethod
    def __call__(self, t: float) -> torch.Tensor:
        """Velocity at time ``t``, shape ``(batch or 1, dim)`` (float64)."""

    def _vector(self, values, name: str) -> torch.Tensor:
        v = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
        if v.numel() == 1:
            v = v.expand(self.dim)
        if v.numel() != self.dim:
            raise BadInput(f"{name}={values!r}: needs 1 or {self.dim} components", param=name)
        if not torch.isfinite(v).all():
            raise BadInput(f"{name}={values!r}: must be finite", param=name)
        return v.reshape(1, self.dim)


@dataclass
class Constant(Velocity):
    """``v(t) = value`` (a float, or one value per manifold axis)."""

    value: float | tuple = 0.0

    def prepare(self, duration, dt, batch, dim, generator=None):
        super().prepare(duration, dt, batch, dim)
        self._v = self._vector(self.value, "value")
        return self

    def __call__(self, t):
        return self._v


@dataclass
class Sine(Velocity):
    """``v(t) = amplitude * sin(2 pi frequency t + phase)``."""

    amplitude: float | tuple = 0.1
    frequency: float = 0.01
    phase: float = 0.0

    def prepare(self, duration, dt, batch, dim, generator=None):
        super().prepare(duration, dt, batch, dim)
        self._a = self._vector(self.amplitude, "amplitude")
        if not (math.isfinite(self.frequency) and self.frequency >= 0):
            raise BadInput(f"frequency={self.frequency!r}: must be finite and >= 0",
                           param="frequency")
        return self

    def __call__(self, t):
        return self._a * math.sin(2 * math.pi * self.frequency * t + self.phase)


class _Sampled(Velocity):
    """A velocity given by samples every ``h``: held over ``[i h, (i+1) h)`` (``linear=False``)
    or interpolated linearly between samples (``linear=True``); the last sample is kept."""

    def _set_samples(self, samples: torch.Tensor, hold: float, linear: bool = False) -> None:
        self._samples = samples  # (steps, batch or 1, dim)
        self._hold = hold
        self._linear = linear

    def __call__(self, t):
        x = t / self._hold
        last = self._samples.shape[0] - 1
        i = min(max(int(math.floor(x + 1e-9)), 0), last)
        if not self._linear or i == last:
            return self._samples[i]
        w = min(max(x - i, 0.0), 1.0)
        return (1 - w) * self._samples[i] + w * self._samples[i + 1]


@dataclass
class Steps(_Sampled):
    """Piecewise-constant velocity: each value held for ``hold`` time units, the last one kept."""

    values: tuple = (0.1, -0.1)
    hold: float = 10.0

    def prepare(self, duration, dt, batch, dim, generator=None):
        super().prepare(duration, dt, batch, dim)
        if not (math.isfinite(self.hold) and self.hold > 0):
            raise BadInput(f"hold={self.hold!r}: must be > 0", param="hold")
        vals = torch.stack([self._vector(v, "values") for v in self.values])
        self._set_samples(vals, self.hold)
        return self


@dataclass
class OrnsteinUhlenbeck(_Sampled):
    """Ornstein-Uhlenbeck velocity, independent per run and axis, sampled every ``dt``.

    .. math:: dv = -v\\, dt / T + \\sigma \\sqrt{2/T}\\, dW, \\qquad v(0) \\sim N(0, \\sigma^2)

    Parameters
    ----------
    sigma : float
        Stationary standard deviation (rad per time unit).
    timescale : float
        Correlation time ``T``.
    vmax : float or None
        Optional clip ``|v| <= vmax``.
    """

    sigma: float = 0.2
    timescale: float = 10.0
    vmax: float | None = None

    def prepare(self, duration, dt, batch, dim, generator=None):
        super().prepare(duration, dt, batch, dim)
        for key in ("sigma", "timescale"):
            v = getattr(self, key)
            if not (math.isfinite(v) and v > 0):
                raise BadInput(f"{key}={v!r}: must be > 0", param=key)
        if self.vmax is not None and not self.vmax > 0:
            raise BadInput(f"vmax={self.vmax!r}: must be > 0", param="vmax")
        if generator is None:
            raise BadInput("generator: an Ornstein-Uhlenbeck velocity needs a seeded generator",
                           param="generator")
        steps = int(math.ceil(duration / dt)) + 1
        a = math.exp(-dt / self.timescale)
        noise = torch.randn((steps, batch, dim), generator=generator, dtype=torch.float64)
        v = torch.empty_like(noise)
        v[0] = self.sigma * noise[0]
        c = self.sigma * math.sqrt(1 - a * a)
        for i in range(1, steps):
            v[i] = a * v[i - 1] + c * noise[i]
        if self.vmax is not None:
            v = v.clamp(-self.vmax, self.vmax)
        self._set_samples(v, dt, linear=True)
        return self


class ArrayVelocity(_Sampled):
    """A user time series sampled every ``dt``, interpolated linearly between samples.

    Parameters
    ----------
    values : array_like, shape (steps,) or (steps, B)
        For a ring; ``(steps, dim)`` or ``(steps, B, dim)`` in general.
    dt : float
        Sampling interval (the simulation step).
    """

    def __init__(self, values, dt: float):
        v = torch.as_tensor(np.asarray(values), dtype=torch.float64)
        if v.dim() == 0 or v.shape[0] < 1:
            raise BadInput(f"velocity array: shape {tuple(v.shape)}; need at least one sample")
        if not torch.isfinite(v).all():
            bad = int((~torch.isfinite(v)).nonzero()[0, 0])
            raise BadInput(f"velocity array: non-finite value at sample {bad}")
        self.values = v
        self.dt = float(dt)

    def prepare(self, duration, dt, batch, dim, generator=None):
        super().prepare(duration, dt, batch, dim)
        v = self.values
        shape = tuple(v.shape)
        if dim == 1 and v.dim() == 1:
            v = v.reshape(-1, 1, 1)
        elif dim == 1 and v.dim() == 2:
            v = v.unsqueeze(-1)
        elif v.dim() == 2 and v.shape[1] == dim:
            v = v.unsqueeze(1)
        elif v.dim() != 3 or v.shape[2] != dim:
            allowed = ("(steps,) or (steps, B)" if dim == 1
                       else f"(steps, {dim}) or (steps, B, {dim})")
            raise BadInput(f"velocity array: shape {shape}; expected {allowed}")
        if v.shape[1] not in (1, batch):
            raise BadInput(
                f"velocity array: shape {shape} has {v.shape[1]} runs but the batch has {batch}"
            )
        if duration > v.shape[0] * self.dt * (1 + 1e-9):
            raise BadInput(
                f"duration={duration}: longer than the velocity array ({v.shape[0]} samples "
                f"x dt={self.dt} = {v.shape[0] * self.dt})", param="duration"
            )
        self._set_samples(v, self.dt, linear=True)
        return self


def parse_velocity(spec: str) -> Velocity:
    """Parse a velocity spec string (see the module docstring).

    Raises
    ------
    BadInput
        naming the spec, what was wrong and the allowed forms.
    """
    forms = "constant:V | sine:AMP:FREQ | steps:V1,V2,...:HOLD | ou:SIGMA:TIMESCALE[:VMAX]"
    if not isinstance(spec, str) or ":" not in spec:
        raise BadInput(f"velocity={spec!r}: expected one of {forms}", param="velocity")
    kind, *args = spec.split(":")

    def nums(text, what):
        try:
            return tuple(float(x) for x in text.split(","))
        except ValueError:
            raise BadInput(f"velocity={spec!r}: {what} {text!r} is not a number list",
                           param="velocity") from None

    def one(text, what):
        vals = nums(text, what)
        if len(vals) != 1:
            raise BadInput(f"velocity={spec!r}: {what} must be one number", param="velocity")
        return vals[0]

    try:
        if kind == "constant" and len(args) == 1:
            return Constant(nums(args[0], "V"))
        if kind == "sine" and len(args) == 2:
            return Sine(nums(args[0], "AMP"), one(args[1], "FREQ"))
        if kind == "steps" and len(args) == 2:
            values = tuple(nums(part, "value") for part in args[0].split(";"))
            if len(values) == 1:
                values = tuple((x,) for x in values[0])
            return Steps(values, one(args[1], "HOLD"))
        if kind == "ou" and len(args) in (2, 3):
            vmax = one(args[2], "VMAX") if len(args) == 3 else None
            return OrnsteinUhlenbeck(one(args[0], "SIGMA"), one(args[1], "TIMESCALE"), vmax)
    except ValueError:
        raise
    raise BadInput(f"velocity={spec!r}: unknown kind or wrong number of fields; "
                   f"expected one of {forms}", param="velocity")


def reference_phase(velocity: Velocity, times: torch.Tensor, dt: float,
                    psi0: torch.Tensor) -> torch.Tensor:
    """Integrated velocity ``psi0 + int_0^t v`` at ``times`` (Simpson on the step grid).

    Parameters
    ----------
    velocity : Velocity
        A prepared velocity.
    times : torch.Tensor, shape (T,)
        Multiples of ``dt``.
    dt : float
        The integration step.
    psi0 : torch.Tensor, shape (B, dim)
        Starting phases.

    Returns
    -------
    Tensor ``(T, B, dim)`` (unwrapped).
    """
    steps = int(round(float(times[-1]) / dt))
    wanted = {int(round(float(t) / dt)) for t in times}
    psi = psi0.clone()
    marks = {0: psi0.clone()}
    for i in range(steps):
        t = i * dt
        psi = psi + dt / 6 * (velocity(t) + 4 * velocity(t + dt / 2) + velocity(t + dt - 1e-9 * dt))
        if i + 1 in wanted:
            marks[i + 1] = psi.clone()
    return torch.stack([marks[int(round(float(t) / dt))].expand_as(psi0) for t in times])
