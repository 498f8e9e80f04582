"""The three outcomes of a run besides success, and the exit code of each.

=====================  =========  ==========================================================
exception              exit code  meaning
=====================  =========  ==========================================================
:class:`BadInput`      2          an argument, file or size was refused before work started
:class:`RunFailed`     1          the run started and could not produce a valid result
:class:`Diverged`      1          a state or loss left its sane range (a :class:`RunFailed`)
``KeyboardInterrupt``  130        interrupted (Ctrl-C); its message says what was saved
=====================  =========  ==========================================================

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

__all__ = ["BadInput", "RunFailed", "Diverged", "EXIT_OK", "EXIT_FAILED", "EXIT_BAD_INPUT",
           "EXIT_INTERRUPTED", "exit_code"]

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
    """Refused input: the message names the parameter, the value received and what is allowed."""


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
