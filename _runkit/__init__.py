"""The run contract shared by ``neurodyn`` and ``flows`` (private: its users are the two CLIs).

One implementation of: exceptions and exit codes (:mod:`~_runkit.errors`), input checks that
name the parameter (:mod:`~_runkit.checks`), registries of named choices
(:mod:`~_runkit.registry`), atomic writes, the one JSON writer and the safe torch loader
(:mod:`~_runkit.files`), locked run directories with one ``config.json`` shape
(:mod:`~_runkit.rundir`), the progress bar (:mod:`~_runkit.progress`), the ``main()`` wrapper
(:mod:`~_runkit.cli`), Ctrl-C that survives native code (:mod:`~_runkit.interrupts`) and typed
results (:mod:`~_runkit.results`).

Examples
--------
>>> import _runkit as rk
>>> rk.check_positive_int("n", 5)
5
>>> rk.exit_code(rk.Diverged("loss exploded at step 3; lower lr", step=3, parameter="lr"))
1
"""

from .checks import (
    check_array,
    check_choice,
    check_float,
    check_int,
    check_memory,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .cli import cli_main
from .errors import BadInput, Diverged, RunFailed, exit_code
from .files import (
    atomic_torch_save,
    atomic_write_bytes,
    atomic_write_text,
    read_json,
    safe_torch_load,
    to_jsonable,
    write_json,
)
from .interrupts import check_interrupt
from .progress import progress
from .registry import Registry
from .results import Result, artifact
from .rundir import RunDir

__all__ = [
    "BadInput", "Diverged", "Registry", "Result", "RunDir", "RunFailed", "artifact",
    "atomic_torch_save", "atomic_write_bytes", "atomic_write_text", "check_array",
    "check_interrupt",
    "check_choice", "check_float", "check_int", "check_memory", "check_nonnegative",
    "check_positive", "check_positive_int", "cli_main", "exit_code", "progress", "read_json",
    "safe_torch_load", "to_jsonable", "write_json",
]
