"""Velocity modules a user might write (imported by path in the tests: 'flows_user_models:...')."""

import torch
from torch import nn


class SeluMLP(nn.Module):
    """depth x hidden SELU MLP on [x, t]."""

    def __init__(self, dim: int = 2, hidden: int = 64, depth: int = 3):
        super().__init__()
        layers, width = [], dim + 1
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SELU()]
            width = hidden
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], 1))


class ConditionalMLP(nn.Module):
    """An MLP on [x, t, embedding(c)] with an embedding row for the null label."""

    def __init__(self, dim: int = 2, classes: int = 2, hidden: int = 32):
        super().__init__()
        self.embed = nn.Embedding(classes + 1, 8)
        self.net = nn.Sequential(nn.Linear(dim + 9, hidden), nn.SELU(), nn.Linear(hidden, dim))

    def forward(self, x, t, c):
        return self.net(torch.cat([x, t, self.embed(c)], 1))


class NotAModule:
    """Refused by the model loader."""
