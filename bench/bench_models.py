"""A velocity network as a user would write it, for the benchmarks ('bench_models:SeluMLP')."""

import torch
from torch import nn


class SeluMLP(nn.Module):
    """``depth`` hidden layers of ``hidden`` SELU units on [x, t]; forward(x (B, d), t (B, 1))."""

    def __init__(self, dim: int = 2, hidden: int = 64, depth: int = 3):
        super().__init__()
        layers, width = [], dim + 1
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SELU()]
            width = hidden
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, t], 1))
