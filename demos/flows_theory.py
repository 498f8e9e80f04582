"""The over-parameterized theory regime: convergence versus width, weight drift, lambda_0,
generalization versus n, and W2 versus n and m.

    python demos/flows_theory.py --out results/flows_theory [--quick]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from flows.checkpoint import atomic_write_json
from flows.run import run_samples_experiment, run_width_experiment


def main(argv: list[str] | None = None) -> dict:
    """Run both sweeps; returns their metrics (also written to OUT/metrics.json)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--quick", action="store_true", help="tiny size (for tests)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    if a.quick:
        widths, n, ns, width, steps = [64, 256], 32, [16, 32], 256, 20
    else:
        widths, n, ns, width, steps = [256, 1024, 4096], 256, [32, 64, 128, 256], 1024, 200
    wid = run_width_experiment(a.out / "width", widths, n=n, k=4, steps=steps, seed=a.seed)
    sam = run_samples_experiment(a.out / "samples", ns, width=width, k=4, steps=steps,
                                 seed=a.seed)
    out = {"widths": widths, "lambda_0": wid["lambda_0"], "drift": wid["drift"],
           "drift_slope": wid["drift_slope"], "log_loss_slope": wid["log_loss_slope"],
           "log_loss_r2": wid["log_loss_r2"], "log_loss_r2_late": wid["log_loss_r2_late"],
           "guaranteed_log_rate": wid["guaranteed_log_rate"],
           "below_guarantee": wid["below_guarantee"], "w2_vs_width": wid["w2"],
           "ns": ns, "generalization_gap": sam["generalization_gap"], "w2_vs_n": sam["w2"],
           "w2_floor": sam["w2_floor"],
           "figures": [f"width/{f}" for f in wid["figures"]]
           + [f"samples/{f}" for f in sam["figures"]]}
    atomic_write_json(out, a.out / "metrics.json")
    print(json.dumps({k: v for k, v in out.items() if k != "figures"}, indent=1))
    return out


if __name__ == "__main__":
    main()
