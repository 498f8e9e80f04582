"""Command line of neurodyn: fit, simulate, restore, path-integrate, diffuse, grid-cells, manifold.

Every command writes into ``--out DIR``: ``config.json`` (what it ran), ``metrics.json`` (its
numbers), PNG figures and its artifacts. Errors in the input end the command with exit status 2
and a one-line message naming the parameter; a simulation that becomes non-finite ends with
status 1 and the time and step.

One module per command group parses that group's arguments and calls the library functions
the Python API offers: :mod:`.fit`, :mod:`.simulate`, :mod:`.experiments` (restore,
path-integrate, diffuse), :mod:`.gridcells`, :mod:`.manifold`.
"""

from __future__ import annotations

import argparse
import sys

import torch

from _runkit import BadInput, RunFailed

from ..io import ModelFormatError
from ..simulate import NonFiniteStateError
from . import experiments, fit, gridcells, manifold, simulate, sweep
from ._common import parse_time

__all__ = ["main", "build_parser", "parse_time"]

#: The command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = (fit, simulate, experiments, gridcells, manifold, sweep)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``neurodyn`` command."""
    p = argparse.ArgumentParser(prog="neurodyn", description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (1 is fastest for populations of a few hundred)")
    sub = p.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``neurodyn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads {args.threads}: must be >= 1")
    torch.set_num_threads(args.threads)
    try:
        metrics = args.func(args)
    except (NonFiniteStateError, RunFailed) as exc:
        print(f"neurodyn {args.command}: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, FileNotFoundError, ModelFormatError, BadInput) as exc:
        print(f"neurodyn {args.command}: error: {exc}", file=sys.stderr)
        return 2
    summary = {k: v for k, v in (metrics or {}).items() if not isinstance(v, (list, dict))}
    if summary:
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in summary.items()))
    return 0
