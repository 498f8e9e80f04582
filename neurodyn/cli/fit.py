"""``neurodyn fit``: learn a ring or torus attractor energy."""

from __future__ import annotations

import argparse

from _runkit import BadInput, check_memory

from ..fitting import FitConfig
from ..geometry import LATTICES
from ..runs import fit_run
from ._common import command, open_run, positive, positive_int

__all__ = ["register"]

#: bytes per neuron and perturbation of one fit step (states, rates, spectra, gradients)
_FIT_BYTES_PER_NEURON = 8 * 48


def _fit(args) -> dict:
    n = None
    if args.n is not None:
        if args.manifold == "ring" and len(args.n) != 1:
            raise BadInput(f"--n {' '.join(map(str, args.n))}: a ring takes one size")
        if args.manifold == "torus" and len(args.n) > 2:
            raise BadInput(f"--n {' '.join(map(str, args.n))}: a torus takes n1 [n2]")
        n = args.n[0] if args.manifold == "ring" else tuple(args.n if len(args.n) == 2 else
                                                            args.n * 2)
    cfg = FitConfig(geometry=args.manifold, n=n, lattice=args.lattice, seed=args.seed,
                    steps=args.steps, kappa=args.kappa, bandwidth=args.bandwidth,
                    degree=args.degree, cross_hidden=args.cross_hidden, gain=args.gain,
                    a=args.a, c=args.c)
    size = 128 if n is None else (n if isinstance(n, int) else n[0] * n[1])
    check_memory("--n", float(size) * (cfg.batch + 4) * _FIT_BYTES_PER_NEURON)
    with open_run(args, "fit", config=cfg.to_dict()) as run:
        return fit_run(cfg, run.out, fresh=args.fresh)


def register(sub) -> argparse.ArgumentParser:
    """Add the ``fit`` sub-command."""
    f = sub.add_parser("fit", help="learn a ring or torus attractor energy",
                       description="Fit a SEAL energy whose attractor is a ring or a torus; "
                                   "writes model.pt, metrics.json, config.json and figures.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    f.add_argument("manifold", choices=("ring", "torus"), help="attractor manifold")
    f.add_argument("--out", required=True, help="output directory (locked while the run writes)")
    f.add_argument("--n", type=positive_int, nargs="+", default=None,
                   help="neurons of the ring, or n1 [n2] of the torus (default 128 / 32 32)")
    f.add_argument("--lattice", default="hex", choices=LATTICES, help="torus lattice")
    f.add_argument("--seed", type=int, default=0, help="seeds every random draw of the fit")
    f.add_argument("--steps", type=int, default=FitConfig.steps, help="Adam steps (>= 0)")
    f.add_argument("--kappa", type=positive, default=FitConfig.kappa,
                   help="normal attraction rate (1/tau)")
    f.add_argument("--bandwidth", type=positive_int, default=FitConfig.bandwidth,
                   help="highest Fourier mode of the learned energy")
    f.add_argument("--degree", type=positive_int, default=FitConfig.degree,
                   help="polynomial degree of each mode's energy")
    f.add_argument("--cross-hidden", type=int, default=0,
                   help="width of the cross-mode network (0: none)")
    f.add_argument("--gain", type=positive, default=FitConfig.gain,
                   help="gain of the logistic rate function (1/potential unit)")
    f.add_argument("--a", type=float, default=FitConfig.a,
                   help="bump baseline potential (potential units)")
    f.add_argument("--c", type=positive, default=FitConfig.c, help="bump height (potential units)")
    f.add_argument("--fresh", action="store_true",
                   help="ignore an existing checkpoint in --out and start over")
    f.set_defaults(func=command(_fit))
    return f
