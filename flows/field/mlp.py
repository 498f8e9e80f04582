"""Examples of velocity networks written as a user writes one: plain ``nn.Module`` classes with
``forward(x (B, d), t (B, 1)[, c (B,)]) -> (B, d)``, named by their import path.

>>> import flows, torch
>>> cfg = flows.TrainConfig(data="moons", model="flows.field.mlp:SeluMLP",
...                         model_args={"hidden": 16}, steps=3, batch=32, n_train=64, n_eval=8)
>>> field = flows.train(cfg, progress=False).field
>>> tuple(field(torch.zeros(5, 2), torch.zeros(5, 1)).shape)
(5, 2)

Your own class goes in your own package and is named the same way,
``"your_package.your_module:YourClass"``; a model file naming it is loaded only with
``trust=["your_package.your_module"]`` (``--trust-module``), since importing a module runs its
code (the library's own modules, these included, need no trust).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SeluMLP", "ConditionalMLP"]


class SeluMLP(nn.Module):
    """``depth`` SELU layers of ``hidden`` units on ``[x, t]``.

    Parameters
    ----------
    dim : int
        Data dimension d.
    hidden : int
        Units per hidden layer.
    depth : int
        Hidden layers.
    """

    def __init__(self, dim: int = 2, hidden: int = 64, depth: int = 3):
        super().__init__()
        layers, width = [], dim + 1
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SELU()]
            width = hidden
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``v(x, t)``: x of shape (B, d), t of shape (B, 1); returns (B, d)."""
        return self.net(torch.cat([x, t], 1))


class ConditionalMLP(nn.Module):
    """An MLP on ``[x, t, embedding(c)]`` with an embedding row for the null label ``K``.

    Parameters
    ----------
    dim : int
        Data dimension d.
    classes : int
        Number K of classes (labels 0..K-1; K is "no label").
    hidden : int
        Units of the hidden layer.
    """

    def __init__(self, dim: int = 2, classes: int = 2, hidden: int = 32):
        super().__init__()
        self.embed = nn.Embedding(classes + 1, 8)
        self.net = nn.Sequential(nn.Linear(dim + 9, hidden), nn.SELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """``v(x, t, c)``: x (B, d), t (B, 1), c int64 (B,) in 0..K; returns (B, d)."""
        return self.net(torch.cat([x, t, self.embed(c)], 1))
