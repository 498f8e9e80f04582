"""Grid cells on the 32 x 32 torus: a 10-minute path integration run, timed, with its accuracy.

1. Fit (or load) a hex and a square torus with the default fit config.
2. Generate 10 simulated minutes of exploration in a 1 m box (seed 0, sampled every 20 ms) and
   path-integrate it with the hex model (spacing 0.5 m, tau = 10 ms, no noise).
   Targets: final decoded error <= 5% of the spacing, >= 90% of a random panel of 64 cells
   above the gridness threshold (by default the 95th percentile of a shuffled null; the fixed
   0.8 is reported beside it), wall time <= 120 s (the first target) and <= 15 s (the
   compiled path's).
3. The same run with the square model as a control: square fields (median classic gridness
   < 0.3, median score_90 > 0.8).
4. ``--study``: decoding accuracy against the step size and method on a shorter run (60 s),
   against a fine reference (rk4, 0.25 tau), with each run's wall time: the measurement behind
   the default network step.

Usage: python bench/bench_gridcells.py [--out DIR] [--models DIR] [--quick] [--study]
       [--threads T]

``--quick`` runs 60 s of exploration with a lightly fitted 16 x 16 sheet (a smoke test, not the
acceptance numbers) and writes into ``OUT/quick``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

import numpy as np
import torch

from _runkit.timing import Stopwatch
from neurodyn.fitting.core import FitConfig
from neurodyn.io import fit_or_load, write_json
from neurodyn.spatial.agent import Box, generate_trajectory
from neurodyn.spatial.gridcells.files import write_grid_cells
from neurodyn.spatial.gridcells.run import DEFAULT_DT_NETWORK, run_grid_cells


def get_model(models: Path, lattice: str, quick: bool) -> tuple[object, dict]:
    """The torus of ``lattice`` from the model cache ``models`` (fitted there once,
    :func:`neurodyn.io.fit_or_load`); returns (network, info)."""
    config = FitConfig(geometry="torus", lattice=lattice, n=(16, 16) if quick else (32, 32),
                       steps=60 if quick else FitConfig.steps, seed=0)
    return fit_or_load(config, models)


def study(network, duration: float) -> list[dict]:
    """Final and largest decoding error against step size and method, relative to rk4 at
    0.25 tau, on ``duration`` seconds of exploration."""
    traj = generate_trajectory(duration, 0.02, Box(1.0), seed=1)
    ref = run_grid_cells(network, traj, dt_network=0.25, cells=8)
    rows = [{"method": "rk4", "dt_network": 0.25, "wall_time_s": ref.wall_time,
             "final_error_m": ref.metrics["final_error_m"],
             "max_error_m": ref.metrics["max_error_m"], "max_deviation_from_reference_m": 0.0}]
    for method, dt in (("rk4", 2.0), ("rk4", 1.0), ("rk4", 0.5), ("midpoint", 1.0),
                       ("euler", 1.0), ("euler", 0.5)):
        res = run_grid_cells(network, traj, dt_network=dt, method=method, cells=8)
        rows.append({"method": method, "dt_network": dt, "wall_time_s": res.wall_time,
                     "final_error_m": res.metrics["final_error_m"],
                     "max_error_m": res.metrics["max_error_m"],
                     "max_deviation_from_reference_m":
                         float(np.linalg.norm(res.decoded - ref.decoded, axis=-1).max())})
    return rows


def compare_backends(network, duration: float, rounds: int = 2) -> dict:
    """Wall time of the same hex run on the compiled path and on the torch path (the path every
    run took before the compiled one), alternating over rounds; the final positions agree."""
    from neurodyn.dynamics import fastpath

    traj = generate_trajectory(duration, 0.02, Box(1.0), seed=2)
    times: dict = {"compiled": [], "torch": []}
    decoded = {}
    for rnd in range(rounds):
        for name in (("compiled", "torch") if rnd % 2 == 0 else ("torch", "compiled")):
            saved = fastpath.AVAILABLE
            fastpath.AVAILABLE = name == "compiled"
            try:
                res = run_grid_cells(network, traj, spacing=0.5, tau_seconds=0.01, cells=8)
            finally:
                fastpath.AVAILABLE = saved
            times[name].append(res.wall_time)
            decoded[name] = res.decoded
    ratios = [t / c for t, c in zip(times["torch"], times["compiled"], strict=True)]
    return {"duration_s": duration, "wall_compiled_s": times["compiled"],
            "wall_torch_s": times["torch"], "torch_over_compiled_median": float(np.median(ratios)),
            "max_decoded_difference_m": float(np.abs(decoded["compiled"]
                                                     - decoded["torch"]).max())}


def _summary(metrics: dict) -> dict:
    keys = ("final_error_m", "final_error_fraction", "max_error_m", "fraction_grid",
            "gridness_threshold", "gridness_threshold_source", "fraction_grid_fixed",
            "gridness_median", "gridness_mean_form_median", "score_90_median",
            "measured_spacing_m", "measured_orientation_deg", "wall_time_s", "realtime_factor",
            "nfe", "dt_network_tau")
    return {k: metrics[k] for k in keys}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results/bench/gridcells", help="output directory")
    p.add_argument("--models", default=None,
                   help="where fitted models are cached (default OUT/models)")
    p.add_argument("--quick", action="store_true", help="60 s on a 16 x 16 sheet (smoke test)")
    p.add_argument("--study", action="store_true", help="also measure accuracy vs step size")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--compare-torch", type=float, default=None, metavar="SECONDS",
                   help="also time SECONDS of exploration on the compiled and the torch path")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    models = Path(args.models) if args.models else out / "models"
    if args.quick:  # never overwrite the full run's outputs
        out = out / "quick"
    duration = 60.0 if args.quick else 600.0
    report: dict = {"duration_s": duration, "quick": args.quick, "threads": args.threads,
                    "dt_network_default_tau": DEFAULT_DT_NETWORK,
                    "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "torch": torch.__version__}}

    t0 = Stopwatch()
    traj = generate_trajectory(duration, 0.02, Box(1.0), seed=0)
    report["trajectory_seconds"] = t0.wall_s
    for lattice in ("hex", "square"):
        net, info = get_model(models, lattice, args.quick)
        t0 = Stopwatch()
        res = run_grid_cells(net, traj, spacing=0.5, tau_seconds=0.01, cells=64, seed=0)
        call = t0.wall_s  # the whole call: with the rate maps' shuffled nulls
        write_grid_cells(res, out / lattice)
        report[lattice] = {**_summary(res.metrics), "call_seconds": call, **info}
        print(f"{lattice}: {json.dumps(report[lattice])}", flush=True)
        if lattice == "hex" and args.compare_torch:
            report["compare_torch"] = compare_backends(net, args.compare_torch)
            print(f"compare: {json.dumps(report['compare_torch'])}", flush=True)
        if lattice == "hex" and args.study:
            report["study"] = study(net, 60.0)
            for row in report["study"]:
                print(f"study: {json.dumps(row)}", flush=True)

    hexm, sq = report["hex"], report["square"]
    report["acceptance"] = {
        "final_error_fraction_le_0.05": hexm["final_error_fraction"] <= 0.05,
        "fraction_grid_ge_0.9": hexm["fraction_grid"] >= 0.9,
        "wall_time_le_120s": hexm["wall_time_s"] <= 120.0,
        "wall_time_le_15s": hexm["wall_time_s"] <= 15.0,
        "call_seconds_le_15s": hexm["call_seconds"] <= 15.0,
        "square_classic_median_lt_0.3": sq["gridness_median"] < 0.3,
        "square_score_90_median_gt_0.8": sq["score_90_median"] > 0.8,
    }
    write_json(report, out / "bench_gridcells.json")
    print(json.dumps(report["acceptance"]))
    return report


if __name__ == "__main__":
    main()
