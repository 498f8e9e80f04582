"""Seeds: the one check and the one derivation of independent seeds, for both packages.

A seed is an integer in ``[0, 2**63)`` (booleans, floats and other types are refused, naming the
parameter). Derived seeds come from NumPy's :class:`~numpy.random.SeedSequence`, whose entropy is
the seed's low 32 bits, then the words that say what the seed is for, then the seed's high 32
bits when they are not zero. Every seed below ``2**32`` therefore keeps the streams it always had
(the high word is left out), and seeds that differ anywhere in their 63 bits give different
streams: ``0`` and ``2**32`` are two runs, not one.

Examples
--------
>>> derive_seed(7, "init") == derive_seed(7, "init") != derive_seed(7, "splits")
True
>>> derive_seed(0, "init") != derive_seed(2**32, "init")
True
>>> child_seeds(0, 3) == child_seeds(0, 3), child_seeds(0, 2) != child_seeds(2**32, 2)
(True, True)
>>> check_seed("seed", 1.0)
Traceback (most recent call last):
...
_runkit.errors.BadInput: seed=1.0 is not allowed; it must be an integer in [0, 9223372036854775807]
"""

from __future__ import annotations

import zlib

import numpy as np

from .checks import check_int

__all__ = ["SEED_MAX", "check_seed", "seed_sequence", "derive_seed", "child_seeds"]

SEED_MAX = 2**63 - 1
"""The largest seed (seeds are 63-bit non-negative integers, as the command lines take)."""


def check_seed(name: str, value: object) -> int:
    """Return ``value`` as an int if it is an integer seed in ``[0, SEED_MAX]``.

    >>> check_seed("seed", 2**32)
    4294967296
    >>> check_seed("seed", True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: seed=True is not allowed; it must be an integer in [0, 92233...]
    """
    return check_int(name, value, lo=0, hi=SEED_MAX)


def seed_sequence(seed: int, *words: int, name: str = "seed") -> np.random.SeedSequence:
    """The seed sequence of ``seed`` for the purpose named by ``words`` (32-bit integers).

    Entropy ``[low, *words]``, with ``high`` appended when it is not zero (``seed = low +
    2**32 high``); without ``words`` this is ``SeedSequence(seed)`` itself.

    >>> s = seed_sequence(2**32 + 5)
    >>> bool((s.generate_state(4) == np.random.SeedSequence(2**32 + 5).generate_state(4)).all())
    True
    """
    seed = check_seed(name, seed)
    high = seed >> 32
    return np.random.SeedSequence([seed & 0xFFFFFFFF, *words] + ([high] if high else []))


def derive_seed(seed: int, tag: str) -> int:
    """An independent 63-bit seed from ``seed`` and a text ``tag`` (stable across runs).

    Parameters
    ----------
    seed : int
        The seed, in ``[0, SEED_MAX]``.
    tag : str
        What the derived seed is for (``"init"``, ``"splits"``, ...).

    Returns
    -------
    int
        A seed in ``[0, 2**63)``.

    >>> derive_seed(0, "init")
    5356707271184172020
    """
    words = seed_sequence(seed, zlib.crc32(tag.encode())).generate_state(2, dtype=np.uint32)
    return int(words[0]) | (int(words[1] & 0x7FFFFFFF) << 32)


def child_seeds(seed: int, count: int) -> list[int]:
    """``count`` independent 32-bit seeds derived from ``seed`` (no shared random streams).

    Parameters
    ----------
    seed : int
        The seed, in ``[0, SEED_MAX]``.
    count : int
        How many seeds, ``>= 0``.

    Returns
    -------
    list of int
        Seeds in ``[0, 2**32)``, one per child of the seed's sequence.

    >>> child_seeds(0, 2)
    [3757552657, 673228719]
    """
    children = seed_sequence(seed).spawn(check_int("count", count, lo=0))
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]
