"""The run contract shared by ``neurodyn`` and ``flows`` (private: its users are the two CLIs).

One implementation of: exceptions and exit codes (:mod:`~_runkit.errors`), input checks that
name the parameter and registries of named choices (:mod:`~_runkit.checks`), seeds and their
derivation (:mod:`~_runkit.seeds`), atomic writes, the one JSON writer, the safe torch loader,
the one reader of array files and GIFs (:mod:`~_runkit.files`), the checksums of the files the
library writes (:mod:`~_runkit.checksum`), locked run directories with one ``config.json`` shape
(:mod:`~_runkit.rundir`), how a library call runs -- its threads, Ctrl-C that survives native
code and the progress bar (:mod:`~_runkit.runtime`) --, figures in a notebook
(:mod:`~_runkit.notebook`), typed results (:mod:`~_runkit.results`), intervals over repeats
(:mod:`~_runkit.stats`), the sweep engine (:mod:`~_runkit.sweep`) and numba's cache of the
compiled kernels (:mod:`~_runkit.kernels`). The command lines' ``main()`` wrapper
(:mod:`~_runkit.cli`) and their ``--config`` reruns (:mod:`~_runkit.rerun`) are imported only
when ``cli_main`` is first used, so that library code never imports them.

Examples
--------
>>> import _runkit as rk
>>> rk.check_positive_int("n", 5)
5
>>> rk.exit_code(rk.Diverged("loss exploded at step 3; lower lr", step=3, parameter="lr"))
1
"""

from . import errors  # noqa: F401 - first: it guards Ctrl-C while the rest imports
from .checks import (
    Registry,
    check_array,
    check_choice,
    check_float,
    check_int,
    check_memory,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .errors import BadInput, BadType, Diverged, RunFailed, exit_code
from .files import (
    atomic_torch_save,
    atomic_write_bytes,
    atomic_write_text,
    read_json,
    safe_torch_load,
    to_jsonable,
    write_json,
)
from .results import Result, artifact
from .rundir import RunDir
from .runtime import check_interrupt, progress, with_threads

__all__ = [
    "BadInput", "BadType", "Diverged", "Registry", "Result", "RunDir", "RunFailed", "artifact",
    "atomic_torch_save", "atomic_write_bytes", "atomic_write_text", "check_array",
    "check_interrupt",
    "check_choice", "check_float", "check_int", "check_memory", "check_nonnegative",
    "check_positive", "check_positive_int", "cli_main", "exit_code", "progress", "read_json",
    "safe_torch_load", "to_jsonable", "with_threads", "write_json",
]


def __getattr__(name: str):
    """``cli_main`` from :mod:`_runkit.cli`, imported when first asked for."""
    if name == "cli_main":
        from .cli import cli_main

        return cli_main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
