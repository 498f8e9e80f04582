"""``neurodyn simulate``: simulate a fitted model from perturbed states or given potentials."""

from __future__ import annotations

import numpy as np

from ..inputs import ArrayVelocity, parse_velocity
from ..io import load_states
from ..perturb import PERTURBATIONS, perturbed_states
from ..runs import simulate_run
from ..simulate import METHODS
from ._common import parse_time, prepare

__all__ = ["register"]


def _initial_state(args, network):
    if args.init is not None:
        return load_states(args.init, network.geometry, name="--init")
    if network.manifold is None:
        raise ValueError("--perturb: the model has no manifold; give --init FILE.npy")
    if args.count < 1:
        raise ValueError(f"--count {args.count}: must be >= 1")
    return perturbed_states(network.manifold, args.count, args.perturb, args.strength,
                            args.strength_max, args.seed)


def _simulate(args) -> dict:
    network, out = prepare(args, "simulate")
    duration = parse_time(args.duration, args.tau_seconds)
    dt = parse_time(args.dt, args.tau_seconds)
    u0 = _initial_state(args, network)
    velocity = None
    if args.velocity is not None and args.velocity_file is not None:
        raise ValueError("--velocity and --velocity-file: give one, not both")
    if args.velocity is not None:
        velocity = parse_velocity(args.velocity)
    elif args.velocity_file is not None:
        velocity = ArrayVelocity(np.load(args.velocity_file), dt)
    return simulate_run(network, u0, duration, dt, out, method=args.method, velocity=velocity,
                        noise=args.noise, save_every=args.save_every, seed=args.seed,
                        progress_bar=None, device=args.device)


def register(sub) -> None:
    """Add the ``simulate`` sub-command."""
    s = sub.add_parser("simulate", help="simulate a fitted model")
    s.add_argument("--model", required=True, help="directory holding model.pt")
    s.add_argument("--out", required=True)
    src = s.add_mutually_exclusive_group()
    src.add_argument("--init", help="FILE.npy of potentials (B, N) or (B, n1, n2)")
    src.add_argument("--perturb", choices=PERTURBATIONS, default="noise")
    s.add_argument("--strength", type=float, default=0.3, help="relative perturbation size")
    s.add_argument("--strength-max", type=float, default=None,
                   help="draw strengths uniformly in [strength, strength-max]")
    s.add_argument("--count", type=int, default=16, help="number of perturbed states")
    s.add_argument("--velocity", help="constant:V | sine:AMP:FREQ | steps:V1,V2,...:HOLD | "
                                      "ou:SIGMA:TIMESCALE[:VMAX] (rad per tau)")
    s.add_argument("--velocity-file", help="FILE.npy velocities sampled every DT")
    s.add_argument("--duration", default="20", help="time (tau; or with unit s / ms)")
    s.add_argument("--dt", default="0.1", help="step (tau; or with unit s / ms)")
    s.add_argument("--tau-seconds", type=float, default=0.01,
                   help="tau in seconds, for durations given in s or ms")
    s.add_argument("--method", choices=METHODS, default=None)
    s.add_argument("--noise", type=float, default=0.0, help="noise sigma on u")
    s.add_argument("--save-every", type=int, default=10)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--device", default="cpu",
                   help="cpu or cuda (cuda:I); fixed-step runs on the CPU are compiled")
    s.set_defaults(func=_simulate)
