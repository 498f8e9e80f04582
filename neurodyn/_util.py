"""Small private helpers shared by neurodyn's modules: array conversion and checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from _runkit import BadInput, BadType

from .network import HopfieldNetwork


def to_numpy(x: Any) -> np.ndarray:
    """A tensor (detached, on the CPU) or array-like as an ndarray."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def check_int(value: Any, name: str, low: int) -> int:
    """``value`` as an int, which must be ``>= low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise BadType(f"{name}={value!r}: must be an int >= {low}", param=name)
    if value < low:
        raise BadInput(f"{name}={value}: must be an int >= {low}", param=name)
    return int(value)


def require_manifold(network: HopfieldNetwork):
    """The network's target manifold (an error when it has none)."""
    if not isinstance(network, HopfieldNetwork):
        raise BadType(f"network: expected a HopfieldNetwork, got {type(network).__name__}",
                      param="network")
    if network.manifold is None:
        raise BadInput("network: has no target manifold; build it with one (fit does)",
                       param="network")
    return network.manifold
