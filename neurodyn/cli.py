"""Command line of neurodyn: fit, simulate, restore, path-integrate, diffuse, grid-cells, manifold.

Every command writes into ``--out DIR``: ``config.json`` (what it ran), ``metrics.json`` (its
numbers), PNG figures and its artifacts. Errors in the input end the command with exit status 2
and a one-line message naming the parameter; a simulation that becomes non-finite ends with
status 1 and the time and step.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch

from .fit import FitConfig, fit
from .inputs import ArrayVelocity, parse_velocity
from .io import ModelFormatError, load_model, save_model, write_json
from .perturb import PERTURBATIONS, perturb, random_strengths
from .simulate import METHODS, NonFiniteStateError, simulate

__all__ = ["main", "build_parser", "parse_time"]


def parse_time(text: str, tau_seconds: float) -> float:
    """Parse a duration: a number (units of tau), or a number with ``tau``, ``s`` or ``ms``.

    Examples
    --------
    >>> parse_time("20", 0.01), parse_time("0.5s", 0.01), parse_time("30ms", 0.01)
    (20.0, 50.0, 3.0)
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(tau|s|ms)?\s*", str(text))
    if not m:
        raise ValueError(f"time={text!r}: expected a number, optionally with a unit tau, s or ms")
    try:
        value = float(m.group(1))
    except ValueError:
        raise ValueError(f"time={text!r}: {m.group(1)!r} is not a number") from None
    unit = m.group(2) or "tau"
    if unit == "s":
        value /= tau_seconds
    elif unit == "ms":
        value /= 1000 * tau_seconds
    return value


def _args_dict(args) -> dict:
    return {k: v for k, v in vars(args).items() if not callable(v)}


def _fit(args) -> dict:
    from .experiments import network_report

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
    result = fit(cfg, out_dir=out, resume=not args.restart)
    save_model(result.network, out / "model.pt", extra={"fit": cfg.to_dict()})
    metrics = {"fit_seconds": result.seconds, "resumed_from_step": result.resumed_from,
               "final_loss": {k: v[-1] for k, v in result.history.items() if v}}
    metrics.update(network_report(result.network, out, result.history))
    write_json(metrics, out / "metrics.json")
    return metrics


def _initial_state(args, network) -> torch.Tensor:
    g = network.geometry
    if args.init is not None:
        arr = np.load(args.init)
        u0 = torch.as_tensor(arr, dtype=torch.float64)
        if u0.dim() == g.dim:
            u0 = u0.unsqueeze(0)
        if tuple(u0.shape[1:]) != g.shape:
            u0 = u0.reshape(u0.shape[0], -1) if u0.dim() >= 2 else u0
            if u0.dim() != 2 or u0.shape[1] != g.size:
                raise ValueError(f"--init {args.init}: shape {arr.shape}; expected (B, {g.size})"
                                 + ("" if g.dim == 1 else f" or (B, {g.shape[0]}, {g.shape[1]})"))
            u0 = u0.reshape((u0.shape[0],) + g.shape)
        if not torch.isfinite(u0).all():
            raise ValueError(f"--init {args.init}: contains non-finite values")
        return u0
    if network.manifold is None:
        raise ValueError("--perturb: the model has no manifold; give --init FILE.npy")
    if args.count < 1:
        raise ValueError(f"--count {args.count}: must be >= 1")
    gen = torch.Generator().manual_seed(args.seed)
    psi = g.random_phase(args.count, gen)
    s = torch.full((args.count,), float(args.strength), dtype=torch.float64)
    if args.strength_max is not None:
        s = random_strengths(args.count, args.strength, args.strength_max, gen)
    return perturb(network.manifold, psi, args.perturb, s, gen)


def _simulate(args) -> dict:
    from .diagnostics import energy_audit, path_integration_error
    from .plotting import (
        plot_activity,
        plot_distance,
        plot_energy,
        plot_path_integration,
        save_figure,
    )

    network, out = _prepare(args, "simulate")
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
    start = time.perf_counter()
    tr = simulate(network, u0, duration, dt, method=args.method, velocity=velocity,
                  noise=args.noise, save_every=args.save_every, seed=args.seed,
                  progress_bar=None)
    seconds = time.perf_counter() - start
    np.savez_compressed(out / "trajectory.npz", **tr.arrays())
    metrics = {"seconds": seconds, "nfe": tr.nfe, "method": tr.method, "runs": u0.shape[0],
               "distance_initial_max": float(tr.distance[0].max()),
               "distance_final_max": float(tr.distance[-1].max()),
               "distance_final_median": float(tr.distance[-1].median())}
    if velocity is None and args.noise == 0:
        metrics["energy"] = energy_audit(tr) if len(tr.t) > 1 else None
        save_figure(plot_energy(tr), out / "energy.png")
    if velocity is not None:
        err = path_integration_error(tr)
        metrics["path_error_rms_final"] = err["rms_final"]
        metrics["path_error_max_final"] = err["max_final"]
        save_figure(plot_path_integration(tr), out / "path_integration.png")
    save_figure(plot_distance(tr), out / "distance.png")
    if network.geometry.dim == 1:
        save_figure(plot_activity(tr), out / "activity.png")
    write_json(metrics, out / "metrics.json")
    return metrics


def _prepare(args, command: str):
    """Load the model, create ``--out`` and record the command's config there."""
    network, _ = load_model(args.model)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json({"command": command, **_args_dict(args)}, out / "config.json")
    return network, out


def _restore(args) -> dict:
    from .experiments import restoration

    network, out = _prepare(args, "restore")
    metrics, _ = restoration(network, args.count, tuple(args.kinds.split(",")),
                             (args.strength_min, args.strength_max), args.duration, args.dt,
                             args.threshold, args.seed, out)
    write_json(metrics, out / "metrics.json")
    return metrics


def _path_integrate(args) -> dict:
    from .experiments import path_integration

    network, out = _prepare(args, "path-integrate")
    metrics, tr = path_integration(network, args.velocity, args.runs, args.duration, args.dt,
                                   args.seed, out)
    np.savez_compressed(out / "trajectory.npz", **{k: v for k, v in tr.arrays().items()
                                                   if k not in ("u", "r")})
    write_json(metrics, out / "metrics.json")
    return metrics


def _diffuse(args) -> dict:
    from .experiments import diffusion

    network, out = _prepare(args, "diffuse")
    metrics, _ = diffusion(network, args.noise, args.runs, args.duration, args.dt, args.seed)
    write_json(metrics, out / "metrics.json")
    return metrics


def _experiment_parser(sub, name: str, help: str, func, duration: float, dt: float
                       ) -> argparse.ArgumentParser:
    """A sub-command that runs an experiment on a fitted model: ``--model``, ``--out``,
    ``--duration``, ``--dt`` (tau) and ``--seed``, with the given defaults."""
    p = sub.add_parser(name, help=help)
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--duration", type=float, default=duration)
    p.add_argument("--dt", type=float, default=dt)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``neurodyn`` command."""
    p = argparse.ArgumentParser(prog="neurodyn", description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (1 is fastest for populations of a few hundred)")
    sub = p.add_subparsers(dest="command", required=True)

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
    s.set_defaults(func=_simulate)

    r = _experiment_parser(sub, "restore", "restoration experiment from perturbed states",
                           _restore, duration=20.0, dt=0.1)
    r.add_argument("--count", type=int, default=256)
    r.add_argument("--kinds", default="noise,shape,amplitude,lesion")
    r.add_argument("--strength-min", type=float, default=0.1)
    r.add_argument("--strength-max", type=float, default=0.5)
    r.add_argument("--threshold", type=float, default=0.01)

    pi = _experiment_parser(sub, "path-integrate", "velocity-driven bump vs integrated velocity",
                            _path_integrate, duration=200.0, dt=0.1)
    pi.add_argument("--velocity", default="ou:0.2:10:0.5")
    pi.add_argument("--runs", type=int, default=64)

    d = _experiment_parser(sub, "diffuse", "bump diffusion under noise vs theory", _diffuse,
                           duration=200.0, dt=0.05)
    d.add_argument("--noise", type=float, default=0.05)
    d.add_argument("--runs", type=int, default=128)

    from . import gridcells, visualize

    gridcells.register_cli(sub)
    visualize.register_cli(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``neurodyn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads {args.threads}: must be >= 1")
    torch.set_num_threads(args.threads)
    try:
        metrics = args.func(args)
    except NonFiniteStateError as exc:
        print(f"neurodyn {args.command}: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, FileNotFoundError, ModelFormatError) as exc:
        print(f"neurodyn {args.command}: error: {exc}", file=sys.stderr)
        return 2
    summary = {k: v for k, v in (metrics or {}).items() if not isinstance(v, (list, dict))}
    if summary:
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in summary.items()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
