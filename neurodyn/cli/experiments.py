"""``neurodyn restore``, ``path-integrate``, ``diffuse`` and ``speed-gain``: standard experiments
on a model."""

from __future__ import annotations

import argparse
import math

from _runkit import BadInput

from ._common import (
    PERTURBATIONS,
    args_config,
    check_states_memory,
    experiment_parser,
    load_network,
    nonnegative,
    open_run,
    parse_velocity_arg,
    positive,
    positive_int,
)

__all__ = ["register", "VELOCITY_COUPLINGS"]

#: ``--velocity-coupling`` choices (those of :func:`neurodyn.network.velocity_coupling`, spelled
#: here so that ``--help`` imports no torch).
VELOCITY_COUPLINGS = ("exact", "asymmetric")


def _steps(args) -> int:
    if args.dt > args.duration:
        raise BadInput(f"--dt={args.dt}: larger than --duration={args.duration}")
    return math.floor(args.duration / args.dt) + 1


def _restore(args) -> dict:
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    allowed = tuple(k for k in PERTURBATIONS if k != "none")
    if not kinds or any(k not in allowed for k in kinds):
        raise BadInput(f"--kinds={args.kinds!r}: give comma-separated kinds from {allowed}")
    if args.strength_max < args.strength_min:
        raise BadInput(f"--strength-max={args.strength_max}: must be >= --strength-min="
                       f"{args.strength_min}")
    from ..runs import restore_run

    network = load_network(args.model)
    saved = _steps(args) // max(1, round(1.0 / args.dt)) + 2
    check_states_memory("--count/--duration", saved, args.count * len(kinds),
                        network.geometry.size)
    with open_run(args, "restore") as run:
        return restore_run(network, run.out, args.count, kinds,
                           (args.strength_min, args.strength_max), args.duration, args.dt,
                           args.threshold, args.seed, device=args.device)


def _path_integrate(args) -> dict:
    from ..runs import path_integrate_run

    velocity = parse_velocity_arg(args.velocity)
    network = load_network(args.model)
    saved = _steps(args) // max(1, round(1.0 / args.dt)) + 2
    check_states_memory("--runs/--duration", saved, args.runs, network.geometry.size)
    with open_run(args, "path-integrate") as run:
        return path_integrate_run(network, run.out, velocity, args.runs, args.duration, args.dt,
                                  args.seed, device=args.device,
                                  coupling=args.velocity_coupling, width=args.coupling_width)


def _velocities(text: str) -> tuple[float, ...]:
    try:
        vs = tuple(float(x) for x in text.split(","))
    except ValueError:
        vs = ()
    if not vs or any(not (math.isfinite(v) and v > 0) for v in vs) or list(vs) != sorted(set(vs)):
        raise BadInput(f"--velocities={text!r}: give increasing comma-separated speeds > 0 "
                       "(rad per tau)")
    return vs


def _speed_gain(args) -> dict:
    from ..runs import speed_gain_run

    velocities = None if args.velocities is None else _velocities(args.velocities)
    if not 0 < args.tolerance < 1:
        raise BadInput(f"--tolerance={args.tolerance:g}: must be in (0, 1)")
    network = load_network(args.model)
    if network.manifold is None:
        raise BadInput("--model: the model has no target manifold to start the bump on")
    from ..experiments.speed import DEFAULT_VELOCITIES, saved_states
    from ..runs import speed_gain_network

    speeds = velocities or DEFAULT_VELOCITIES
    driven = speed_gain_network(network, args.velocity_coupling, args.coupling_width)
    check_states_memory("--duration/--velocities", saved_states(
        driven, speeds, args.duration, args.dt), 1, network.geometry.size)
    config = {**args_config(args), "velocities": list(speeds)}
    with open_run(args, "speed-gain", config=config) as run:
        return speed_gain_run(network, run.out, args.velocity_coupling, args.coupling_width,
                              velocities, args.duration, args.tolerance, dt_max=args.dt)


def _width(text: str) -> float:
    """argparse ``type=`` of ``--coupling-width``: radians in [0, 2 pi]
    (:meth:`neurodyn.network.Transport.asymmetric`)."""
    value = nonnegative(text)
    if value > 2 * math.pi:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be in [0, 2 pi] "
                                         "radians")
    return value


def _coupling_arguments(p, default: str) -> None:
    p.add_argument("--velocity-coupling", choices=VELOCITY_COUPLINGS, default=default,
                   help="exact: the model's fitted transport (moves the bump rigidly at any "
                        "speed); asymmetric: one smooth odd kernel calibrated at small speed "
                        "(lags and deforms at high speed)")
    p.add_argument("--coupling-width", type=_width, default=0.3,
                   help="width of the asymmetric coupling's kernel (rad, in [0, 2 pi])")


def _diffuse(args) -> dict:
    from ..analysis.bump_motion import default_lags
    from ..runs import diffuse_run

    network = load_network(args.model)
    every = max(1, round(1.0 / args.dt))
    saved = _steps(args) // every + 2
    try:
        default_lags(args.duration, every * args.dt)
    except BadInput:
        raise BadInput(f"--duration={args.duration:g}: too short for a diffusion estimate; it "
                       f"needs at least three saved steps of {every * args.dt:g} tau") from None
    check_states_memory("--runs/--duration", saved, args.runs, network.geometry.size)
    with open_run(args, "diffuse") as run:
        return diffuse_run(network, run.out, args.noise, args.runs, args.duration, args.dt,
                           args.seed, device=args.device)


def register(sub) -> None:
    """Add the ``restore``, ``path-integrate`` and ``diffuse`` sub-commands."""
    r = experiment_parser(sub, "restore", "restoration experiment from perturbed states",
                          _restore, duration=20.0, dt=0.1)
    r.add_argument("--count", type=positive_int, default=256, help="states per kind")
    r.add_argument("--kinds", default="noise,shape,amplitude,lesion",
                   help="comma-separated perturbation kinds")
    r.add_argument("--strength-min", type=nonnegative, default=0.1,
                   help="smallest relative perturbation size (dimensionless)")
    r.add_argument("--strength-max", type=nonnegative, default=0.5,
                   help="largest relative perturbation size (dimensionless)")
    r.add_argument("--threshold", type=positive, default=0.01,
                   help="relative distance that counts as restored (dimensionless)")

    pi = experiment_parser(sub, "path-integrate", "velocity-driven bump vs integrated velocity",
                           _path_integrate, duration=200.0, dt=0.1)
    pi.add_argument("--velocity", default="ou:0.2:10:0.5",
                    help="velocity spec (rad per tau), as for simulate")
    pi.add_argument("--runs", type=positive_int, default=64, help="runs")
    _coupling_arguments(pi, "exact")

    sg = experiment_parser(sub, "speed-gain", "speed gain and maximum tracked speed of a velocity "
                           "coupling (bump speed / commanded speed over a range of speeds)",
                           _speed_gain, duration=40.0, dt=0.05)
    _coupling_arguments(sg, "asymmetric")
    sg.add_argument("--velocities", default=None,
                    help="increasing comma-separated speeds (rad per tau; default 0.01 to 40.96 "
                         "by factors of 2)")
    sg.add_argument("--tolerance", type=positive, default=0.05,
                    help="a speed counts as tracked when |gain - 1| <= tolerance")

    d = experiment_parser(sub, "diffuse", "bump diffusion under noise vs theory", _diffuse,
                          duration=200.0, dt=0.05)
    d.add_argument("--noise", type=positive, default=0.05,
                   help="noise sigma on u (potential units per sqrt(tau))")
    d.add_argument("--runs", type=positive_int, default=128, help="runs")
