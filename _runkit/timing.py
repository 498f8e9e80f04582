"""Wall and CPU seconds of a piece of work: the one timer of the demo and bench scripts.

>>> clock = Stopwatch()
>>> _ = sum(range(1000))
>>> clock.stop().wall_s >= 0 and clock.cpu_s >= 0
True
>>> value, clock = timed(sorted, [3, 1, 2])
>>> value, clock.wall_s >= 0
([1, 2, 3], True)
"""

from __future__ import annotations

import time


class Stopwatch:
    """Started when made; ``wall_s`` and ``cpu_s`` (this process's CPU seconds) read the time so
    far until :meth:`stop`, the stopped time after. Also a context manager that stops on exit.
    """

    def __init__(self) -> None:
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        self._wall: float | None = None
        self._cpu: float | None = None

    def stop(self) -> Stopwatch:
        """Stop the clock (once; a second call keeps the first stop) and return it."""
        if self._wall is None:
            self._wall = time.perf_counter() - self._wall0
            self._cpu = time.process_time() - self._cpu0
        return self

    @property
    def wall_s(self) -> float:
        """Wall seconds since the start (to the stop, once stopped)."""
        return self._wall if self._wall is not None else time.perf_counter() - self._wall0

    @property
    def cpu_s(self) -> float:
        """CPU seconds of this process since the start (to the stop, once stopped)."""
        return self._cpu if self._cpu is not None else time.process_time() - self._cpu0

    def __enter__(self) -> Stopwatch:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), its stopped Stopwatch)``."""
    clock = Stopwatch()
    value = fn(*args, **kwargs)
    return value, clock.stop()
