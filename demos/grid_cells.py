"""Grid cells from a learned torus attractor: path integration in a box, rate maps, gridness.

Fits (or loads) a hex and a square torus, lets an agent explore a 1 m box, path-integrates its
velocity with the hex network for three modules of different spacing side by side, and with the
square network as a control. Writes, into ``--out``:

- ``hex/``: track.npz, ratemaps.npz, metrics.json, config.json and the figures of the hex run
  (rate maps, autocorrelograms, true vs decoded trajectory, error over time, the learned
  connectivity on the sheet, the module comparison);
- ``square/``: the same for the square control (spacing 0.5 m);
- ``metrics.json``: the key numbers of both; ``section.json`` for the results page.

The defaults (16 x 16 sheets, 3 simulated minutes) finish in about a minute on two cores;
``bench/bench_gridcells.py`` runs the full 32 x 32, 10-minute acceptance. ``--models DIR`` loads
``DIR/hex/model.pt`` and ``DIR/square/model.pt`` (as written by ``neurodyn fit torus``) instead
of fitting.

Usage: python demos/grid_cells.py [--out DIR] [--quick] [--models DIR] [--n N]
       [--duration SECONDS] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from _models import written

from _runkit.timing import Stopwatch
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import load_model, write_json
from neurodyn.spatial.agent import Box, generate_trajectory
from neurodyn.spatial.gridcells.files import write_grid_cells
from neurodyn.spatial.gridcells.run import run_grid_cells

MODULES = (0.5, 0.35, 0.7)  # the primary module first; neighbouring ratios ~ sqrt(2)
KEYS = ("final_error_m", "final_error_fraction", "max_error_m", "fraction_grid",
        "gridness_threshold", "gridness_threshold_source", "fraction_grid_fixed",
        "gridness_median", "score_90_median", "measured_spacing_m", "measured_orientation_deg",
        "wall_time_s")


def _network(lattice: str, models: Path | None, n: int, steps: int, seed: int):
    if models is not None:
        net, _ = load_model(models / lattice)
        return net, {"model": str(models / lattice)}
    config = FitConfig(geometry="torus", lattice=lattice, n=(n, n), steps=steps, seed=seed)
    result = fit(config, progress=False)
    return result.network, {"fit_seconds": result.seconds, "fit_steps": steps, "n": [n, n]}


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics (``hex``, ``square``, ``modules``, ``seconds``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results/grid_cells", help="output directory")
    p.add_argument("--quick", action="store_true", help="tiny run (seconds), for the tests")
    p.add_argument("--models", default=None, help="load hex/ and square/ models from here")
    p.add_argument("--n", type=int, default=16, help="sheet size n x n when fitting")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds of exploration (default 180; 10 with --quick)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    out = Path(args.out)
    models = Path(args.models) if args.models else None
    duration = args.duration or (10.0 if args.quick else 180.0)
    steps = 2 if args.quick else 8
    cells = 8 if args.quick else 64

    traj = generate_trajectory(duration, 0.02, Box(1.0), seed=args.seed)
    metrics: dict = {"duration_s": duration}
    for lattice in ("hex", "square"):
        net, info = _network(lattice, models, args.n, steps, args.seed)
        cells_here = min(cells, net.geometry.size)
        modules = list(MODULES) if lattice == "hex" else [0.5]
        res = run_grid_cells(net, traj, modules=modules, cells=cells_here, seed=args.seed)
        write_grid_cells(res, out / lattice, {"demo": "grid_cells", **info})
        metrics[lattice] = {k: res.metrics[k] for k in KEYS}
        if lattice == "hex":
            metrics["modules"] = [{k: m[k] for k in ("spacing_m", "final_error_fraction",
                                                     "fraction_grid", "measured_spacing_m")}
                                  for m in res.metrics["modules"]]
    metrics["seconds"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    print(written(out))
    _section(out, metrics, argv)
    return metrics


def _section(out: Path, metrics: dict, argv: list[str] | None) -> None:
    """Describe the outputs for the results page (``demos/page.py``)."""
    from page import Section, write_section
    h, s = metrics["hex"], metrics["square"]
    figures = [f"hex/{name}" for name in ("ratemaps.png", "autocorrelograms.png",
                                          "trajectory.png", "error.png", "connectivity.png",
                                          "modules.png")]
    figures += ["square/ratemaps.png", "square/autocorrelograms.png"]
    write_section(out, Section(
        title="Grid cells: path integration on the learned torus",
        description=(f"{metrics['duration_s']:g} s of exploration in a 1 m box, path-integrated "
                     "by a hex torus (three modules) and a square torus (control)."),
        figures=[f for f in figures if (out / f).exists()],
        metrics={"hex final error (fraction of spacing)": h["final_error_fraction"],
                 "hex fraction above the shuffled threshold": h["fraction_grid"],
                 "hex shuffled threshold (95th percentile)": h["gridness_threshold"],
                 "hex fraction gridness >= 0.8": h["fraction_grid_fixed"],
                 "hex median gridness": h["gridness_median"],
                 "square median gridness": s["gridness_median"],
                 "square median score_90": s["score_90_median"],
                 "seconds": metrics["seconds"]},
        command="python demos/grid_cells.py " + " ".join(argv if argv is not None
                                                         else sys.argv[1:]),
    ))


if __name__ == "__main__":
    main()
