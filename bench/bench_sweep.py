"""Sweep speed-up: the same grid of cells on a LocalCluster of 1 and of 2 worker processes.

Each cell is CPU-bound work (a compiled simulation of 64 rings of N = 256, RK4, seeded by the
cell's coordinates). Each side runs in a fresh process (``--side W``), the two alternately over
rounds, and reports two times:

- ``end_to_end``: the whole process, from its start (imports, the worker forkserver and the
  cluster's start-up included) to the written table: what a user waits for;
- ``cells``: the same grid run a second time on the already started cluster, into a fresh
  directory: the cells' throughput alone.

Reported: both times per side and round, the median ratios 1 worker / 2 workers, and whether
every table is identical. Two workers can only approach 2x when the machine's two cores are free.

``--kappa-sweep`` adds the library's own sweep as a user runs it: ``neurodyn sweep kappa`` over
kappa in {0.25, 0.5, 1, 2} and N in {64, 128} (8 cells, each a fit and its Jacobian spectrum),
``--workers 1`` against ``--workers 2``, each a fresh command timed from its start to its exit,
alternately over the same rounds; its tables must be identical too.

Usage: python bench/bench_sweep.py [--cells 8] [--rounds 2] [--steps 16000] [--kappa-sweep]
       [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = time.perf_counter()
HERE = Path(__file__).resolve().parent


def ring_cell(p: dict) -> dict:
    """A compiled RK4 run of 64 perturbed states of a learned ring (N = 256)."""
    import torch
    from bench_speed import make_network

    from neurodyn.dynamics.simulation import simulate
    from neurodyn.geometry.populations import Ring

    net = make_network(Ring(256))
    gen = torch.Generator().manual_seed(p["seed"])
    u0 = net.manifold.u_star(net.geometry.random_phase(64, gen))
    u0 = u0 + 0.2 * torch.randn(u0.shape, generator=gen, dtype=torch.float64)
    tr = simulate(net, u0, p["steps"] * 0.1, 0.1, method="rk4", save_every=p["steps"],
                  progress=False)
    return {"distance_final_max": float(tr.distance[-1].max()), "backend": tr.backend}


def side(workers: int, cells: int, steps: int) -> dict:
    """One side in this process: a cold sweep (timed from process start), then a warm one."""
    from _runkit.sweep import local_cluster, run_sweep

    grid = {"cell": list(range(cells))}
    preload = ["bench_speed", "neurodyn.dynamics.simulation", "neurodyn.dynamics._compiled.kernels"]
    with local_cluster(workers, preload=preload) as client, \
            tempfile.TemporaryDirectory() as tmp:
        res = run_sweep(ring_cell, grid, Path(tmp) / "cold", fixed={"steps": steps},
                        client=client, progress=False)
        end_to_end = time.perf_counter() - T0
        t = time.perf_counter()
        warm = run_sweep(ring_cell, grid, Path(tmp) / "warm", fixed={"steps": steps},
                         client=client, progress=False)
        cells_s = time.perf_counter() - t
        tables = {res.table.read_text(), warm.table.read_text()}
    return {"workers": workers, "end_to_end_s": end_to_end, "cells_s": cells_s,
            "table": tables.pop() if len(tables) == 1 else None}


KAPPA_GRID = ["--grid", "kappa=0.25,0.5,1,2", "--grid", "n=64,128"]


def kappa_sweep_side(workers: int) -> dict:
    """``neurodyn sweep kappa`` on ``workers`` workers as a fresh command: wall time, table."""
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "neurodyn.cli", "sweep", "kappa", *KAPPA_GRID,
                        "--workers", str(workers), "--out", str(Path(tmp) / "run")],
                       check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t
        table = (Path(tmp) / "run" / "table.csv").read_text()
    return {"workers": workers, "end_to_end_s": wall, "table": table}


def alternate(rounds: int, run_side, label: str) -> tuple[list, set]:
    """``run_side(workers) -> record with "table"`` for 1 and 2 workers, alternately first over
    ``rounds``; returns the per-round records ``[{1: rec, 2: rec}, ...]`` and the set of tables."""
    per_round, tables = [], set()
    for rnd in range(rounds):
        times = {}
        for workers in ((1, 2) if rnd % 2 == 0 else (2, 1)):
            rec = run_side(workers)
            tables.add(rec.pop("table"))
            times[workers] = rec
        per_round.append(times)
        print(json.dumps({label: rnd, **{f"{w}_worker": times[w] for w in (1, 2)}}), flush=True)
    return per_round, tables


def kappa_sweep(rounds: int) -> dict:
    """The library's kappa sweep on 1 and 2 workers, alternately over ``rounds``."""
    per_round, tables = alternate(rounds, kappa_sweep_side, "kappa_sweep_round")
    ratio = statistics.median(r[1]["end_to_end_s"] / r[2]["end_to_end_s"] for r in per_round)
    return {"command": "neurodyn sweep kappa " + " ".join(KAPPA_GRID), "cells": 8,
            "rounds": per_round, "speedup_end_to_end_median": ratio,
            "end_to_end_speedup_ge_1.7": ratio >= 1.7, "tables_identical": len(tables) == 1}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=16000)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--kappa-sweep", action="store_true",
                   help="also time `neurodyn sweep kappa` (8 cells) on 1 and 2 workers")
    p.add_argument("--side", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    # worker processes import this module by name from its folder
    parts = [str(HERE), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in parts if x)
    if args.side is not None:
        print(json.dumps(side(args.side, args.cells, args.steps)))
        return {}
    def fresh_side(workers: int) -> dict:  # one side in a fresh process
        out = subprocess.run([sys.executable, __file__, "--side", str(workers), "--cells",
                              str(args.cells), "--steps", str(args.steps)],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    rounds, tables = alternate(args.rounds, fresh_side, "round")
    e2e = statistics.median(r[1]["end_to_end_s"] / r[2]["end_to_end_s"] for r in rounds)
    cells = statistics.median(r[1]["cells_s"] / r[2]["cells_s"] for r in rounds)
    result = {"cells": args.cells, "steps": args.steps, "rounds": rounds,
              "speedup_end_to_end_median": e2e, "speedup_cells_median": cells,
              "end_to_end_speedup_ge_1.7": e2e >= 1.7,
              "tables_identical": len(tables) == 1 and None not in tables,
              "cpus": os.cpu_count()}
    if args.kappa_sweep:
        result["kappa_sweep"] = kappa_sweep(args.rounds)
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_sweep.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
