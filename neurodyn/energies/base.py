"""The interface every interaction energy ``F(r)`` implements: value, gradient, Hessian-vector
product and a config that, with the state dict, rebuilds it.

For every energy the autonomous dynamics ``tau du/dt = -u - grad F(r) + b`` descend the Hopfield
energy ``E = F(r) - b.r + sum_i G(r_i)``.
"""

from __future__ import annotations

import torch
from torch import nn

from ..geometry.populations import Geometry

__all__ = ["InteractionEnergy"]


def _flat(x: torch.Tensor, geometry: Geometry) -> torch.Tensor:
    return x.reshape(x.shape[: x.dim() - geometry.dim] + (geometry.size,))


class InteractionEnergy(nn.Module):
    """Base class: a differentiable interaction energy on rates of a geometry.

    Subclasses implement :meth:`forward` (the value). :meth:`grad` and :meth:`hvp` default to
    automatic differentiation and are overridden by closed forms where those exist.
    """

    family: str = ""

    def __init__(self, geometry: Geometry):
        super().__init__()
        self.geometry = geometry

    def forward(self, r: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        """Energy ``F(r)``, shape ``(...)`` for ``r`` of shape ``(..., *shape)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward(r)")

    def grad(self, r: torch.Tensor) -> torch.Tensor:
        """``grad_r F``, same shape as ``r`` (autograd; differentiable when grad mode is on)."""
        outer = torch.is_grad_enabled()
        with torch.enable_grad():
            x = r if r.requires_grad else r.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.forward(x).sum(), x, create_graph=outer)
        return g

    def hvp(self, r: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Hessian-vector product ``(d^2 F / dr^2) v``, same shape as ``r``.

        Parameters
        ----------
        r : torch.Tensor, shape (..., *shape)
            Rates.
        v : torch.Tensor, shape (..., *shape)
            Directions, broadcastable to ``r``.
        """
        outer = torch.is_grad_enabled()
        with torch.enable_grad():
            x = r.detach().requires_grad_(True)
            v = v.expand_as(x) if v.shape != x.shape else v
            (g,) = torch.autograd.grad(self.forward(x).sum(), x, create_graph=True)
            (hv,) = torch.autograd.grad((g * v).sum(), x, create_graph=outer)
        return hv

    def config(self) -> dict:
        """JSON-serialisable hyper-parameters; with the state dict they rebuild the energy."""
        return {"family": self.family}


