"""``neurodyn restore``, ``path-integrate``, ``diffuse`` and ``speed-gain``: standard experiments
on a model, run by :func:`neurodyn.runs.experiments.experiment_run`; this module parses their
options."""

from __future__ import annotations

import argparse
import math

from ._common import args_config, config_of, experiment_parser, nonnegative, positive, positive_int

__all__ = ["register", "VELOCITY_COUPLINGS"]

#: ``--velocity-coupling`` choices (those of :func:`neurodyn.network.velocity_coupling`, spelled
#: here so that ``--help`` imports no torch).
VELOCITY_COUPLINGS = ("exact", "asymmetric")


def _run(config: str):
    """The handler of an experiment: its options as the config named ``config`` of
    :mod:`neurodyn.runs.experiments`, run by :func:`~neurodyn.runs.experiments.experiment_run`."""

    def handler(args) -> dict:
        from ..runs import experiments

        options = config_of(getattr(experiments, config), args)
        return experiments.experiment_run(options, args.out, arguments=args_config(args))

    handler.__name__ = handler.__qualname__ = f"_{config}"
    return handler


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


def register(sub) -> None:
    """Add the ``restore``, ``path-integrate`` and ``diffuse`` sub-commands."""
    r = experiment_parser(sub, "restore", "restoration experiment from perturbed states",
                          _run("RestoreConfig"), duration=20.0, dt=0.1)
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
                           _run("PathIntegrateConfig"), duration=200.0, dt=0.1)
    pi.add_argument("--velocity", default="ou:0.2:10:0.5",
                    help="velocity spec (rad per tau), as for simulate")
    pi.add_argument("--runs", type=positive_int, default=64, help="runs")
    _coupling_arguments(pi, "exact")

    sg = experiment_parser(sub, "speed-gain", "speed gain and maximum tracked speed of a velocity "
                           "coupling (bump speed / commanded speed over a range of speeds)",
                           _run("SpeedGainConfig"), duration=40.0, dt=0.05)
    _coupling_arguments(sg, "asymmetric")
    sg.add_argument("--velocities", default=None,
                    help="increasing comma-separated speeds (rad per tau; default 0.01 to 40.96 "
                         "by factors of 2)")
    sg.add_argument("--tolerance", type=positive, default=0.05,
                    help="a speed counts as tracked when |gain - 1| <= tolerance")

    d = experiment_parser(sub, "diffuse", "bump diffusion under noise vs theory",
                          _run("DiffuseConfig"), duration=200.0, dt=0.05)
    d.add_argument("--noise", type=positive, default=0.05,
                   help="noise sigma on u (potential units per sqrt(tau))")
    d.add_argument("--runs", type=positive_int, default=128, help="runs")
