"""``neurodyn sweep KIND``: a grid of fits and experiments on a Dask cluster (resumable).

``--grid AXIS=V1,V2,...`` (repeatable) replaces an axis's default values; every cell is stored in
``OUT/cells`` as it finishes, a rerun into the same ``--out`` runs only the missing cells (and
those stored under other settings), and the end writes ``OUT/table.csv``, ``OUT/metrics.json``
(the same after a resumed sweep), ``OUT/timing.json`` (cells computed by this call, wall time)
and ``OUT/<y>_vs_<x>.png``. ``--out`` is a locked run directory (:class:`_runkit.RunDir`): the
grid is checked before anything is written, and a directory of another command is refused.
"""

from __future__ import annotations

import math

from _runkit import BadInput, check_memory
from _runkit.cli import add_sweep_arguments, sweep_options, sweep_workers
from _runkit.sweep import check_sweep_options, run_sweep

from ..experiments.sweeps import SWEEPS
from ._common import add_device_argument, args_config, command, open_run, seed_arg

__all__ = ["register", "parse_grid"]


def parse_grid(items: list[str], kind: str) -> dict:
    """``["noise=0.01,0.05", "n=64"]`` over the sweep's defaults -> ``{axis: [values]}``.

    Every value is checked here, before the run directory is touched: ``n`` an integer a ring
    accepts (>= 8), ``kappa`` and ``noise`` finite and > 0, ``v`` finite."""
    spec = SWEEPS[kind]
    grid = {k: list(v) for k, v in spec.defaults.items()}
    for item in items or []:
        name, sep, text = item.partition("=")
        if not sep or name not in grid:
            raise BadInput(f"--grid {item!r}: expected AXIS=V1,V2,... with AXIS one of "
                           f"{sorted(grid)}", param="grid")
        try:
            values = [int(t) if name == "n" else float(t) for t in text.split(",")]
        except ValueError:
            raise BadInput(f"--grid {item!r}: {text!r} is not a list of numbers",
                           param="grid") from None
        for value in values:
            _check_value(name, value, item)
        grid[name] = values
    return grid


def _check_fit_memory(n: int) -> None:
    """:class:`~_runkit.BadInput` for a cell's ring fit of ``n`` neurons that would
    not fit in memory (:func:`neurodyn.fitting.plan.fit_bytes`)."""
    from ..fitting.config import FitConfig
    from ..fitting.plan import fit_bytes

    check_memory("n", fit_bytes(FitConfig(n=n)))


def _check_value(name: str, value: float, item: str) -> None:
    """Refuse (:class:`~_runkit.BadInput`, naming ``--grid``) a value no cell of the axis
    accepts."""
    from ..fitting.config import FitConfig
    from ..geometry.populations import Ring

    try:
        if name == "n":
            Ring(value)
            _check_fit_memory(value)
        elif name == "kappa":
            FitConfig(kappa=value)
        elif not math.isfinite(value) or (name == "noise" and value <= 0):
            raise BadInput(f"{name}={value!r}: must be a finite number"
                           + (" > 0" if name == "noise" else ""), param=name)
    except BadInput as err:
        raise BadInput(f"--grid {item!r}: {err}", param="grid") from None


def _fixed(args, spec) -> dict:
    """The settings every cell shares: the sweep's, ``device`` and ``--fit-steps`` (checked)."""
    from ..fitting.config import FitConfig

    fixed = dict(spec.fixed)
    if spec.cell.__name__ != "kappa_cell":  # the kappa cells simulate nothing
        fixed["device"] = args.device
    if args.fit_steps is not None:
        try:
            FitConfig(steps=args.fit_steps)
        except BadInput as err:
            raise BadInput(f"--fit-steps {args.fit_steps}: {err}", param="fit_steps") from None
        fixed["fit_steps"] = args.fit_steps
    return fixed


def _sweep(args) -> dict:
    from ..plotting import plot_sweep, save_figure

    spec = SWEEPS[args.kind]
    check_sweep_options(args.workers, args.scheduler)  # before --out is claimed
    grid = parse_grid(args.grid, args.kind)
    fixed = _fixed(args, spec)
    x, series = spec.axes

    def figures(rows, folder):
        save_figure(plot_sweep(rows, x, spec.y, series), folder / f"{spec.y}_vs_{x}.png")

    config = {**args_config(args), "grid_resolved": grid, "fixed": fixed,
              "workers": sweep_workers(args)}
    with open_run(args, f"sweep {args.kind}", config=config) as run:
        res = run_sweep(spec.cell, grid, run.out, fixed=fixed, seed=args.seed, figures=figures,
                        **sweep_options(args))
        metrics = res.to_dict()
        run.write_json("metrics.json", {**metrics, "rows": res.rows})
        run.write_json("timing.json", res.timing())
    return {**metrics, **res.timing()}


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
