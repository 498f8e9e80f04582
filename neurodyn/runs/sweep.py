"""``neurodyn sweep KIND`` as a run: a grid of ring fits and one experiment per cell
(:mod:`neurodyn.experiments.sweeps`), on a Dask cluster or in this process, resumable.

:func:`sweep_run` checks the grid (every value, and each ring fit's memory), the fixed settings
and the cluster options before it claims ``out``; then every cell is stored in ``out/cells`` as
it finishes (:func:`_runkit.sweep.run_sweep`), a rerun into the same ``out`` runs only the
missing cells, and the end writes ``table.csv``, ``metrics.json``, ``timing.json`` and
``<y>_vs_<x>.png``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from _runkit import BadInput, RunDir, check_memory
from _runkit.sweep import check_sweep_options, run_sweep, sweep_workers

from ..experiments.sweeps import SWEEPS

__all__ = ["SweepConfig", "sweep_run", "parse_grid"]


@dataclass(frozen=True, kw_only=True)
class SweepConfig:
    """What ``neurodyn sweep`` runs, by the names of its options: the sweep ``kind`` (a key of
    :data:`~neurodyn.experiments.sweeps.SWEEPS`), ``grid`` items ``AXIS=V1,V2,...`` replacing
    an axis's defaults, every cell's ``fit_steps`` (None: the sweep's default), the base
    ``seed``, the cells' ``device``, and the cluster: ``workers`` (0: in this process; None:
    one per core) or a ``scheduler`` address."""

    kind: str
    grid: tuple[str, ...] = ()
    fit_steps: int | None = None
    seed: int = 0
    device: str = "cpu"
    workers: int | None = None
    scheduler: str | None = None


def sweep_run(config: SweepConfig, out: str | Path, arguments: dict | None = None) -> dict:
    """Run ``config`` in the run directory ``out``; return the metrics with the timing
    (cells computed by this call, wall time). ``config.json`` records ``arguments`` (default
    the config's fields) with the resolved grid, the fixed settings and the workers."""
    from ..plotting import plot_sweep, save_figure

    if config.kind not in SWEEPS:
        raise BadInput(f"kind={config.kind!r}: choose one of {sorted(SWEEPS)}", param="kind")
    spec = SWEEPS[config.kind]
    check_sweep_options(config.workers, config.scheduler)  # before out is claimed
    grid = parse_grid(list(config.grid), config.kind)
    fixed = _fixed(config, spec)
    x, series = spec.axes

    def figures(rows, folder):
        save_figure(plot_sweep(rows, x, spec.y, series), folder / f"{spec.y}_vs_{x}.png")

    arguments = dataclasses.asdict(config) if arguments is None else arguments
    recorded = {**arguments, "grid_resolved": grid, "fixed": fixed,
                "workers": sweep_workers(config.workers, config.scheduler)}
    with RunDir(out, command=f"neurodyn sweep {config.kind}", config=recorded,
                seed=config.seed) as run:
        res = run_sweep(spec.cell, grid, run.out, fixed=fixed, seed=config.seed,
                        figures=figures, workers=config.workers, scheduler=config.scheduler)
        metrics = res.to_dict()
        run.write_json("metrics.json", {**metrics, "rows": res.rows})
        run.write_json("timing.json", res.timing())
    return {**metrics, **res.timing()}


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


def _fixed(config: SweepConfig, spec) -> dict:
    """The settings every cell shares: the sweep's, ``device`` and ``fit_steps`` (checked)."""
    from ..fitting.config import FitConfig

    fixed = dict(spec.fixed)
    if spec.cell.__name__ != "kappa_cell":  # the kappa cells simulate nothing
        fixed["device"] = config.device
    if config.fit_steps is not None:
        try:
            FitConfig(steps=config.fit_steps)
        except BadInput as err:
            raise BadInput(f"--fit-steps {config.fit_steps}: {err}",
                           param="fit_steps") from None
        fixed["fit_steps"] = config.fit_steps
    return fixed
