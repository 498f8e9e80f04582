"""Command line of neurodyn: fit, simulate, restore, path-integrate, speed-gain, diffuse,
grid-cells, manifold, sweep, fit-activity, decode, generate.

Every command writes into ``--out DIR`` (locked while it runs: a second writer is refused):
``config.json`` (command, config as run, seed, library version, command line), ``metrics.json``
(its numbers), PNG figures and its artifacts, and prints what it wrote, its key numbers
(:data:`HEADLINES`) and where the rest is (``--json``: every number as one JSON line). Through
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

__all__ = ["main", "build_parser", "parse_time", "HEADLINES"]

#: The command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = (fit, simulate, experiments, gridcells, manifold, sweep, activity, generate)


#: each command's key numbers, ``(label, dotted path into its metrics)``, printed beneath the
#: line saying what it wrote (:mod:`_runkit.summary`; the first four that the result holds)
HEADLINES = {
    "fit": (("neutral directions", "jacobian.n_zero"),
            ("slowest decay (1/tau)", "jacobian.slowest_nonzero"),
            ("worst normal-rate error", "attraction.normal_spectrum.worst_relative"),
            ("worst restoring-field error", "attraction.field_error_max")),
    "simulate": (("runs", "runs"), ("largest distance at the start", "distance_initial_max"),
                 ("at the end", "distance_final_max"), ("energy never rose", "energy.ok"),
                 ("path error (rad, RMS)", "path_error_rms_final")),
    "restore": (("within threshold: noise", "noise.fraction_within"),
                ("lesion", "lesion.fraction_within"),
                ("largest final distance (lesion)", "lesion.final_max"),
                ("energy never rose (lesion)", "lesion.energy.ok")),
    "path-integrate": (("RMS error at the end (rad)", "rms_final"),
                       ("largest error (rad)", "max_final"), ("tracked", "tracked"),
                       ("path length (rad)", "path_length")),
    "speed-gain": (("v_max (rad/tau)", "v_max"), ("bounded by the speeds tried", "v_max_bounded"),
                   ("first untracked speed", "first_untracked")),
    "diffuse": (("D", "D"), ("theory", "D_theory"), ("ratio", "ratio"),
                ("95% interval holds the theory", "contains_theory")),
    "grid-cells": (("fraction of grid cells", "fraction_grid"),
                   ("median gridness", "gridness_median"),
                   ("final position error (m)", "final_error_m"),
                   ("measured spacing (m)", "measured_spacing_m")),
    "manifold": (("Betti numbers", "betti"), ("Betti numbers", "topology.betti"),
                 ("PCA top-3 variance", "pca_top3"),
                 ("normal minimum at the manifold", "energy.normal_min_at_zero"),
                 ("path error (rad, RMS)", "path_error_rms_final")),
    "generate": (("attractor population ((a) as generated)", "verdict.kept"),
                 ("the data's own verdict", "verdict.data_attractor"),
                 ("(a) as generated: rate W2 / floor", "verdict.rate_w2_ratio"),
                 ("(c) relaxed: rate W2 / floor", "methods.relaxed.rate_w2_ratio"),
                 ("(c) relaxed: W2 / floor", "methods.relaxed.w2_ratio")),
}


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
    return cli_main("neurodyn", build_parser(), argv, headlines=HEADLINES)
