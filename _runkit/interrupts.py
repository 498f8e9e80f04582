"""Ctrl-C that is not lost in native code: SIGINT is recorded in a flag as well as raised.

Python runs a signal handler at the next bytecode of the main thread. When SIGINT arrives
while native code runs (numba compiling through llvmlite, a C library), that next bytecode can
be a ``ctypes`` callback, and a ``KeyboardInterrupt`` raised there is printed as "Exception
ignored on calling ctypes callback" and dropped: the run goes on and would end with exit 0.

Inside ``with catch_interrupts():`` (entered by :func:`_runkit.cli.cli_main`) the SIGINT
handler first sets a flag, then raises ``KeyboardInterrupt`` as usual; the dropped exception's
report on stderr is left out (the run's one line says what happened). Long work calls
:func:`check_interrupt` after each unit of work (a fit step, the evaluation after a loop), which
raises ``KeyboardInterrupt`` again if the flag is set, so a dropped interrupt still ends the run
with its checkpoint saved; ``cli_main`` checks the flag once more before returning 0.

Outside the block, outside the main thread, or when SIGINT is ignored (``SIG_IGN``) or handled
by someone else, nothing changes and :func:`check_interrupt` never raises.

Examples
--------
>>> with catch_interrupts():
...     interrupted()
False
>>> check_interrupt("nothing pending")  # no SIGINT arrived: returns None
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

__all__ = ["catch_interrupts", "interrupted", "check_interrupt"]

_state = {"hit": False}


def _on_sigint(signum, frame):
    _state["hit"] = True
    raise KeyboardInterrupt


def _quiet_unraisable(previous):
    """A ``sys.unraisablehook`` that drops the recorded interrupt (its report would be a
    traceback besides the one line) and passes everything else to ``previous``."""

    def hook(unraisable):
        if _state["hit"] and issubclass(unraisable.exc_type, KeyboardInterrupt):
            return
        previous(unraisable)

    return hook


@contextlib.contextmanager
def catch_interrupts() -> Iterator[None]:
    """Within the block SIGINT sets the flag read by :func:`interrupted` and raises.

    The flag is cleared on entry and the previous handler restored on exit. Nested blocks
    leave the outer one in charge.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    _state["hit"] = False
    previous_hook = sys.unraisablehook
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_unraisable(previous_hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = previous_hook


def interrupted() -> bool:
    """Whether SIGINT arrived inside the current :func:`catch_interrupts` block."""
    return _state["hit"] and signal.getsignal(signal.SIGINT) is _on_sigint


def check_interrupt(message: str = "") -> None:
    """Raise ``KeyboardInterrupt(message)`` if SIGINT arrived (see :func:`interrupted`).

    Call it after a unit of work whose own ``KeyboardInterrupt`` may have been dropped in a
    native callback; the caller's usual interrupt handling (save the checkpoint, say what it
    holds) then runs.
    """
    if interrupted():
        raise KeyboardInterrupt(message)
