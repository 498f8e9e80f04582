"""Digits, class-conditional: does logit-normal time sampling or the convolutional field change
the sliced W against its floor at equal steps?

Four arms of ``flows train --data digits --labels data``, each over ``--seeds`` seeds (the seed
fixes the splits and the floor, so arms are compared seed by seed):

- ``uniform``: the built-in field, 1,500 steps, batch 512 (the defaults otherwise);
- ``logit-normal``: the same with ``--time-sampling logit-normal``;
- ``builtin-600``: the built-in field, 600 steps, batch 256;
- ``conv-600``: ``flows.field.conv:ConvField`` (16 channels, lr 0.002), 600 steps, batch 256.

Reported per run: pooled sliced W / its floor and the mean over classes of the per-class sliced
W / floor (``metrics.json``); per pair of arms, the mean and spread of the seed-wise
differences. Writes ``<out>/summary.json``.

    nice -n 5 .venv/bin/python bench/flows_options_digits.py --out /tmp/options
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ARMS = {
    "uniform": ["--steps", "1500"],
    "logit-normal": ["--steps", "1500", "--time-sampling", "logit-normal"],
    "builtin-600": ["--steps", "600", "--batch", "256"],
    "conv-600": ["--steps", "600", "--batch", "256", "--lr", "0.002", "--model-class",
                 "flows.field.conv:ConvField", "--model-args", '{"classes": 10, "channels": 16}'],
}
PAIRS = (("logit-normal", "uniform"), ("conv-600", "builtin-600"))


def run_arm(out: Path, arm: str, seed: int) -> dict:
    """Train one arm at one seed (or reuse a finished run) and return its two ratios."""
    run = out / f"{arm}-{seed}"
    if not (run / "metrics.json").is_file():
        subprocess.run([sys.executable, "-m", "flows.cli", "train", "--data", "digits",
                        "--labels", "data", "--seed", str(seed), "--out", str(run),
                        *ARMS[arm]], check=True, stdout=subprocess.DEVNULL)
    m = json.loads((run / "metrics.json").read_text())
    per = [c["ratio"] for c in m["per_class"]]
    return {"sliced_ratio": m["sliced_heldout"] / m["sliced_floor"],
            "per_class_ratio": sum(per) / len(per)}


def main() -> None:
    """Run the arms and print the summary as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    res = {arm: [run_arm(args.out, arm, s) for s in range(args.seeds)] for arm in ARMS}
    summary: dict = {"runs": res, "differences": {}}
    for a, b in PAIRS:
        for key in ("sliced_ratio", "per_class_ratio"):
            d = [x[key] - y[key] for x, y in zip(res[a], res[b], strict=True)]
            summary["differences"][f"{a} - {b}: {key}"] = {
                "per_seed": d, "mean": statistics.mean(d),
                "sd": statistics.stdev(d) if len(d) > 1 else None}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary["differences"], indent=1))


if __name__ == "__main__":
    main()
