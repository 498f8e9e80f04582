"""The three outcomes of a run besides success, and the exit code of each.

=====================  =========  ==========================================================
exception              exit code  meaning
=====================  =========  ==========================================================
:class:`BadInput`      2          an argument, file or size was refused before work started
:class:`RunFailed`     1          the run started and could not produce a valid result
:class:`Diverged`      1          a state or loss left its sane range (a :class:`RunFailed`)
``KeyboardInterrupt``  130        interrupted (Ctrl-C); its message says what was saved
=====================  =========  ==========================================================

Ctrl-C while a command line is still importing (before ``main()`` runs) also ends it with
130 and one line: this module, imported first by :mod:`_runkit`, guards the start
(:func:`guard_start`).

Examples
--------
>>> issubclass(BadInput, ValueError), issubclass(Diverged, RunFailed)
(True, True)
>>> err = Diverged("loss 3.2e+14 at step 12; lower lr (now 1e+06)", step=12, parameter="lr")
>>> err.step, err.parameter, exit_code(err)
(12, 'lr', 1)

Every one survives pickling (type, message and attributes), whatever its ``__init__`` takes:

>>> import pickle
>>> back = pickle.loads(pickle.dumps(err))
>>> type(back).__name__, str(back), back.step, back.parameter
('Diverged', 'loss 3.2e+14 at step 12; lower lr (now 1e+06)', 12, 'lr')
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["BadInput", "BadType", "RunFailed", "Diverged", "EXIT_OK", "EXIT_FAILED",
           "EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "exit_code", "guard_start", "release_start"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def _rebuild(cls: type, args: tuple, state: dict) -> BaseException:
    """Unpickle an exception without calling its ``__init__``: its ``args`` and attributes."""
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(state)
    return err


class _Picklable:
    """Pickles as its type, ``args`` and attributes, so a subclass whose ``__init__`` takes
    other arguments than the message (``NonFiniteStateError(time, step, ...)``) still
    unpickles: exceptions travel between processes (the Dask workers of a sweep)."""

    def __reduce__(self):
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class BadInput(_Picklable, ValueError):
    """Refused input: the message names the parameter, the value received and what is allowed.

    A ``ValueError`` so that callers catching that keep working; the command lines tell the
    two apart (``BadInput`` exits 2, any other ``ValueError`` is a bug and exits 1).

    Parameters
    ----------
    message : str
        ``"kappa=-1.0 is not allowed; it must be > 0"``.
    param : str or None
        The parameter at fault (``"kappa"``), for a caller that must say which of its own
        options it came from (the command lines name ``--kappa``); None when no single
        parameter is.

    Examples
    --------
    >>> err = BadInput("kappa=-1.0 is not allowed; it must be > 0", param="kappa")
    >>> err.param, str(err), isinstance(err, ValueError)
    ('kappa', 'kappa=-1.0 is not allowed; it must be > 0', True)
    >>> BadInput("no command given").param is None
    True
    """

    def __init__(self, *args: object, param: str | None = None):
        super().__init__(*args)
        self.param = param


class BadType(BadInput, TypeError):
    """Refused input of the wrong type (a :class:`BadInput` that is also a ``TypeError``, so
    that callers catching that keep working).

    >>> err = BadType("box=1.0 is not allowed; it must be a Box", param="box")
    >>> isinstance(err, BadInput), isinstance(err, TypeError), exit_code(err)
    (True, True, 2)
    """


class RunFailed(_Picklable, RuntimeError):
    """A run that started but could not produce a valid result (exit code 1)."""


class Diverged(RunFailed):
    """A state or loss left its sane range (non-finite, or finite but exploding).

    Parameters
    ----------
    message : str
        Names the time or step where it happened and the parameter to change.
    step : int or None
        Step (or time index) at which the divergence was detected.
    parameter : str or None
        The parameter whose value is the usual cause (e.g. ``"lr"``, ``"dt"``).
    """

    def __init__(self, message: str, *, step: int | None = None, parameter: str | None = None):
        super().__init__(message)
        self.step = step
        self.parameter = parameter


def exit_code(err: BaseException) -> int:
    """The documented exit code of an exception: 2 bad input, 130 interrupted, 1 otherwise.

    >>> exit_code(BadInput("n=-1 is not allowed")), exit_code(KeyboardInterrupt())
    (2, 130)
    >>> exit_code(ZeroDivisionError())
    1
    """
    if isinstance(err, BadInput):
        return EXIT_BAD_INPUT
    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_FAILED


#: the programs whose start is guarded by :func:`guard_start` (their console scripts' names)
PROGRAMS = ("neurodyn", "flows")


def _program() -> str | None:
    """``neurodyn`` or ``flows`` when this process runs that command line, else None."""
    name = os.path.basename(sys.argv[0] if sys.argv else "").lower()
    for suffix in (".exe", "-script.py"):
        name = name.removesuffix(suffix)
    if name in PROGRAMS:
        return name
    argv = list(getattr(sys, "orig_argv", ()))
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1] in {f"{p}.cli" for p in PROGRAMS}:
        return argv[argv.index("-m") + 1].split(".")[0]
    return None


def _interrupted_while_starting(signum, frame):
    """SIGINT before ``main()`` runs: one line and exit 130 instead of an import traceback."""
    print(f"{_program() or 'run'}: interrupted while starting; nothing was run", file=sys.stderr)
    raise SystemExit(EXIT_INTERRUPTED)


def guard_start() -> None:
    """Make Ctrl-C during a command line's imports end it with one line and exit 130.

    Called when :mod:`_runkit` is first imported, before numpy and the rest: in a process
    running the ``neurodyn`` or ``flows`` command line whose SIGINT has Python's default
    handler, SIGINT then prints one line and raises ``SystemExit(130)``. ``cli_main`` puts
    the default handler back (see :func:`release_start`). Any other process (a library user,
    a notebook, tests) is left as it is.

    >>> guard_start()  # not a command line: nothing changes
    >>> signal.getsignal(signal.SIGINT) is signal.default_int_handler
    True
    """
    if (_program() is not None and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, _interrupted_while_starting)


def release_start() -> None:
    """Put Python's default SIGINT handler back if :func:`guard_start` replaced it."""
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


guard_start()
