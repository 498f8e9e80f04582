"""Command line of neurodyn: fit, simulate, restore, path-integrate, speed-gain, diffuse,
grid-cells, manifold, sweep, fit-activity, decode, generate.

Every command writes into ``--out DIR`` (locked while it runs: a second writer is refused):
``config.json`` (command, config as run, seed, library version, command line), ``metrics.json``
(its numbers, also printed as one JSON line), PNG figures and its artifacts. Through
:func:`_runkit.cli_main`: bad input ends with exit status 2 and one line naming the parameter,
a run that failed or diverged with 1 (the time and step), Ctrl-C with 130; ``--debug`` adds
the traceback.

One module per command group parses that group's arguments and calls the library functions
the Python API offers: :mod:`.fit`, :mod:`.simulate`, :mod:`.experiments` (restore,
path-integrate, diffuse, speed-gain), :mod:`.gridcells`, :mod:`.manifold`, :mod:`.activity`
(fit-activity, decode), :mod:`.generate`.
"""

from __future__ import annotations

import argparse

from _runkit import cli_main

from . import activity, experiments, fit, generate, gridcells, manifold, simulate, sweep
from ._common import parse_time, positive_int

__all__ = ["main", "build_parser", "parse_time"]

#: The command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = (fit, simulate, experiments, gridcells, manifold, sweep, activity, generate)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``neurodyn`` command."""
    first = " ".join(__doc__.split("\n\n")[0].split())
    p = argparse.ArgumentParser(prog="neurodyn", description=first,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--threads", type=positive_int, default=1,
                   help="torch CPU threads (1 is fastest for populations of a few hundred)")
    sub = p.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``neurodyn`` command; returns the exit status (0 success, 1 failed run,
    2 bad input, 130 interrupted)."""
    return cli_main("neurodyn", build_parser(), argv)
