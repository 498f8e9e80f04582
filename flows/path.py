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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import Registry

from .errors import FlowsError, as_generator


@dataclass(frozen=True)
class PathSample:
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


PATHS = Registry("path")
for _cls in (LinearPath, VPPath, TargetPath):
    PATHS.add(_cls.name, _cls)


def get_path(name: str, sigma_min: float = 0.0) -> LinearPath | VPPath | TargetPath:
    """Path by name ("linear", "vp", "target"); raises listing the valid names."""
    return PATHS.get(name)(sigma_min)
