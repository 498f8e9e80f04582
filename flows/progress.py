"""The progress bar of the run contract (:func:`_runkit.progress`), under its older flows name."""

from __future__ import annotations

from _runkit import progress


def progress_bar(total: int, initial: int = 0, desc: str = "", enabled: bool | None = None):
    """A tqdm bar on stderr when it is a terminal, else a silent stand-in.

    >>> bar = progress_bar(10, 2, "train", enabled=False); bar.update(1); bar.n
    3
    """
    return progress(total=total, initial=initial, desc=desc, enabled=enabled)
