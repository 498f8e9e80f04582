"""8x8 digits (scikit-learn's copy of the UCI optical digits) generated from N(0, I): a grid
of samples beside held-out digits, and the sliced Wasserstein distance with its floor.

    python demos/flows_digits.py --out results/flows_digits [--quick]
"""

from __future__ import annotations

import torch
from _models import demo_parser, finish

from flows.runs.run import run_training
from flows.training.loop import TrainConfig


def main(argv: list[str] | None = None) -> dict:
    """Train on digits and draw samples; returns the metrics (also in OUT/metrics.json)."""
    p = demo_parser(__doc__, "flows_digits", cache=False)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    steps, width = (100, 64) if a.quick else (4000, 1024)
    cfg = TrainConfig(data="digits", steps=steps, width=width, batch=256, lr=3e-3, seed=a.seed,
                      n_eval=1000)
    m = run_training(cfg, a.out / "train", fresh=True, progress=False).to_dict()
    out = {"sliced_w": m["sliced_heldout"], "sliced_floor": m["sliced_floor"],
           "sliced_floor_std": m["sliced_floor_std"], "floor_pairs": m["floor_pairs"],
           "w2": m["w2_heldout"], "w2_floor": m["w2_floor"], "w2_floor_std": m["w2_floor_std"],
           "n_eval": m["n_eval"],
           "steps": steps,
           "train_wall_time_s": m["train_wall_time_s"],
           "figures": [f"train/{f}" for f in m["figures"]]}
    return finish(out, a.out)


if __name__ == "__main__":
    main()
