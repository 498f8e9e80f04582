"""``neurodyn sweep KIND``: a grid of fits and experiments on a Dask cluster (resumable).

``--grid AXIS=V1,V2,...`` (repeatable) replaces an axis's default values; every cell is stored in
``OUT/cells`` as it finishes, a rerun into the same ``--out`` runs only the missing cells (and
those stored under other settings), and the end writes ``OUT/table.csv``, ``OUT/metrics.json``
(the same after a resumed sweep), ``OUT/timing.json`` (cells computed by this call, wall time)
and ``OUT/<y>_vs_<x>.png``. ``--out`` is a locked run directory (:class:`_runkit.RunDir`): the
grid is checked before anything is written, and a directory of another command is refused.
The run is :func:`neurodyn.runs.sweep.sweep_run`; this module parses its options.
"""

from __future__ import annotations

from _runkit.cli import add_sweep_arguments

from ..experiments.sweeps import SWEEPS
from ._common import add_device_argument, args_config, command, config_of, seed_arg

__all__ = ["register"]


def _sweep(args) -> dict:
    from ..runs.sweep import SweepConfig, sweep_run

    config = config_of(SweepConfig, args, grid=tuple(args.grid))
    return sweep_run(config, args.out, arguments=args_config(args))


def register(sub) -> None:
    """Add the ``sweep`` sub-command."""
    kinds = "; ".join(
        f"{name}: axes {' and '.join(k.axes)} (default "
        + ", ".join(f"{a}={','.join(map(str, k.defaults[a]))}" for a in k.axes) + ")"
        for name, k in sorted(SWEEPS.items()))
    p = sub.add_parser(
        "sweep", help="a grid of fits and experiments (kappa, diffusion, drift)",
        description="A grid of ring fits and one experiment per cell, resumable: every cell is "
        "stored in OUT/cells as it finishes and a rerun computes only the missing ones; writes "
        "OUT/table.csv, metrics.json, timing.json and the figure <y>_vs_<x>.png. Kinds: "
        f"{kinds}.")
    p.add_argument("kind", choices=sorted(SWEEPS),
                   help="kappa: slowest normal rate against kappa; diffusion: bump diffusion "
                   "D against noise, with the theory; drift: path-integration error against a "
                   "constant speed v")
    p.add_argument("--out", required=True,
                   help="output directory (locked while the sweep writes; a rerun into it "
                   "resumes)")
    p.add_argument("--grid", action="append", default=[], metavar="AXIS=V1,V2,...",
                   help="replace an axis's values (repeatable); the axes of each kind are "
                   "listed above (kappa: kappa, n; diffusion: noise, n; drift: v, n)")
    p.add_argument("--fit-steps", type=int, default=None,
                   help="Adam steps of every cell's fit (default 300)")
    p.add_argument("--seed", type=seed_arg, default=0, help="base seed of the cells' seeds")
    add_device_argument(p)
    add_sweep_arguments(p)
    p.set_defaults(func=command(_sweep))
