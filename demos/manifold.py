"""Manifold pictures: embeddings, persistent homology, energy landscape, the bump's path.

Population activity of the default learned ring (N = 128) and hex torus (32 x 32) is embedded
with PCA (3-D) and Isomap; its persistent homology gives Betti numbers (1, 1, 0) and (1, 2, 1);
the energy is flat along the manifold and a valley across it. ``--animate`` adds GIFs of the
moving bump on the ring and on the sheet.

    python demos/manifold.py --out results/manifold [--quick] [--animate]
"""

from __future__ import annotations

import torch
from _models import cache_dir, demo_parser, fitted

from _runkit.timing import Stopwatch
from neurodyn.fitting.core import FitConfig
from neurodyn.io import write_json
from neurodyn.runs import manifold_report


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns the manifold metrics of the ring and the torus."""
    p = demo_parser(__doc__, "manifold")
    p.add_argument("--animate", action="store_true", help="also write GIFs (slower)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    configs = {
        "ring": FitConfig(n=64 if args.quick else 128, steps=2 if args.quick else 8,
                          seed=args.seed),
        "torus": FitConfig(geometry="torus", n=(16, 16) if args.quick else (32, 32),
                           steps=2 if args.quick else 8, seed=args.seed),
    }
    metrics = {}
    for name, cfg in configs.items():
        net, info = fitted(cfg, cache_dir(args.cache, args.out))
        kwargs = {"samples": 600} if args.quick else {}
        metrics[name] = {"fit": info, **manifold_report(net, args.out / name, seed=args.seed,
                                                        animate=args.animate, **kwargs)}
    metrics["seconds"] = clock.wall_s
    write_json(metrics, args.out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
