"""The one progress bar: tqdm on stderr when it is a terminal, a silent stand-in otherwise.

Examples
--------
>>> bar = progress(total=10, initial=2, desc="train", enabled=False)
>>> bar.update(3); bar.set_postfix_str("loss 0.1"); bar.close()
>>> bar.n
5
>>> [x for x in progress(range(3), enabled=False)]
[0, 1, 2]
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress"]


class _Silent:
    """Same calls as a tqdm bar; counts but shows nothing."""

    def __init__(self, iterable: Iterable | None, total: int | None, initial: int):
        self._it = iterable
        self.total = total
        self.n = initial

    def __iter__(self) -> Iterator:
        for item in self._it if self._it is not None else ():
            yield item
            self.n += 1

    def update(self, n: int = 1) -> None:
        """Advance the count by ``n``."""
        self.n += n

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Ignore the status text."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Ignore the status values."""

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        """Ignore the label."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False


def progress(iterable: Iterable | None = None, *, total: int | None = None, initial: int = 0,
             desc: str = "", enabled: bool | None = None):
    """A progress bar on stderr, or a silent stand-in with the same methods.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate; None for a bar driven by ``update(n)``.
    total : int, optional
        Number of items (steps) in all.
    initial : int
        Count already done (a resumed run).
    desc : str
        Label.
    enabled : bool, optional
        Force on or off; by default on only when stderr is a terminal and tqdm is installed.

    Returns
    -------
    tqdm or stand-in
        Supports ``update``, ``set_postfix_str``, ``set_postfix``, ``close``, iteration and
        ``with``.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:  # the optional "progress" extra is not installed
            return _Silent(iterable, total, initial)
        return tqdm(iterable, total=total, initial=initial, desc=desc, file=sys.stderr,
                    leave=False, dynamic_ncols=True)
    return _Silent(iterable, total, initial)
