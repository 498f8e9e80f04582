"""Progress bars that appear only on a terminal (tqdm when installed, nothing otherwise)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress"]


class _Silent:
    def __init__(self, iterable: Iterable | None):
        self._it = iterable

    def __iter__(self) -> Iterator:
        return iter(self._it if self._it is not None else ())

    def update(self, n: int = 1) -> None:
        """No-op."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """No-op."""

    def close(self) -> None:
        """No-op."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "",
             enabled: bool | None = None, initial: int = 0):
    """Wrap ``iterable`` in a progress bar on stderr when it is a terminal.

    Parameters
    ----------
    iterable : what to iterate (or None for a manual bar driven by ``update``).
    total : number of items, when ``iterable`` has no length.
    desc : label.
    enabled : force on/off; by default on only when stderr is a terminal and tqdm is installed.
    initial : starting count (for resumed work).
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if enabled:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # optional extra not installed
            return _Silent(iterable)
        return tqdm(iterable, total=total, desc=desc, initial=initial, leave=False,
                    dynamic_ncols=True)
    return _Silent(iterable)
