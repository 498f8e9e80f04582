"""The over-parameterized theory regime: convergence versus width, weight drift, lambda_0,
generalization versus n, and W2 versus n and m.

    python demos/flows_theory.py --out results/flows_theory [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _models import demo_parser, finish  # noqa: E402

from flows.run import run_samples_experiment, run_width_experiment  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    """Run both sweeps; returns their metrics (also written to OUT/metrics.json)."""
    p = demo_parser(__doc__, "flows_theory", cache=False)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    if a.quick:
        widths, n, ns, width, steps = [64, 256], 32, [16, 32], 256, 20
    else:
        widths, n, ns, width, steps = [256, 1024, 4096], 256, [32, 64, 128, 256], 1024, 200
    wid = run_width_experiment(a.out / "width", widths, n=n, k=4, steps=steps,
                               seed=a.seed).to_dict()
    sam = run_samples_experiment(a.out / "samples", ns, width=width, k=4, steps=steps,
                                 seed=a.seed).to_dict()
    out = {"widths": widths, "lambda_0": wid["lambda_0"], "drift": wid["drift"],
           "drift_slope": wid["drift_slope"], "log_loss_slope": wid["log_loss_slope"],
           "log_loss_r2": wid["log_loss_r2"], "log_loss_r2_late": wid["log_loss_r2_late"],
           "guaranteed_log_rate": wid["guaranteed_log_rate"],
           "below_guarantee": wid["below_guarantee"], "w2_vs_width": wid["w2"],
           "ns": ns, "generalization_gap": sam["generalization_gap"], "w2_vs_n": sam["w2"],
           "w2_floor": sam["w2_floor"],
           "figures": [f"width/{f}" for f in wid["figures"]]
           + [f"samples/{f}" for f in sam["figures"]]}
    return finish(out, a.out)


if __name__ == "__main__":
    main()
