"""``neurodyn simulate``: simulate a fitted model from perturbed states or given potentials."""

from __future__ import annotations

import argparse
import math

from _runkit import BadInput
from _runkit.checks import check_installed

from ._common import (
    METHODS,
    PERTURBATIONS,
    add_device_argument,
    args_config,
    check_states_memory,
    command,
    load_network,
    nonnegative,
    open_run,
    parse_time,
    parse_velocity_arg,
    positive,
    positive_int,
    seed_arg,
)

__all__ = ["register"]


def _initial_state(args, network):
    from ..dynamics.perturbations import perturbed_states
    from ..io import load_states

    if args.init is not None:
        return load_states(args.init, network.geometry, name="--init")
    if network.manifold is None:
        raise BadInput("--perturb: the model has no manifold; give --init FILE.npy")
    if args.strength_max is not None and args.strength_max < args.strength:
        raise BadInput(f"--strength-max={args.strength_max}: must be >= --strength="
                       f"{args.strength}")
    return perturbed_states(network.manifold, args.count, args.perturb, args.strength,
                            args.strength_max, args.seed)


def _check_velocity(velocity, name: str, duration: float, dt: float, batch: int,
                    dim: int) -> None:
    """Refuse a velocity that the simulation would refuse (its parameters, its shape, an array
    shorter than ``duration``), naming the option, before the run directory is claimed.

    A copy is prepared, so the velocity given is left as it was; a random (Ornstein-Uhlenbeck)
    velocity is drawn for one step only, as its checks do not depend on the duration.
    """
    import copy

    import torch

    from ..dynamics.inputs import OrnsteinUhlenbeck

    span = dt if isinstance(velocity, OrnsteinUhlenbeck) else duration
    try:
        copy.copy(velocity).prepare(span, dt, batch, dim, torch.Generator().manual_seed(0))
    except BadInput as err:
        raise BadInput(f"{name}: {err}", param=name.lstrip("-").replace("-", "_")) from None


def _simulate(args) -> dict:
    from ..dynamics.inputs import ArrayVelocity
    from ..io import load_velocity_array
    from ..runs import simulate_run

    duration = parse_time(args.duration, args.tau_seconds, "--duration")
    dt = parse_time(args.dt, args.tau_seconds, "--dt")
    if dt > duration:
        raise BadInput(f"--dt={args.dt}: larger than --duration={args.duration}")
    network = load_network(args.model)
    g = network.geometry
    batch = 1 if args.init is not None else args.count
    saved = math.floor(duration / dt / args.save_every) + 2
    check_states_memory("--duration/--dt/--save-every", saved, batch, g.size)
    u0 = _initial_state(args, network)
    check_states_memory("--duration/--dt/--save-every", saved, u0.shape[0], g.size)
    if args.noise > 0 and args.method not in (None, "euler"):
        raise BadInput(f"--method={args.method} with --noise={args.noise:g}: noise > 0 needs "
                       "method='euler' (Euler-Maruyama)")
    velocity = None
    if args.velocity is not None and args.velocity_file is not None:
        raise BadInput("--velocity and --velocity-file: give one, not both")
    if args.velocity is not None:
        velocity = parse_velocity_arg(args.velocity)
        _check_velocity(velocity, "--velocity", duration, dt, u0.shape[0], g.dim)
    elif args.velocity_file is not None:
        velocity = ArrayVelocity(load_velocity_array(args.velocity_file, "--velocity-file"), dt)
        _check_velocity(velocity, "--velocity-file", duration, dt, u0.shape[0], g.dim)
    resolved = {"method": args.method or ("euler" if args.noise > 0 else "rk4"),  # as run
                "strength_max": args.strength if args.strength_max is None else args.strength_max}
    if args.nwb:
        check_installed("pynwb", "nwb", "--nwb (an NWB file of the activity)")
    with open_run(args, "simulate", config={**args_config(args), **resolved}) as run:
        metrics = simulate_run(network, u0, duration, dt, run.out, method=args.method,
                               velocity=velocity, noise=args.noise, save_every=args.save_every,
                               seed=args.seed, progress=None,
                               device=args.device)
        if args.nwb:
            from ..interop import export_run_nwb

            export_run_nwb(run.out, args.tau_seconds)
        return metrics


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
