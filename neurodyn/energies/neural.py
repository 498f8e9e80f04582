"""General interaction energies given by neural networks (autograd gradients)."""

from __future__ import annotations

import math

import torch
from torch import nn

from _runkit import BadInput, BadType, check_int

from ..geometry.populations import Geometry
from .base import InteractionEnergy, _flat

__all__ = ["ModuleEnergy", "MLPEnergy"]


class ModuleEnergy(InteractionEnergy):
    """A general interaction energy given by any differentiable torch module.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    module : torch.nn.Module
        Maps rates ``(..., *shape)`` to energies ``(...)``.
    """

    family = "module"

    def __init__(self, geometry: Geometry, module: nn.Module):
        super().__init__(geometry)
        if not isinstance(module, nn.Module):
            raise BadType(f"module: expected a torch.nn.Module, got {type(module).__name__}",
                          param="module")
        self.module = module

    def forward(self, r):
        out = self.module(r)
        if out.shape != r.shape[: r.dim() - self.geometry.dim]:
            raise BadInput(
                f"module: returned shape {tuple(out.shape)} for rates {tuple(r.shape)}; "
                f"expected the batch shape {tuple(r.shape[: r.dim() - self.geometry.dim])}",
                param="module"
            )
        return out

    def config(self):
        raise BadType(
            "ModuleEnergy wraps an arbitrary module and cannot be rebuilt from a config; "
            "use MLPEnergy or save the module yourself"
        )


class MLPEnergy(InteractionEnergy):
    """A neural-network interaction energy ``F(r) = scale * MLP(r)`` (smooth softplus layers).

    With ``symmetric=True`` the network is averaged over the translations of the lattice of
    neurons, ``F(r) = scale/N sum_s MLP(roll_s r)``: invariant under every shift by whole
    neurons, so a fitted bump is a fixed point at every neuron (and, the bump being smooth, to
    high accuracy in between).

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    hidden : tuple of int
        Widths of the hidden layers.
    scale : float
        Output scale.
    seed : int
        Initialisation seed (weights ``N(0, 1/fan_in)``).
    symmetric : bool
        Average over neuron translations.
    """

    family = "mlp"

    def __init__(self, geometry: Geometry, hidden=(64, 64), scale: float = 1.0, seed: int = 0,
                 symmetric: bool = False):
        super().__init__(geometry)
        self.symmetric = bool(symmetric)
        self.hidden, self.scale_, self.seed = tuple(int(h) for h in hidden), float(scale), seed
        sizes = (geometry.size, *self.hidden, 1)
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1], dtype=torch.float64))
            if i < len(sizes) - 2:
                layers.append(nn.Softplus())
        self.net = nn.Sequential(*layers)
        gen = torch.Generator().manual_seed(check_int("seed", seed))
        with torch.no_grad():
            for layer in self.net:
                if isinstance(layer, nn.Linear):
                    layer.weight.normal_(0, 1 / math.sqrt(layer.in_features), generator=gen)
                    layer.bias.normal_(0, 0.1, generator=gen)

    def forward(self, r):
        g = self.geometry
        if not self.symmetric:
            x = _flat(r, g).to(torch.float64)
            return (self.scale_ * self.net(x)).squeeze(-1).to(r.dtype)
        x = r.to(torch.float64)
        rolls = []
        idx = torch.arange(g.size).reshape(g.shape)
        for s in range(g.size):
            shifts = tuple(int(v) for v in (idx == s).nonzero()[0])
            rolls.append(torch.roll(x, shifts, dims=g.axes).flatten(-g.dim))
        out = self.net(torch.stack(rolls, dim=-2)).squeeze(-1).mean(-1)
        return (self.scale_ * out).to(r.dtype)

    def config(self):
        return {"family": self.family, "hidden": list(self.hidden), "scale": self.scale_,
                "seed": self.seed, "symmetric": self.symmetric}
