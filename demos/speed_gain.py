"""Speed physics: the asymmetric velocity coupling's speed gain and maximum tracked speed.

Rings of N = 128 fitted with kappa = 0.5, 2 and 4; the bump is driven at constant speeds from
0.01 to 41 rad/tau by the asymmetric coupling (one smooth odd kernel calibrated at small speed)
and by the exact transport (the control). v_max is the largest speed whose gain is within 5%
of 1; theory says it scales with kappa.

    python demos/speed_gain.py --out results/speed_gain [--quick]
"""

from __future__ import annotations

import torch
from _models import cache_dir, demo_parser, finish, fitted

from _runkit.timing import Stopwatch
from neurodyn.experiments.speed import DEFAULT_VELOCITIES, speed_study
from neurodyn.fitting.core import FitConfig
from neurodyn.plotting import save_figure


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns v_max per kappa and the curves."""
    p = demo_parser(__doc__, "speed_gain")
    p.add_argument("--width", type=float, default=0.3, help="kernel width of the coupling (rad)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    kappas = (1.0, 2.0) if args.quick else (0.5, 2.0, 4.0)
    nets = {}
    for k in kappas:
        cfg = (FitConfig(n=32, steps=2, kappa=k, seed=args.seed) if args.quick
               else FitConfig(n=128, kappa=k, seed=args.seed))
        nets[k] = fitted(cfg, cache_dir(args.cache, args.out))[0]
    velocities = (0.25, 0.5, 1.0, 2.0) if args.quick else DEFAULT_VELOCITIES
    study = speed_study(nets, "asymmetric", args.width, velocities,
                        duration=10.0 if args.quick else 40.0)
    args.out.mkdir(parents=True, exist_ok=True)
    save_figure(study.figure(), args.out / "speed_gain.png")
    metrics = study.to_dict()
    metrics["figures"] = ["speed_gain.png"]
    metrics["seconds"] = clock.wall_s
    return finish(metrics, args.out)


if __name__ == "__main__":
    main()
