"""Generated activity over seeds: how often each generator keeps the attractor.

For each seed: noisy states of the fitted network (data drawn with that seed), the three
generators of :func:`neurodyn.generative.compare_generators` and the shuffled control; prints one
row per seed and, at the end, the counts the acceptance asks for (Betti numbers of the ring
(1, 1, 0) / torus (1, 2, 1), normal distance <= 1.5x the data's floor, intrinsic W2 <= 1.2x its
i.i.d. floor at 10 evaluations) with the worst ratios.

    python bench/bench_generate_seeds.py --geometry ring --seeds 20
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from neurodyn import FitConfig, fit
from neurodyn.generative import compare_generators, population_states

BETTI = {"ring": (1, 1, 0), "torus": (1, 2, 1)}


def main(argv=None) -> dict:
    """Run the seeds; returns the summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--geometry", choices=("ring", "torus"), default="ring")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--train-steps", type=int, default=1500)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    net = fit(FitConfig(geometry=args.geometry), progress=False).network
    rows = []
    for seed in range(args.seeds):
        t0 = time.perf_counter()
        res = compare_generators(net, population_states(net, 2000, seed=seed), 400,
                                 train_steps=args.train_steps, seed=seed)
        row = {"seed": seed, "seconds": round(time.perf_counter() - t0, 1),
               "control_betti": list(res.control_betti), "energy_rise": res.energy_rise}
        for k, m in res.methods.items():
            row[k] = {"betti": list(m.betti), "distance_ratio": round(m.distance_ratio, 3),
                      "w2_ratio": round(m.w2_ratio, 3),
                      "w2_within_2std": m.w2 <= m.w2_floor + 2 * m.w2_floor_std}
        rows.append(row)
        print(json.dumps(row), flush=True)
    want = list(BETTI[args.geometry])
    summary = {"geometry": args.geometry, "seeds": args.seeds,
               "control_with_attractor_topology": sum(r["control_betti"] == want for r in rows),
               "max_energy_rise": max(r["energy_rise"] for r in rows)}
    for k in ("ambient", "riemannian", "relaxed"):
        summary[k] = {"betti_ok": sum(r[k]["betti"] == want for r in rows),
                      "distance_ok": sum(r[k]["distance_ratio"] <= 1.5 for r in rows),
                      "w2_ok": sum(r[k]["w2_ratio"] <= 1.2 for r in rows),
                      "w2_within_2std": sum(r[k]["w2_within_2std"] for r in rows),
                      "worst_distance_ratio": max(r[k]["distance_ratio"] for r in rows),
                      "worst_w2_ratio": max(r[k]["w2_ratio"] for r in rows)}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
