"""``neurodyn fit``: learn a ring or torus attractor energy."""

from __future__ import annotations

from dataclasses import fields
from types import SimpleNamespace

from _runkit import BadInput

from ..fitting.config import FAMILIES, FitConfig
from ._common import (
    add_device_argument,
    command,
    nonnegative,
    options_named,
    positive,
    positive_int,
    seed_arg,
)

__all__ = ["register"]


def _fit(args) -> dict:
    from ..runs.fit import fit_run

    with options_named(FitConfig):
        return fit_run(_make_config(args, _sizes(args)), args.out, fresh=args.fresh)


def _sizes(args) -> int | tuple[int, int] | None:
    """``--n`` as the config's ``n``: one size for a ring, ``n1 n2`` (or one for both) for a
    torus."""
    if args.n is None:
        return None
    if args.manifold == "ring":
        if len(args.n) != 1:
            raise BadInput(f"--n {args.n}: a ring takes one size")
        return args.n[0]
    if len(args.n) > 2:
        raise BadInput(f"--n {' '.join(map(str, args.n))}: n={list(args.n)}; a torus "
                       "takes n1 [n2]")
    return tuple(args.n if len(args.n) == 2 else args.n * 2)


def _make_config(args, n) -> FitConfig:
    return FitConfig(geometry=args.manifold, n=n, lattice=args.lattice, seed=args.seed,
                     steps=args.steps, batch=args.batch, kappa=args.kappa, family=args.family,
                     bandwidth=args.bandwidth, degree=args.degree,
                     pointwise_degree=args.pointwise_degree,
                     pointwise_inverse=not args.no_inverse, phaselock=args.phaselock,
                     weight_linear=args.weight_linear, weight_field=args.weight_field,
                     weight_energy=args.weight_energy, strength=args.strength,
                     kappa_tol=args.kappa_tol, check_kappa=not args.no_kappa_check,
                     hidden=args.hidden, lr=args.lr, gain=args.gain, a=args.a, c=args.c,
                     variable=args.variable, device=args.device, profile=args.profile)


def _lock(text: str) -> bool:
    if text not in ("on", "off"):
        raise BadInput(f"--phaselock {text!r}: choose 'on' or 'off'")
    return text == "on"


def register(sub) -> None:
    """Add the ``fit`` sub-command."""
    d = SimpleNamespace(**{f.name: f.default for f in fields(FitConfig)})  # builds no device
    f = sub.add_parser("fit", help="learn a ring or torus attractor energy",
                       description="Fit a SEAL energy whose attractor is a ring or a torus; "
                                   "writes model.pt, metrics.json, config.json and figures.")
    f.add_argument("manifold", choices=("ring", "torus"), help="attractor manifold")
    f.add_argument("--out", required=True, help="output directory")
    f.add_argument("--n", type=positive_int, nargs="+", help="neurons (ring) or n1 n2 (torus); "
                   "default 128 / 32 32")
    f.add_argument("--lattice", default="hex", choices=("hex", "square"),
                   help="torus lattice (default hex)")
    f.add_argument("--seed", type=seed_arg, default=0, help="seeds every sampled batch (default 0)")
    f.add_argument("--steps", type=int, default=d.steps,
                   help=f"sampled batches of states (default {d.steps})")
    f.add_argument("--batch", type=positive_int, default=d.batch,
                   help=f"manifold points per batch, each probed by every kind (default {d.batch})")
    f.add_argument("--kappa", type=positive, default=d.kappa,
                   help=f"normal attraction rate, 1/tau (default {d.kappa:g})")
    _add_energy_arguments(f, d)
    _add_objective_arguments(f, d)
    f.add_argument("--gain", type=positive, default=d.gain, help="logistic gain (default 1)")
    f.add_argument("--a", type=float, default=d.a, help="bump baseline potential (default -2)")
    f.add_argument("--c", type=float, default=d.c, help="bump height (default 4)")
    f.add_argument("--fresh", action="store_true",
                   help="discard an existing checkpoint and start over")
    add_device_argument(f, "the network and the batched design run there, checkpoints are "
                        "saved on the CPU (resume on any device)")
    f.set_defaults(func=command(_fit))
    return f


def _add_energy_arguments(f, d: SimpleNamespace) -> None:
    """Add to parser ``f`` the energy family and its terms (``d``: the defaults of
    :class:`FitConfig`)."""
    f.add_argument("--profile", default=d.profile, metavar="P",
                   help="target bump: cosine (default), von-mises:K, flat-top:W (half-width W "
                   "rad), asymmetric:S (0 < |S| < 1) or FILE.npy of target rates ((N,) ring, "
                   "(n1, n2) torus)")
    f.add_argument("--family", choices=FAMILIES, default=d.family,
                   help="energy family: seal (spectral + pointwise [+ phase locking]), the "
                   "power spectrum alone, a neural energy trained by Adam, or a learned "
                   "template (default: seal for the cosine profile, template otherwise)")
    f.add_argument("--hidden", type=positive_int, default=d.hidden,
                   help=f"width of the neural energy, family mlp (default {d.hidden})")
    f.add_argument("--lr", type=positive, default=d.lr,
                   help=f"Adam learning rate, family mlp (default {d.lr:g})")
    f.add_argument("--bandwidth", type=positive_int, default=None,
                   help="highest wave number with learned curvature (default 4 ring, 2 torus); "
                   "family template: the template's harmonics per axis (default: all)")
    f.add_argument("--degree", type=positive_int, default=None,
                   help="polynomial terms per mode (default 5 ring, 4 torus)")
    f.add_argument("--variable", choices=("amplitude", "power"), default=d.variable,
                   help="variable of the per-mode polynomials: the Fourier amplitude |z_k| or "
                   f"the power |z_k|^2 (default {d.variable})")
    f.add_argument("--pointwise-degree", type=int, default=d.pointwise_degree,
                   help=f"powers of the rate in h' (default {d.pointwise_degree})")
    f.add_argument("--no-inverse", action="store_true",
                   help="drop the inverse-rate basis function of the pointwise term")
    f.add_argument("--phaselock", type=_lock, default=None,
                   help="phase-locking terms on/off (default: on for the torus)")


def _add_objective_arguments(f, d: SimpleNamespace) -> None:
    """Add to parser ``f`` the weights of the fitted terms and the check of kappa (``d``: the
    defaults of :class:`FitConfig`)."""
    f.add_argument("--weight-linear", type=nonnegative, default=d.weight_linear,
                   help=f"weight of the linearised normal field (default {d.weight_linear:g})")
    f.add_argument("--weight-field", type=nonnegative, default=d.weight_field,
                   help=f"weight of the finite restoring field (default {d.weight_field:g})")
    f.add_argument("--weight-energy", type=nonnegative, default=d.weight_energy,
                   help=f"weight of the energy against kappa B (default {d.weight_energy:g})")
    f.add_argument("--strength", type=positive, default=d.strength,
                   help=f"largest relative size of finite perturbations (default {d.strength:g})")
    f.add_argument("--kappa-tol", type=float, default=None,
                   help="relative tolerance of every normal eigenvalue (default 0.05 ring, "
                   "0.10 torus); missed -> exit 1")
    f.add_argument("--no-kappa-check", action="store_true",
                   help="write the model even when kappa is not reached")
