"""``flows experiment stopping | ntk-gap``: the stopping rules and the NTK gap, decided over seeds
(:mod:`flows.runs.stopping`), registered on the ``flows experiment`` parser of
:mod:`flows.cli.commands`."""

from __future__ import annotations

import argparse

from _runkit.cli import add_sweep_arguments, out_path

from ._parsing import RISK_NS, RISK_SEEDS, Formatter, ints, theory_steps, words

STOPPING_KINDS = ("stopping", "ntk-gap")


def add_stopping_kinds(kinds, cmd) -> None:
    """Add the ``stopping`` and ``ntk-gap`` kinds to the ``flows experiment`` subparsers,
    each calling ``cmd``."""
    st = kinds.add_parser("stopping", formatter_class=Formatter,
                          help="excess test risk against n when gradient descent stops at a "
                               "fixed step count, at steps sqrt(n / n_min) (the kernel "
                               "bounds' early stopping) or steps n / n_min; with a "
                               "shuffled-target control")
    st.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    st.add_argument("--data", default="moons",
                    help="dataset with a closed-form optimal field (as for risk)")
    st.add_argument("--ns", type=ints, default=list(RISK_NS),
                    help="numbers of training points (comma-separated, distinct)")
    st.add_argument("--seeds", type=ints, default=list(RISK_SEEDS),
                    help="one run per seed and n (comma-separated, distinct, >= 0, at least 2)")
    st.add_argument("--width", type=int, default=1024, help="width m (neurons)")
    theory_steps(st, "--steps is the count at the smallest n")
    st.add_argument("--n-test", type=int, default=20_000, dest="n_test",
                    help="fresh test draws (points) behind each excess test risk")
    st.add_argument("--protocols", type=words, default=["fixed", "sqrt"],
                    help="stopping rules among fixed, sqrt, linear (comma-separated)")
    st.add_argument("--targets", type=words, default=["data", "shuffled"],
                    help="data, and shuffled (the control: targets permuted among the draws)")
    add_sweep_arguments(st, without="the runs one after another in this process")
    st.set_defaults(func=cmd)
    g = kinds.add_parser("ntk-gap", formatter_class=Formatter,
                         help="gap between the training-loss curve and the infinite-width NTK "
                              "prediction against the width m, over seeds, with paired "
                              "intervals and its log-log slope; the check passes where, at "
                              "every step, the loss is within 10%% of the kernel's and the "
                              "outputs within 10%% of the kernel's predicted change")
    g.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    g.add_argument("--data", default="moons", help="dataset name")
    g.add_argument("--widths", type=ints, default=[256, 1024, 4096, 16384],
                   help="increasing widths m (comma-separated)")
    g.add_argument("--n", type=int, default=64, help="training points")
    g.add_argument("--seeds", type=ints, default=list(RISK_SEEDS),
                   help="one run per seed and width (comma-separated, distinct, at least 2)")
    theory_steps(g, "the gap grows with lr x steps")
    add_sweep_arguments(g, without="the runs one after another in this process")
    g.set_defaults(func=cmd)


def run_stopping_kind(a: argparse.Namespace, sweep: dict | None = None):
    """Run the kind ``a.kind`` of :data:`STOPPING_KINDS` with the parsed options; ``sweep``
    (``{"workers": ..., "scheduler": ...}``, from ``--workers`` / ``--scheduler``) runs the
    runs as cells of a Dask sweep stored under ``a.out``."""
    from ..runs.stopping import run_ntk_gap_experiment, run_stopping_experiment

    if a.kind == "stopping":
        return run_stopping_experiment(a.out, a.ns, a.seeds, a.data, a.width, a.k, a.steps,
                                       a.lr, a.n_test, a.protocols, a.targets, sweep=sweep)
    return run_ntk_gap_experiment(a.out, a.widths, a.seeds, a.data, a.n, a.k, a.steps, a.lr,
                                  sweep=sweep)
