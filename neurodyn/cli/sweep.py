"""``neurodyn sweep KIND``: a grid of fits and experiments on a Dask cluster (resumable).

``--grid AXIS=V1,V2,...`` (repeatable) replaces an axis's default values; every cell is stored in
``OUT/cells`` as it finishes, a rerun into the same ``--out`` runs only the missing cells, and
the end writes ``OUT/table.csv``, ``OUT/metrics.json`` and ``OUT/<y>_vs_<x>.png``.
"""

from __future__ import annotations

from pathlib import Path

from _runkit import write_json
from _runkit.cli import add_sweep_arguments, sweep_options
from _runkit.sweep import run_sweep

from ..experiments.sweeps import SWEEPS
from ._common import add_device_argument, args_config, command

__all__ = ["register", "parse_grid"]


def parse_grid(items: list[str], kind: str) -> dict:
    """``["noise=0.01,0.05", "n=64"]`` over the sweep's defaults -> ``{axis: [values]}``."""
    spec = SWEEPS[kind]
    grid = {k: list(v) for k, v in spec.defaults.items()}
    for item in items or []:
        name, sep, text = item.partition("=")
        if not sep or name not in grid:
            raise ValueError(f"--grid {item!r}: expected AXIS=V1,V2,... with AXIS one of "
                             f"{sorted(grid)}")
        try:
            values = [int(t) if name == "n" else float(t) for t in text.split(",")]
        except ValueError:
            raise ValueError(f"--grid {item!r}: {text!r} is not a list of numbers") from None
        grid[name] = values
    return grid


def _sweep(args) -> dict:
    from ..plotting import plot_sweep, save_figure

    spec = SWEEPS[args.kind]
    grid = parse_grid(args.grid, args.kind)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fixed = dict(spec.fixed)
    if spec.cell.__name__ != "kappa_cell":  # the kappa cells simulate nothing
        fixed["device"] = args.device
    if args.fit_steps is not None:
        fixed["fit_steps"] = args.fit_steps
    write_json({"command": f"sweep {args.kind}", **args_config(args), "grid_resolved": grid,
                "fixed": fixed}, out / "config.json")
    x, series = spec.axes

    def figures(rows, folder):
        save_figure(plot_sweep(rows, x, spec.y, series), folder / f"{spec.y}_vs_{x}.png")

    res = run_sweep(spec.cell, grid, out, fixed=fixed, seed=args.seed, figures=figures,
                    **sweep_options(args))
    metrics = res.to_dict()
    write_json({**metrics, "rows": res.rows}, out / "metrics.json")
    return metrics


def register(sub) -> None:
    """Add the ``sweep`` sub-command."""
    p = sub.add_parser("sweep", help="a grid of fits and experiments (kappa, diffusion, drift)")
    p.add_argument("kind", choices=sorted(SWEEPS))
    p.add_argument("--out", required=True)
    p.add_argument("--grid", action="append", default=[], metavar="AXIS=V1,V2,...")
    p.add_argument("--fit-steps", type=int, default=None, help="Adam steps of every cell's fit")
    p.add_argument("--seed", type=int, default=0, help="base seed of the cells' seeds")
    add_device_argument(p)
    add_sweep_arguments(p)
    p.set_defaults(func=command(_sweep))
