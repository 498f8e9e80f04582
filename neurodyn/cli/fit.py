"""``neurodyn fit``: learn a ring or torus attractor energy."""

from __future__ import annotations

from pathlib import Path

from ..fit import FitConfig
from ..io import write_json
from ..runs import fit_run

__all__ = ["register"]


def _fit(args) -> dict:
    n = None
    if args.n is not None:
        n = args.n[0] if args.manifold == "ring" else tuple(args.n if len(args.n) == 2 else
                                                            args.n * 2)
        if args.manifold == "ring" and len(args.n) != 1:
            raise ValueError(f"--n {args.n}: a ring takes one size")
    cfg = FitConfig(geometry=args.manifold, n=n, lattice=args.lattice, seed=args.seed,
                    steps=args.steps, kappa=args.kappa, bandwidth=args.bandwidth,
                    degree=args.degree, cross_hidden=args.cross_hidden, gain=args.gain,
                    a=args.a, c=args.c)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json({"command": "fit", **cfg.to_dict()}, out / "config.json")
    return fit_run(cfg, out, fresh=args.restart)


def register(sub) -> None:
    """Add the ``fit`` sub-command."""
    f = sub.add_parser("fit", help="learn a ring or torus attractor energy")
    f.add_argument("manifold", choices=("ring", "torus"))
    f.add_argument("--out", required=True, help="output directory")
    f.add_argument("--n", type=int, nargs="+", help="neurons (ring) or n1 n2 (torus)")
    f.add_argument("--lattice", default="hex", choices=("hex", "square"))
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--steps", type=int, default=FitConfig.steps, help="Adam steps")
    f.add_argument("--kappa", type=float, default=FitConfig.kappa,
                   help="normal attraction rate (1/tau)")
    f.add_argument("--bandwidth", type=int, default=FitConfig.bandwidth)
    f.add_argument("--degree", type=int, default=FitConfig.degree)
    f.add_argument("--cross-hidden", type=int, default=0, help="cross-mode network width")
    f.add_argument("--gain", type=float, default=FitConfig.gain)
    f.add_argument("--a", type=float, default=FitConfig.a, help="bump baseline potential")
    f.add_argument("--c", type=float, default=FitConfig.c, help="bump height")
    f.add_argument("--restart", action="store_true", help="ignore an existing checkpoint")
    f.set_defaults(func=_fit)
