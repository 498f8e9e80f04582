"""Run a CLI with Ctrl-C delivered inside llvmlite's callback while numba compiles.

``python tests/interrupt_hook.py PROG MODULE:FUNCTION ARGS...`` runs ``PROG`` (``neurodyn`` or
``flows``) with ``ARGS``; the first call of ``MODULE.FUNCTION`` (work done after a run's loop)
first compiles a fresh numba function, and the process sends itself SIGINT from the object-code
callback llvmlite calls (through ctypes) during that compile. The Python signal handler then
runs inside the ctypes callback, where a ``KeyboardInterrupt`` is printed as "Exception ignored
on calling ctypes callback" and dropped: the interrupt the tests check for.
"""

import functools
import importlib
import os
import signal
import sys

from numba.core import codegen

_armed = {"on": False, "sent": 0}
_original_hook = codegen.CPUCodeLibrary._object_compiled_hook.__func__


def _hook(cls, ll_module, buf):
    if _armed["on"]:
        _armed["on"] = False
        _armed["sent"] += 1
        os.kill(os.getpid(), signal.SIGINT)
    return _original_hook(cls, ll_module, buf)


codegen.CPUCodeLibrary._object_compiled_hook = classmethod(_hook)


def _compile_fresh() -> None:
    import numba

    @numba.njit(cache=False)
    def fresh(n):
        s = 0.0
        for i in range(n):
            s += i * 0.5
        return s

    _armed["on"] = True
    fresh(3)
    if _armed["sent"] != 1:
        raise AssertionError("the numba compile did not pass through the object-code callback")


def _wrap(target: str) -> None:
    module_name, name = target.split(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    @functools.wraps(original)
    def wrapped(*args, **kwargs):
        if not _armed["sent"]:
            _compile_fresh()
        return original(*args, **kwargs)

    setattr(module, name, wrapped)


def main() -> int:
    prog, target, *argv = sys.argv[1:]
    _wrap(target)
    if prog == "neurodyn":
        from neurodyn.cli import main as cli
    else:
        from flows.cli.commands import main as cli
    return cli(argv)


if __name__ == "__main__":
    sys.exit(main())
