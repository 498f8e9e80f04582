"""How a library call runs: its torch threads, its Ctrl-C and its progress bar.

Nothing here belongs to the command lines: the library's long loops call
:func:`check_interrupt` and :func:`progress`, and its entry points are wrapped by
:func:`with_threads`; :func:`_runkit.cli.cli_main` enters :func:`catch_interrupts` around a
command and sets the command's ``--threads`` with :func:`set_threads`.

Threads of library calls
------------------------
:func:`with_threads` gives a library function (``neurodyn.fit``, ``flows.train``, ...) a keyword
``threads``: the call runs with that many torch CPU threads and puts the caller's count back
afterwards. The default, :data:`DEFAULT_THREADS` (1, the command lines' ``--threads`` default),
is the fastest at the sizes these libraries work at; inside another such call the enclosing
call's choice is kept. :func:`set_threads` is the one place that sets torch's count (a command's
``--threads``, a sweep cell, a wrapped call).

Ctrl-C that is not lost in native code
--------------------------------------
SIGINT is recorded in a flag as well as raised. Python runs a signal handler at the next
bytecode of the main thread. When SIGINT arrives while native code runs (numba compiling through
llvmlite, a C library), that next bytecode can be a ``ctypes`` callback, and a
``KeyboardInterrupt`` raised there is printed as "Exception ignored on calling ctypes callback"
and dropped: the run goes on and would end with exit 0.

Inside ``with catch_interrupts():`` (entered by :func:`_runkit.cli.cli_main`) the SIGINT handler
first sets a flag, then raises ``KeyboardInterrupt`` as usual; the dropped exception's report on
stderr is left out (the run's one line says what happened). Long work calls
:func:`check_interrupt` after each unit of work (a fit step, the evaluation after a loop), which
raises ``KeyboardInterrupt`` again if the flag is set, so a dropped interrupt still ends the run
with its checkpoint saved; ``cli_main`` checks the flag once more before returning 0.

Outside the block, outside the main thread, or when SIGINT is ignored (``SIG_IGN``) or handled
by someone else, nothing changes and :func:`check_interrupt` never raises.

The progress bar
----------------
:func:`progress` is the one progress bar of long loops (fits, trainings, sweeps): tqdm on stderr
when it is a terminal (and the ``progress`` extra is installed), a silent stand-in with the
same methods otherwise; in a Jupyter kernel it is ``tqdm.auto``'s bar (a widget when ipywidgets is
installed), on by default and kept when finished.

Examples
--------
>>> with catch_interrupts():
...     interrupted()
False
>>> check_interrupt("nothing pending")  # no SIGINT arrived: returns None
>>> bar = progress(total=10, initial=2, desc="train", enabled=False)
>>> bar.update(3); bar.set_postfix_str("loss 0.1"); bar.close()
>>> bar.n
5
>>> [x for x in progress(range(3), enabled=False)]
[0, 1, 2]
>>> import torch
>>> @with_threads
... def count():
...     return torch.get_num_threads()
>>> before = torch.get_num_threads()
>>> count(), count(threads=2), torch.get_num_threads() == before
(1, 2, True)
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from .errors import BadInput
from .notebook import in_notebook

__all__ = ["DEFAULT_THREADS", "MAX_THREADS", "set_threads", "with_threads", "catch_interrupts",
           "interrupted", "check_interrupt", "progress"]

#: torch CPU threads of a library call that names none (the command lines' ``--threads`` default)
DEFAULT_THREADS = 1
#: the most threads a call may ask for (OpenMP aborts the process on a count far above the cores)
MAX_THREADS = 1024
_threads_chosen = threading.local()


def set_threads(threads: int, name: str = "threads") -> int:
    """Set torch's CPU threads to ``threads``, an integer in [1, :data:`MAX_THREADS`]; return it.

    Raises
    ------
    BadInput
        ``threads`` is not an integer in that range (the message names ``name``).

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> set_threads(1), torch.get_num_threads()
    (1, 1)
    >>> set_threads(0, "--threads")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: --threads=0 is not allowed; it must be an integer in [1, 1024]
    >>> _ = set_threads(before)
    """
    if (isinstance(threads, bool) or not isinstance(threads, int)
            or not 1 <= threads <= MAX_THREADS):
        raise BadInput(f"{name}={threads!r} is not allowed; it must be an integer in "
                       f"[1, {MAX_THREADS}]", param=name.lstrip("-").replace("-", "_"))
    _apply_threads(threads)
    return threads


def _apply_threads(threads: int) -> None:
    """The one call that changes torch's CPU threads (nothing when already ``threads``)."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


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

    def refresh(self) -> None:
        """Nothing to draw."""

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
        Force on or off; by default on when stderr is a terminal or the call runs in a Jupyter
        kernel, and tqdm is installed.

    Returns
    -------
    tqdm or stand-in
        Supports ``update``, ``set_postfix_str``, ``set_postfix``, ``close``, iteration and
        ``with``. In a Jupyter kernel the bar is ``tqdm.auto``'s and stays when finished.
    """
    notebook = in_notebook()
    if enabled is None:
        enabled = notebook or sys.stderr.isatty()
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:  # the optional "progress" extra is not installed
            return _Silent(iterable, total, initial)
        if notebook:
            return _notebook_bar(tqdm)(iterable, total=total, initial=initial, desc=desc,
                                       leave=True)
        return tqdm(iterable, total=total, initial=initial, desc=desc, file=sys.stderr,
                    leave=False, dynamic_ncols=True)
    return _Silent(iterable, total, initial)



def _notebook_bar(text_bar):
    """``tqdm.auto``'s bar class where ipywidgets is installed (a widget), else ``text_bar``
    (text on the cell's stderr) instead of tqdm.auto's warning about missing widgets."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
    except ImportError:
        return text_bar
    return tqdm



def with_threads(func):
    """``func`` with a keyword-only argument ``threads`` (torch CPU threads during the call).

    ``threads=None`` means :data:`DEFAULT_THREADS`, or the count an enclosing call of such a
    function chose; the caller's ``torch.get_num_threads()`` is restored when the call returns
    or raises. A count that is not an integer in [1, 1024] raises
    :class:`~_runkit.errors.BadInput` naming ``threads``.

    Parameters
    ----------
    func : callable
        The library function.

    Returns
    -------
    callable
        The wrapped function (same name, docstring and module; its signature shows
        ``threads``).
    """

    @functools.wraps(func)
    def wrapper(*args, threads: int | None = None, **kwargs):
        import torch

        outer = getattr(_threads_chosen, "depth", 0)
        if threads is None and outer:
            return func(*args, **kwargs)
        if threads is None:
            threads = DEFAULT_THREADS
        before = torch.get_num_threads()
        set_threads(threads)
        _threads_chosen.depth = outer + 1
        try:
            return func(*args, **kwargs)
        finally:
            _threads_chosen.depth = outer
            _apply_threads(before)

    sig = inspect.signature(func)
    extra = inspect.Parameter("threads", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="int | None")
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    wrapper.__signature__ = sig.replace(parameters=[*params[:at], extra, *params[at:]])
    return wrapper
