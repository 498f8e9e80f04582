"""``neurodyn restore``, ``path-integrate`` and ``diffuse``: standard experiments on a model."""

from __future__ import annotations

from ..runs import diffuse_run, path_integrate_run, restore_run
from ._common import experiment_parser, prepare

__all__ = ["register"]


def _restore(args) -> dict:
    network, out = prepare(args, "restore")
    return restore_run(network, out, args.count, tuple(args.kinds.split(",")),
                       (args.strength_min, args.strength_max), args.duration, args.dt,
                       args.threshold, args.seed)


def _path_integrate(args) -> dict:
    network, out = prepare(args, "path-integrate")
    return path_integrate_run(network, out, args.velocity, args.runs, args.duration, args.dt,
                              args.seed)


def _diffuse(args) -> dict:
    network, out = prepare(args, "diffuse")
    return diffuse_run(network, out, args.noise, args.runs, args.duration, args.dt, args.seed)


def register(sub) -> None:
    """Add the ``restore``, ``path-integrate`` and ``diffuse`` sub-commands."""
    r = experiment_parser(sub, "restore", "restoration experiment from perturbed states",
                          _restore, duration=20.0, dt=0.1)
    r.add_argument("--count", type=int, default=256)
    r.add_argument("--kinds", default="noise,shape,amplitude,lesion")
    r.add_argument("--strength-min", type=float, default=0.1)
    r.add_argument("--strength-max", type=float, default=0.5)
    r.add_argument("--threshold", type=float, default=0.01)

    pi = experiment_parser(sub, "path-integrate", "velocity-driven bump vs integrated velocity",
                           _path_integrate, duration=200.0, dt=0.1)
    pi.add_argument("--velocity", default="ou:0.2:10:0.5")
    pi.add_argument("--runs", type=int, default=64)

    d = experiment_parser(sub, "diffuse", "bump diffusion under noise vs theory", _diffuse,
                          duration=200.0, dt=0.05)
    d.add_argument("--noise", type=float, default=0.05)
    d.add_argument("--runs", type=int, default=128)
