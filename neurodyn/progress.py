"""Progress bars that appear only on a terminal: the one helper of :mod:`_runkit`."""

from _runkit import progress

__all__ = ["progress"]
