"""Restoration: perturbed states relax back to the ring and to the torus, energy never rising.

For each perturbation kind (white noise, band-limited shape, amplitude, lesion of 20% of the
neurons) states at random manifold points are perturbed to relative distances 0.1-0.5 and
simulated autonomously for 20 tau. Writes per-kind distance curves, the energy descent, the
Jacobian spectra and metrics.json.

    python demos/attractor_restoration.py --out results/restoration [--quick]
"""

from __future__ import annotations

import torch
from _models import attractor_configs, cache_dir, demo_parser, fitted

from _runkit.timing import Stopwatch
from neurodyn.io import write_json
from neurodyn.runs import restore_run, write_network_report


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics (``ring`` and ``torus``)."""
    p = demo_parser(__doc__, "restoration")
    p.add_argument("--count", type=int, default=256, help="states per perturbation kind")
    p.add_argument("--torus-n", type=int, default=16, help="torus sheet size (n x n)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    count = 8 if args.quick else args.count
    cache = cache_dir(args.cache, args.out)
    configs = attractor_configs(args.quick, args.seed, args.torus_n)
    metrics = {}
    for name, cfg in configs.items():
        net, info = fitted(cfg, cache)
        out = args.out / name
        report = write_network_report(net, out)
        rest = restore_run(net, out, count=count if name == "ring" else max(4, count // 4),
                           seed=args.seed)
        metrics[name] = {"fit": info, **report, "restoration": rest,
                         "worst_fraction_within": min(rest[k]["fraction_within"]
                                                      for k in ("noise", "shape", "amplitude",
                                                                "lesion")),
                         "energy_ok": all(rest[k]["energy"]["ok"] for k in
                                          ("noise", "shape", "amplitude", "lesion"))}
    metrics["seconds"] = clock.wall_s
    write_json(metrics, args.out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
