"""Progress bar on a terminal: tqdm when it is installed and stderr is a TTY, else nothing."""

from __future__ import annotations

import sys


class _NoBar:
    def update(self, n: int = 1) -> None:
        """Ignore progress."""

    def set_postfix_str(self, s: str) -> None:
        """Ignore the status text."""

    def close(self) -> None:
        """Nothing to close."""


def progress_bar(total: int, initial: int = 0, desc: str = "", enabled: bool | None = None):
    """A tqdm bar writing to stderr, or a silent stand-in.

    ``enabled=None`` shows the bar only when stderr is a terminal and tqdm is importable.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, initial=initial, desc=desc, file=sys.stderr, leave=False)
