"""``neurodyn simulate``: simulate a fitted model from perturbed states or given potentials;
the run is :func:`neurodyn.runs.simulate.simulate_run` (durations parsed here, in tau)."""

from __future__ import annotations

import argparse

from ._common import (
    METHODS,
    PERTURBATIONS,
    add_device_argument,
    args_config,
    command,
    config_of,
    nonnegative,
    parse_time,
    positive,
    positive_int,
    seed_arg,
)

__all__ = ["register"]


def _simulate(args) -> dict:
    from ..runs.simulate import SimulateConfig, simulate_run

    duration = parse_time(args.duration, args.tau_seconds, "--duration")
    dt = parse_time(args.dt, args.tau_seconds, "--dt")
    config = config_of(SimulateConfig, args, duration=duration, dt=dt)
    return simulate_run(config, args.out, arguments=args_config(args))


def register(sub) -> argparse.ArgumentParser:
    """Add the ``simulate`` sub-command."""
    s = sub.add_parser("simulate", help="simulate a fitted model",
                       description="Simulate a fitted model from perturbed manifold states or "
                                   "given potentials; writes trajectory.npz, metrics.json, "
                                   "config.json and figures.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    s.add_argument("--model", required=True, help="directory holding model.pt (or the file)")
    s.add_argument("--out", required=True, help="output directory (locked while the run writes)")
    src = s.add_mutually_exclusive_group()
    src.add_argument("--init", default=None,
                     help="FILE.npy of potentials: (B, N) for a ring; (B, n1, n2) or (B, N) "
                          "for a torus (potential units; default: none, --perturb draws them)")
    src.add_argument("--perturb", choices=PERTURBATIONS, default="noise",
                     help="perturbation of random manifold states")
    s.add_argument("--strength", type=nonnegative, default=0.3,
                   help="relative perturbation size ||du|| / ||u*|| (dimensionless)")
    s.add_argument("--strength-max", type=nonnegative, default=None,
                   help="draw strengths uniformly in [strength, strength-max] (default: none, "
                        "every state at --strength)")
    s.add_argument("--count", type=positive_int, default=16, help="number of perturbed states")
    s.add_argument("--velocity", default=None,
                   help="constant:V | sine:AMP:FREQ | steps:V1,V2,...:HOLD | "
                        "ou:SIGMA:TIMESCALE[:VMAX] (rad per tau; times in tau; default: none, "
                        "no velocity input)")
    s.add_argument("--velocity-file", default=None,
                   help="FILE.npy of velocities (rad per tau) sampled every --dt: (steps,) or "
                        "(steps, B) for a ring, (steps, 2) or (steps, B, 2) for a torus "
                        "(default: none)")
    s.add_argument("--duration", default="20", help="simulated time (tau; or with unit s / ms)")
    s.add_argument("--dt", default="0.1", help="integration step (tau; or with unit s / ms)")
    s.add_argument("--tau-seconds", type=positive, default=0.01,
                   help="tau in seconds, for durations given in s or ms")
    s.add_argument("--method", choices=METHODS, default=None,
                   help="integrator (default: rk4, or euler (Euler-Maruyama) with --noise)")
    s.add_argument("--noise", type=nonnegative, default=0.0,
                   help="noise sigma on u (potential units per sqrt(tau)); needs euler")
    s.add_argument("--save-every", type=positive_int, default=10,
                   help="steps between saved states")
    s.add_argument("--seed", type=seed_arg, default=0, help="seeds perturbations and noise")
    s.add_argument("--nwb", action="store_true",
                   help="also write activity.nwb: the rates of every run in NWB, times in "
                        "seconds through --tau-seconds (needs the nwb extra)")
    add_device_argument(s)
    s.set_defaults(func=command(_simulate))
    return s
