"""Exceptions and argument checks shared by the ``flows`` package.

Every check raises :class:`FlowsError` (a ``ValueError``) whose message names the parameter,
the value received and what is allowed, so that the command line can report it in one line.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np
import torch


class FlowsError(ValueError):
    """Invalid input to a ``flows`` function: names the parameter, the value and what is allowed."""


def check_choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the valid choices."""
    allowed = list(allowed)
    if value not in allowed:
        raise FlowsError(f"{name}={value!r} is not allowed; choose one of {', '.join(allowed)}")
    return value  # type: ignore[return-value]


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int if it is an integer >= 1, else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise FlowsError(f"{name}={value!r} is not allowed; it must be an integer >= 1")
    return int(value)


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        v = float("nan")
    if not np.isfinite(v) or v <= 0:
        raise FlowsError(f"{name}={value!r} is not allowed; it must be a finite number > 0")
    return v


def check_finite(name: str, x: torch.Tensor) -> torch.Tensor:
    """Raise if ``x`` holds NaN or infinite entries, giving the first offending row."""
    bad = ~torch.isfinite(x)
    if bad.any():
        row = int(bad.reshape(bad.shape[0], -1).any(dim=1).nonzero()[0, 0]) if x.ndim else 0
        raise FlowsError(
            f"{name} contains {int(bad.sum())} non-finite values (first in row {row}); "
            "only finite numbers are allowed"
        )
    return x


def derive_seed(seed: int, tag: str) -> int:
    """Derive an independent 63-bit seed from ``seed`` and a text ``tag`` (stable across runs)."""
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, zlib.crc32(tag.encode())])
    return int(state.generate_state(2, dtype=np.uint32).astype(np.uint64)[0]) | (
        int(state.generate_state(2, dtype=np.uint32)[1] & 0x7FFFFFFF) << 32
    )


def as_generator(seed: int | torch.Generator | None, name: str = "seed") -> torch.Generator:
    """Return a CPU ``torch.Generator``: the one given, or a new one seeded with ``seed``.

    ``None`` is refused: every stochastic function in ``flows`` needs an explicit seed.
    """
    if isinstance(seed, torch.Generator):
        return seed
    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise FlowsError(f"{name}={seed!r} is not allowed; pass an int seed or a torch.Generator")
    g = torch.Generator()
    g.manual_seed(int(seed))
    return g


def numpy_rng(generator: torch.Generator) -> np.random.Generator:
    """A NumPy generator seeded from (and advancing) a torch generator."""
    s = torch.randint(0, 2**62, (2,), generator=generator)
    return np.random.default_rng([int(s[0]), int(s[1])])
