"""Generated activity over seeds: how often it is an attractor population, and how close each
generator comes to the network's states.

For each seed: noisy states of the fitted network (data drawn with that seed), the three
generators of :func:`neurodyn.generative.compare_generators` and the shuffled control; prints one
row per seed (appended to ``--jsonl`` as it finishes, so a long run can be read while it goes)
and, at the end:

- ``kept``: in how many seeds the generated activity is called an attractor population, by the
  one rule of :mod:`neurodyn.generative.verdict`: the states are the network's own (the data's
  verdict is true) and (a)'s samples as generated, before any relaxation, match the held-out
  states (rate W2 in the neurons' space at most 1.2x that of real states). (b) and (c) are
  shaped by the network's manifold (``model_shaped`` in the summary): their counts say how well
  they reproduce the model's states, never that an attractor is kept;
- per generator, the counts the acceptance asks for (Betti numbers of the ring (1, 1, 0) / torus
  (1, 2, 1), normal distance <= 1.5x the data's floor, intrinsic W2 <= 1.2x its i.i.d. floor at
  10 evaluations) with the worst ratios, and its W2 ratio paired with a fresh real sample's of
  the same seed (how many seeds it is above, the two-sided sign test, the medians).

Beside them, per seed:

- ``real_w2_ratio``: the W2 ratio of a fresh real sample (training states never shown to the
  judge as held-out data): what a perfect generator scores, so the count of real samples within
  1.2x is the most any generator can be expected to reach over these seeds;
- ``relax_shift_rms``: how far relaxation (c) moves the decoded coordinate of the ambient
  samples (rad, RMS), beside the W2 ratio before (``ambient``) and after (``relaxed``) it;
- ``cpu_seconds`` (this process) beside ``seconds`` (wall) and the load average.

    python bench/bench_generate_seeds.py --geometry ring --seeds 20
    python bench/bench_generate_seeds.py --geometry torus --seeds 20 --jsonl torus.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time

import torch

from flows.riemannian import intrinsic_w2, log_map
from neurodyn import FitConfig, fit
from neurodyn.analysis.topology import ATTRACTOR_BETTI, betti_numbers
from neurodyn.generative import (
    compare_generators,
    judge_states,
    population_states,
    state_homology,
)
from neurodyn.generative.states import locate
from neurodyn.generative.verdict import MODEL_SHAPED

BETTI = {"ring": ATTRACTOR_BETTI[1], "torus": ATTRACTOR_BETTI[2]}
HELD = 400


def _row(net, seed: int, train_steps: int, keep: str | None = None) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    states = population_states(net, 2000, seed=seed)
    samples: dict = {}
    res = compare_generators(net, states, HELD, train_steps=train_steps, seed=seed,
                             samples=samples)
    if keep:  # every set's rates, float32, so the states can be judged again by other rules
        from _runkit.files import atomic_savez

        os.makedirs(keep, exist_ok=True)
        sets = {**samples, "fresh": states.rates[HELD:2 * HELD]}
        atomic_savez(os.path.join(keep, f"seed{seed}.npz"),
                     **{k: v.to(torch.float32).numpy() for k, v in sets.items()})
    held, fresh = states.phases[:HELD], states.phases[HELD:2 * HELD]
    floor = res.methods["ambient"].w2_floor
    shift = log_map(locate(net, samples["ambient"])[0], locate(net, samples["relaxed"])[0])
    row = {"seed": seed, "seconds": round(time.perf_counter() - t0, 1),
           "cpu_seconds": round(time.process_time() - c0, 1),
           "load": round(os.getloadavg()[0], 1),
           "control_betti": list(res.control_betti), "energy_rise": res.energy_rise,
           "held_betti": list(res.held_betti), "kept": res.verdict.kept,
           "real_w2_ratio": round(intrinsic_w2(fresh, held) / floor, 3),
           "relax_shift_rms": round(float(shift.pow(2).sum(1).mean().sqrt()), 4)}
    for k, m in res.methods.items():
        row[k] = {"betti": list(m.betti), "distance_ratio": round(m.distance_ratio, 3),
                  "w2_ratio": round(m.w2_ratio, 3), "rate_w2_ratio": round(m.rate_w2_ratio, 3),
                  "w2_within_2std": bool(m.w2 <= m.w2_floor + 2 * m.w2_floor_std)}
    return row


def _real_row(net, seed: int) -> dict:
    """No generator: the Betti numbers the judge finds in the held-out states and in a fresh
    real sample of the same size (the most any generator can reach), and the fresh sample's
    W2 ratio."""
    c0 = time.process_time()
    states = population_states(net, 2000, seed=seed)
    held, fresh = states.subset(torch.arange(HELD)), states.subset(torch.arange(HELD, 2 * HELD))
    train = states.subset(torch.arange(HELD, len(states)))
    m = judge_states(net, fresh.rates, held, train, seed=seed)
    return {"seed": seed, "cpu_seconds": round(time.process_time() - c0, 1),
            "held_betti": [int(b) for b in betti_numbers(state_homology(held.rates, seed=seed))],
            "real_betti": list(m.betti), "real_w2_ratio": round(m.w2_ratio, 3),
            "real_distance_ratio": round(m.distance_ratio, 3)}


def sign_test(wins: int, n: int) -> float:
    """Two-sided sign-test p-value of ``wins`` of ``n`` paired comparisons (ties dropped before).

    >>> sign_test(10, 20), round(sign_test(15, 20), 4)
    (1.0, 0.0414)
    """
    k = min(wins, n - wins)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def summarize(rows: list, geometry: str) -> dict:
    """The acceptance counts over ``rows`` (as printed per seed)."""
    want = list(BETTI[geometry])
    summary = {"geometry": geometry, "seeds": len(rows),
               "control_with_attractor_topology": sum(r["control_betti"] == want for r in rows),
               "max_energy_rise": max(r["energy_rise"] for r in rows),
               "real_w2_ok": sum(r["real_w2_ratio"] <= 1.2 for r in rows),
               # rows of runs before the verdict was recorded have no "kept": not counted
               "kept": sum(r.get("kept") is True for r in rows),
               "kept_judged": sum("kept" in r for r in rows),
               "cpu_seconds": round(sum(r["cpu_seconds"] for r in rows), 1),
               "seconds": round(sum(r["seconds"] for r in rows), 1)}
    for k in ("ambient", "riemannian", "relaxed"):
        summary[k] = {"model_shaped": k in MODEL_SHAPED,
                      "betti_ok": sum(r[k]["betti"] == want for r in rows),
                      "distance_ok": sum(r[k]["distance_ratio"] <= 1.5 for r in rows),
                      "w2_ok": sum(r[k]["w2_ratio"] <= 1.2 for r in rows),
                      "w2_within_2std": sum(r[k]["w2_within_2std"] for r in rows),
                      "worst_distance_ratio": max(r[k]["distance_ratio"] for r in rows),
                      "worst_w2_ratio": max(r[k]["w2_ratio"] for r in rows)}
        # paired with the fresh real sample of the same seed: a generator as good as real data
        # is above it in about half the seeds
        pairs = [(r[k]["w2_ratio"], r["real_w2_ratio"]) for r in rows
                 if r[k]["w2_ratio"] != r["real_w2_ratio"]]
        above = sum(a > b for a, b in pairs)
        summary[k].update(
            w2_above_real=above, w2_sign_test_p=round(sign_test(above, len(pairs)), 4),
            median_w2_ratio=round(statistics.median(r[k]["w2_ratio"] for r in rows), 3))
    real = statistics.median(r["real_w2_ratio"] for r in rows)
    summary["median_real_w2_ratio"] = round(real, 3)
    return summary


def main(argv=None) -> dict:
    """Run the seeds; returns the summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--geometry", choices=("ring", "torus"), default="ring")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=0, dest="first_seed")
    p.add_argument("--train-steps", type=int, default=4500)
    p.add_argument("--jsonl", default=None, help="append each seed's row to this file")
    p.add_argument("--real-only", action="store_true", dest="real_only",
                   help="train nothing: per seed, the Betti numbers of the held-out states and "
                        "of a fresh real sample, and the fresh sample's W2 ratio")
    p.add_argument("--keep", default=None,
                   help="folder: write each seed's held-out, fresh and generated rates "
                        "(seedS.npz) to judge them again")
    p.add_argument("--summarize", default=None,
                   help="only print the summary of the rows in this .jsonl file")
    args = p.parse_args(argv)
    if args.summarize:
        with open(args.summarize) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        summary = summarize(rows, args.geometry)
        print(json.dumps(summary, indent=1))
        return summary
    torch.set_num_threads(1)
    net = fit(FitConfig(geometry=args.geometry), progress=False).network
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rows.append(_real_row(net, seed) if args.real_only
                    else _row(net, seed, args.train_steps, args.keep))
        print(json.dumps(rows[-1]), flush=True)
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(rows[-1]) + "\n")
    if args.real_only:
        want = list(BETTI[args.geometry])
        summary = {"geometry": args.geometry, "seeds": len(rows),
                   "held_betti_ok": sum(r["held_betti"] == want for r in rows),
                   "real_betti_ok": sum(r["real_betti"] == want for r in rows),
                   "real_w2_ok": sum(r["real_w2_ratio"] <= 1.2 for r in rows)}
    else:
        summary = summarize(rows, args.geometry)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
