"""Sweep speed-up: the same grid of cells on a LocalCluster of 1 and of 2 worker processes.

Each cell is CPU-bound work of a few seconds (a compiled simulation of 64 rings of N = 256,
RK4, seeded by the cell's coordinates). The two sides run alternately over rounds into fresh
directories; reported: each side's wall time (cluster start included) per round, the median
ratio 1 worker / 2 workers, and whether the two tables are identical.

Usage: python bench/bench_sweep.py [--cells 8] [--rounds 2] [--steps 4000] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ring_cell(p: dict) -> dict:
    """A compiled RK4 run of 64 perturbed states of a learned ring (N = 256)."""
    import torch
    from bench_speed import make_network

    from neurodyn.geometry import Ring
    from neurodyn.simulation import simulate

    net = make_network(Ring(256))
    gen = torch.Generator().manual_seed(p["seed"])
    u0 = net.manifold.u_star(net.geometry.random_phase(64, gen))
    u0 = u0 + 0.2 * torch.randn(u0.shape, generator=gen, dtype=torch.float64)
    tr = simulate(net, u0, p["steps"] * 0.1, 0.1, method="rk4", save_every=p["steps"],
                  progress_bar=False)
    return {"distance_final_max": float(tr.distance[-1].max()), "backend": tr.backend}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    # worker processes import this module and the checkout
    parts = [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in parts if x)
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    from _runkit.sweep import run_sweep

    grid = {"cell": list(range(args.cells))}
    rounds = []
    tables = {}
    for rnd in range(args.rounds):
        order = (1, 2) if rnd % 2 == 0 else (2, 1)
        times = {}
        for workers in order:
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                res = run_sweep(ring_cell, grid, tmp, fixed={"steps": args.steps},
                                workers=workers, progress_bar=False)
                times[workers] = time.perf_counter() - t
                tables[(rnd, workers)] = res.table.read_text()
        rounds.append(times)
        print(json.dumps({"round": rnd, "seconds_1_worker": times[1],
                          "seconds_2_workers": times[2]}), flush=True)
    ratio = statistics.median(r[1] / r[2] for r in rounds)
    identical = len(set(tables.values())) == 1
    result = {"cells": args.cells, "steps": args.steps, "rounds": rounds,
              "speedup_2_over_1_median": ratio, "speedup_ge_1.7": ratio >= 1.7,
              "tables_identical": identical, "cpus": os.cpu_count()}
    print(json.dumps(result))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_sweep.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
