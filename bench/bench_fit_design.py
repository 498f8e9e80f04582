"""One step of ``neurodyn fit`` with the batched design matrix against the column-by-column
design it replaced (one residual evaluation per parameter), side by side in one run.

A step is: sample the batch, build the design ``A, y`` of the three terms, add the normal
equations, solve. Reported per configuration: the best of ``--repeat`` seconds for each way,
their ratio (old / new) and the largest difference of the two designs.

Usage: python bench/bench_fit_design.py [--out DIR] [--threads T] [--repeat R] [--quick]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from _runkit.timing import Stopwatch
from neurodyn.fitting import core as fitting
from neurodyn.fitting.core import TERMS, FitConfig
from neurodyn.fitting.plan import build_manifold, build_network


def design_by_columns(net, manifold, config, b):
    """The earlier design: residuals at theta = 0 and at each unit vector, one at a time."""
    energy = net.energy_fn
    theta0 = energy.theta()
    p = theta0.numel()
    try:
        energy.set_theta(torch.zeros(p, dtype=torch.float64))
        with torch.no_grad():
            base = fitting._residuals(net, manifold, config, b)
        cols = {k: [] for k in TERMS}
        for j in range(p):
            e = torch.zeros(p, dtype=torch.float64)
            e[j] = 1.0
            energy.set_theta(e)
            with torch.no_grad():
                res = fitting._residuals(net, manifold, config, b)
            for k in TERMS:
                cols[k].append(res[k] - base[k])
    finally:
        energy.set_theta(theta0)
    return {k: (torch.stack(cols[k], -1) if p else torch.zeros(base[k].numel(), 0,
                                                               dtype=torch.float64), -base[k])
            for k in TERMS}


def _step(design, net, manifold, cfg, step):
    d = design(net, manifold, cfg, fitting._batch(manifold, cfg, step))
    p = net.energy_fn.theta().numel()
    sums = {k: {"ata": torch.zeros(p, p, dtype=torch.float64),
                "aty": torch.zeros(p, dtype=torch.float64),
                "yty": torch.zeros((), dtype=torch.float64)} for k in TERMS}
    for k, (a, y) in d.items():
        sums[k] = {"ata": sums[k]["ata"] + a.T @ a, "aty": sums[k]["aty"] + a.T @ y,
                   "yty": sums[k]["yty"] + y @ y}
    fitting._solve(sums, cfg)
    return d


def bench(cfg: FitConfig, repeat: int) -> dict:
    manifold = build_manifold(cfg)
    net = build_network(cfg, manifold)
    times = {"columns": [], "batched": []}
    for _ in range(repeat):
        for name, design in (("columns", design_by_columns), ("batched", fitting._design)):
            t = Stopwatch()
            out = _step(design, net, manifold, cfg, 0)
            times[name].append(t.wall_s)
            if name == "columns":
                ref = out
    diff = max(float((out[k][i] - ref[k][i]).abs().max()) for k in TERMS for i in (0, 1))
    old, new = min(times["columns"]), min(times["batched"])
    return {"geometry": cfg.geometry, "n": cfg.n, "batch": cfg.batch,
            "parameters": int(net.energy_fn.theta().numel()), "columns_seconds": old,
            "batched_seconds": new, "speedup": old / new, "max_abs_difference": diff}


def main(argv: list[str] | None = None) -> dict:
    """Run the comparison; returns (and writes to OUT/fit_design.json) the results."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results/bench"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    configs = [FitConfig(geometry="ring", n=64), FitConfig(geometry="torus", n=32)]
    if args.quick:
        configs = [FitConfig(geometry="ring", n=32), FitConfig(geometry="torus", n=12)]
    out = {"threads": args.threads, "runs": [bench(c, args.repeat) for c in configs]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fit_design.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
