"""Conditional probability paths x_t between a source point x0 and a target point x1.

Each path returns a :class:`PathSample` with the point x_t and its conditional velocity
dx_t = d x_t / dt, the regression target of conditional flow matching.

=========  ===========================================  ============================================
name       x_t                                          dx_t
=========  ===========================================  ============================================
linear     (1 - t) x0 + t x1 + sigma_min eps            x1 - x0
vp         cos(pi t / 2) x0 + sin(pi t / 2) x1          (pi/2) (cos(pi t/2) x1 - sin(pi t/2) x0)
target     t x1 + (1 - (1 - sigma_min) t) x0            x1 - (1 - sigma_min) x0
=========  ===========================================  ============================================

"target" is Lipman et al.'s (2023) optimal-transport path towards N(x1, sigma_min^2 I), which
assumes x0 ~ N(0, I).

General affine paths (Lipman et al. 2024, "Flow Matching Guide", section 4.8) are named
``"affine:ALPHA,SIGMA"``: x_t = alpha_t x1 + sigma_t x0 with the schedules ALPHA and SIGMA of
:data:`SCHEDULES`, and dx_t = alpha'_t x1 + sigma'_t x0 from their closed-form derivatives.
A schedule pair must join the source to the data: alpha_0 = 0, alpha_1 = 1, sigma_0 = 1,
sigma_1 = 0. "affine:t,1-t" is "linear" (sigma_min = 0) and "affine:sin,cos" is "vp".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import Registry
from _runkit.results import Result

from .errors import FlowsError, as_generator


@dataclass(frozen=True)
class PathSample(Result):
    """A point on a conditional path and its velocity.

    Attributes
    ----------
    x_t : torch.Tensor, shape (B, d)
    dx_t : torch.Tensor, shape (B, d)
    t : torch.Tensor, shape (B, 1)
    """

    x_t: torch.Tensor
    dx_t: torch.Tensor
    t: torch.Tensor


def _check_sigma(sigma_min: float) -> float:
    s = float(sigma_min)
    if not 0.0 <= s < 1.0:
        raise FlowsError(f"sigma_min={sigma_min!r} is not allowed; it must lie in [0, 1)")
    return s


class LinearPath:
    """x_t = (1 - t) x0 + t x1 + sigma_min eps, eps ~ N(0, I); dx_t = x1 - x0.

    Parameters
    ----------
    sigma_min : float
        Standard deviation of the Gaussian smoothing around the straight line (0: none).
    """

    name = "linear"

    def __init__(self, sigma_min: float = 0.0) -> None:
        self.sigma_min = _check_sigma(sigma_min)

    def sample(self, x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor,
               seed: int | torch.Generator | None = None) -> PathSample:
        """Point and velocity, x0, x1 of shape (B, d), t of shape (B, 1).

        ``seed`` is required when sigma_min > 0.
        """
        dx = x1 - x0
        xt = x0 + t * dx
        if self.sigma_min > 0:
            g = as_generator(seed)
            noise = torch.randn(xt.shape, generator=g, dtype=xt.dtype)  # CPU generator
            xt = xt + self.sigma_min * noise.to(xt.device)
        return PathSample(xt, dx, t)


class VPPath:
    """Variance-preserving (trigonometric) path x_t = cos(pi t/2) x0 + sin(pi t/2) x1."""

    name = "vp"

    def __init__(self, sigma_min: float = 0.0) -> None:
        _check_sigma(sigma_min)

    def sample(self, x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor,
               seed: int | torch.Generator | None = None) -> PathSample:
        """dx_t = (pi/2)(cos(pi t/2) x1 - sin(pi t/2) x0); shapes (B, d), t (B, 1)."""
        c, s = torch.cos(0.5 * math.pi * t), torch.sin(0.5 * math.pi * t)
        return PathSample(c * x0 + s * x1, 0.5 * math.pi * (c * x1 - s * x0), t)


class TargetPath:
    """Lipman's path x_t = t x1 + (1 - (1 - sigma_min) t) x0 with x0 ~ N(0, I).

    Its endpoint at t = 1 is N(x1, sigma_min^2 I); dx_t = x1 - (1 - sigma_min) x0.
    """

    name = "target"

    def __init__(self, sigma_min: float = 1e-4) -> None:
        self.sigma_min = _check_sigma(sigma_min)

    def sample(self, x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor,
               seed: int | torch.Generator | None = None) -> PathSample:
        """Point and velocity, x0 (noise), x1 of shape (B, d), t of shape (B, 1)."""
        a = 1.0 - self.sigma_min
        return PathSample(t * x1 + (1 - a * t) * x0, x1 - a * x0, t)


def _poly(k: int):
    return lambda t: t**k, lambda t: k * t ** (k - 1)


#: schedule name -> (f, f'), functions of t (B, 1); alpha rises from 0 to 1, sigma falls from
#: 1 to 0
SCHEDULES: dict = {
    "t": (lambda t: t, torch.ones_like),
    "1-t": (lambda t: 1 - t, lambda t: -torch.ones_like(t)),
    "t^2": _poly(2),
    "t^3": _poly(3),
    "1-t^2": (lambda t: 1 - t**2, lambda t: -2 * t),
    "(1-t)^2": (lambda t: (1 - t) ** 2, lambda t: -2 * (1 - t)),
    "sin": (lambda t: torch.sin(0.5 * math.pi * t),
            lambda t: 0.5 * math.pi * torch.cos(0.5 * math.pi * t)),
    "cos": (lambda t: torch.cos(0.5 * math.pi * t),
            lambda t: -0.5 * math.pi * torch.sin(0.5 * math.pi * t)),
    "smoothstep": (lambda t: t * t * (3 - 2 * t), lambda t: 6 * t * (1 - t)),
    "1-smoothstep": (lambda t: 1 - t * t * (3 - 2 * t), lambda t: -6 * t * (1 - t)),
}


class AffinePath:
    """x_t = alpha_t x1 + sigma_t x0; dx_t = alpha'_t x1 + sigma'_t x0.

    Parameters
    ----------
    alpha, sigma : str
        Names of :data:`SCHEDULES`; alpha must run from 0 to 1 and sigma from 1 to 0.
    sigma_min : float
        Must be 0 (the schedules set the width of the path).

    Examples
    --------
    >>> p = AffinePath("t^2", "1-t")
    >>> p.name
    'affine:t^2,1-t'
    >>> ps = p.sample(torch.zeros(1, 1), torch.ones(1, 1), torch.full((1, 1), 0.5))
    >>> float(ps.x_t), float(ps.dx_t)  # 0.5^2 and 2 * 0.5
    (0.25, 1.0)
    """

    def __init__(self, alpha: str, sigma: str, sigma_min: float = 0.0) -> None:
        for what, sched in (("alpha", alpha), ("sigma", sigma)):
            if sched not in SCHEDULES:
                raise FlowsError(f"path='affine:{alpha},{sigma}': {what} schedule {sched!r} is "
                                 f"unknown; choose from {', '.join(SCHEDULES)}")
        ends = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
        a, s = SCHEDULES[alpha][0](ends).flatten().tolist(), \
            SCHEDULES[sigma][0](ends).flatten().tolist()
        if max(abs(a[0]), abs(a[1] - 1), abs(s[0] - 1), abs(s[1])) > 1e-12:
            raise FlowsError(f"path='affine:{alpha},{sigma}' does not join source and data: "
                             f"alpha runs {a[0]:.3g} -> {a[1]:.3g} and sigma {s[0]:.3g} -> "
                             f"{s[1]:.3g}; "
                             "alpha must run 0 -> 1 and sigma 1 -> 0")
        if _check_sigma(sigma_min) != 0:
            raise FlowsError(f"sigma_min={sigma_min!r} is not allowed with an affine path; "
                             "its schedules set the path's width (use 0)")
        self.alpha, self.sigma = alpha, sigma
        self.name = f"affine:{alpha},{sigma}"

    def sample(self, x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor,
               seed: int | torch.Generator | None = None) -> PathSample:
        """Point and velocity, x0, x1 of shape (B, d), t of shape (B, 1) (``seed`` unused)."""
        (a, da), (s, ds) = SCHEDULES[self.alpha], SCHEDULES[self.sigma]
        return PathSample(a(t) * x1 + s(t) * x0, da(t) * x1 + ds(t) * x0, t)


PATHS = Registry("path")
for _cls in (LinearPath, VPPath, TargetPath):
    PATHS.add(_cls.name, _cls)


def get_path(name: str, sigma_min: float = 0.0
             ) -> LinearPath | VPPath | TargetPath | AffinePath:
    """Path by name: one of :data:`PATHS` ("linear", "vp", "target") or
    ``"affine:ALPHA,SIGMA"`` with two names of :data:`SCHEDULES`; raises listing the valid names.

    Examples
    --------
    >>> get_path("affine:sin,cos").name
    'affine:sin,cos'
    """
    if isinstance(name, str) and name.startswith("affine:"):
        parts = name[len("affine:"):].split(",")
        if len(parts) != 2:
            raise FlowsError(f"path={name!r} is not allowed; write 'affine:ALPHA,SIGMA' with two "
                             f"schedules of {', '.join(SCHEDULES)}")
        return AffinePath(parts[0].strip(), parts[1].strip(), sigma_min)
    return PATHS.get(name)(sigma_min)
