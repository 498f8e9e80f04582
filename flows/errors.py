"""Exceptions, argument checks and seeds of the ``flows`` package.

The exceptions and the generic checks are those of the shared run contract (:mod:`_runkit`):
``FlowsError`` is :class:`_runkit.BadInput` (a ``ValueError``, exit code 2 on the command line),
and every check's message names the parameter, the value received and what is allowed.
This module adds the tensor check :func:`check_finite` and :func:`as_generator`; seeds are checked
and derived by :mod:`_runkit.seeds` (:func:`derive_seed`, ``SEED_MAX``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from _runkit import (
    BadInput,
    Diverged,
    RunFailed,
    check_choice,
    check_float,
    check_int,
    check_memory,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from _runkit.seeds import SEED_MAX, check_seed, derive_seed

# torch is imported where a tensor is made: the command line's parser imports this module and
# must start without it
if TYPE_CHECKING:
    import torch

FlowsError = BadInput
"""Invalid input to a ``flows`` function (the same class as :class:`_runkit.BadInput`)."""

__all__ = ["FlowsError", "BadInput", "RunFailed", "Diverged", "check_choice", "check_float",
           "check_int", "check_memory", "check_nonnegative", "check_positive",
           "check_positive_int", "check_finite", "check_seed", "derive_seed", "as_generator",
           "numpy_rng", "SEED_MAX"]


def check_finite(name: str, x: torch.Tensor) -> torch.Tensor:
    """Raise if ``x`` holds NaN or infinite entries, giving the first offending row.

    >>> import torch
    >>> check_finite("x", torch.tensor([[0.0], [float("nan")]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: x contains 1 non-finite values (first in row 1); only finite ...
    """
    import torch

    bad = ~torch.isfinite(x)
    if bad.any():
        row = int(bad.reshape(bad.shape[0], -1).any(dim=1).nonzero()[0, 0]) if x.ndim else 0
        raise BadInput(
            f"{name} contains {int(bad.sum())} non-finite values (first in row {row}); "
            "only finite numbers are allowed"
        )
    return x


def as_generator(seed: int | torch.Generator | None, name: str = "seed") -> torch.Generator:
    """Return a CPU ``torch.Generator``: the one given, or a new one seeded with ``seed``.

    ``None`` is refused: every stochastic function in ``flows`` needs an explicit seed, an
    integer in ``[0, SEED_MAX]`` (:func:`_runkit.seeds.check_seed`).

    >>> as_generator(3).initial_seed()
    3
    """
    import torch

    if isinstance(seed, torch.Generator):
        return seed
    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise BadInput(f"{name}={seed!r} is not allowed; pass an int seed or a torch.Generator")
    g = torch.Generator()
    g.manual_seed(check_seed(name, seed))
    return g


def numpy_rng(generator: torch.Generator) -> np.random.Generator:
    """A NumPy generator seeded from (and advancing) a torch generator.

    >>> isinstance(numpy_rng(as_generator(0)), np.random.Generator)
    True
    """
    import torch

    s = torch.randint(0, 2**62, (2,), generator=generator)
    return np.random.default_rng([int(s[0]), int(s[1])])
