"""``neurodyn generate`` on recorded-like counts: is the generated population called an
attractor population only when the data is an attractor's?

Per seed, two populations of tests/independent_populations.py (numpy only, Poisson counts, the
real Tanni trajectory; 60 head-direction cells, 5 min in 10 ms bins by default): ``gain``
(feed-forward, the bump at the heading, one shared multiplicative gain) and ``attractor`` (the
bump drifts about the heading, coherent amplitude and width fluctuations). Each goes through the
commands a user runs: ``neurodyn fit-activity ring`` (its model folder and verdict), then
``neurodyn generate --model FOLDER --data COUNTS``. One row per run: the data's own verdict,
the generate verdict (``kept``), the ambient flow's rate W2 over its floor as generated, the
relaxed set's numbers (which the verdict does not judge: relaxation puts any flow's states on
the model's ring), the shuffled control's rate W2 and the Betti numbers.

The verdict must differ: ``gain`` never kept (its data verdict is not true), ``attractor`` kept
where its data verdict is true and the samples match the held-out states.

    python bench/bench_generate_counts.py --seeds 3 --jsonl results/bench/generate_counts.jsonl
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

KINDS = ("gain", "attractor")


def run(kind: str, seed: int, seconds: float, count: int, held: int, train_steps: int,
        folder: Path) -> dict:
    """fit-activity then generate on one population; the row."""
    from bench_verdict import _generators  # tests/independent_populations.py, registered

    from neurodyn.cli import main

    hd_population = _generators().hd_population

    t0, c0 = time.perf_counter(), time.process_time()
    data = hd_population(kind, seed, cells=60, seconds=seconds).npz(folder / f"{kind}.npz")
    fit_rc = main(["fit-activity", "ring", "--data", str(data), "--out", str(folder / "model"),
                   "--n", "48", "--seed", str(seed)])
    fitted = json.loads((folder / "model" / "metrics.json").read_text())
    row = {"kind": kind, "seed": seed, "fit_exit": fit_rc, "fit_attractor": fitted["attractor"]}
    if fit_rc != 0:
        return {**row, "generate_exit": None}
    gen_rc = main(["generate", "--model", str(folder / "model"), "--data", str(data), "--out",
                   str(folder / "gen"), "--count", str(count), "--held", str(held),
                   "--train-steps", str(train_steps), "--seed", str(seed)])
    m = json.loads((folder / "gen" / "metrics.json").read_text())
    v, relaxed = m["verdict"], m["methods"]["relaxed"]
    return {**row, "generate_exit": gen_rc, "data_attractor": v["data_attractor"],
            "kept": v["kept"], "reason": v["reason"],
            "ambient_rate_w2_ratio": round(v["rate_w2_ratio"], 3),
            "ambient_betti": v["betti"], "held_betti": v["held_betti"],
            "relaxed_rate_w2_ratio": round(relaxed["rate_w2_ratio"], 3),
            "relaxed_w2_ratio": round(relaxed["w2_ratio"], 3), "relaxed_betti": relaxed["betti"],
            "control_rate_w2_ratio": round(m["control_rate_w2_ratio"], 3),
            "seconds": round(time.perf_counter() - t0, 1),
            "cpu_seconds": round(time.process_time() - c0, 1)}


def summarize(rows: list) -> dict:
    """Per kind: runs, how many were kept, data verdicts, the ambient and control ratios."""
    out = {}
    for kind in KINDS:
        rs = [r for r in rows if r["kind"] == kind and r.get("generate_exit") == 0]
        out[kind] = {"runs": len(rs), "kept": sum(r["kept"] is True for r in rs),
                     "data_true": sum(r["data_attractor"] is True for r in rs),
                     "ambient_rate_w2_ratios": [r["ambient_rate_w2_ratio"] for r in rs],
                     "relaxed_w2_ratios": [r["relaxed_w2_ratio"] for r in rs],
                     "relaxed_betti": [r["relaxed_betti"] for r in rs],
                     "control_rate_w2_ratios": [r["control_rate_w2_ratio"] for r in rs]}
    return out


def main(argv=None) -> dict:
    """Run the seeds; returns the summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--first-seed", type=int, default=0, dest="first_seed")
    p.add_argument("--seconds", type=float, default=300.0, help="recording length (s)")
    p.add_argument("--count", type=int, default=900)
    p.add_argument("--held", type=int, default=300)
    p.add_argument("--train-steps", type=int, default=600, dest="train_steps")
    p.add_argument("--jsonl", default=None, help="append each run's row to this file")
    args = p.parse_args(argv)
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for kind in KINDS:
            with tempfile.TemporaryDirectory() as tmp:
                rows.append(run(kind, seed, args.seconds, args.count, args.held,
                                args.train_steps, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(rows[-1]) + "\n")
    summary = summarize(rows)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
