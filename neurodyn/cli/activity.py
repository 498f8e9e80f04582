"""``neurodyn fit-activity`` and ``neurodyn decode``: SEAL from recorded activity.

``fit-activity ring|torus --data FILE --out DIR`` places the cells, decodes the bump, measures
its relaxation rates and diffusion and judges whether the activity is an attractor's
(:func:`neurodyn.inference.core.fit_activity`). Whenever the cells are tuned (held-out
decoding below a third of chance) it learns the energy and writes the model -- ``model.pt``
and ``cells.npz`` -- with ``metrics.json`` (the verdict: ``attractor`` true, false or
inconclusive, every test with its statistic, threshold and p-value or interval) and its
figures; exit 0. Cells that are not tuned: ``metrics.json``, no model, exit 1. With
``--require-attractor`` anything but ``attractor: true`` is exit 1 with no model.
``--sleep FILE`` (repeatable) adds recordings without the covariate as evidence.
``decode --model DIR --data FILE --out OUT`` writes ``OUT/decoded.npy`` and ``decoded.png``.
Both run in :mod:`neurodyn.runs.activity`; this module parses their options.
"""

from __future__ import annotations

import argparse

from ._common import args_config, command, config_of, positive, positive_int, seed_arg

__all__ = ["register"]


def _odd(text: str) -> int:
    value = positive_int(text)
    if value % 2 == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be an odd integer")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be in [0, 1)")
    return value


def _fit_activity(args) -> dict:
    from ..runs.activity import FitActivityConfig, fit_activity_run

    return fit_activity_run(config_of(FitActivityConfig, args), args.out,
                            arguments=args_config(args))


def _decode(args) -> dict:
    from ..runs.activity import DecodeConfig, decode_run

    return decode_run(config_of(DecodeConfig, args), args.out, arguments=args_config(args))


def _data_options(p) -> None:
    p.add_argument("--epoch", default=None,
                   help="the epoch of a file holding several: reads EPOCH_counts, "
                   "EPOCH_heading, ... (e.g. wake)")
    p.add_argument("--bin", type=positive, default=None,
                   help="bin width (s) for spike times (spike_times, spike_cells in the .npz, "
                   "or an NWB file; NWB default: the tracking's sampling interval)")
    p.add_argument("--window", type=_odd, default=5,
                   help="bins pooled per decoded bin (odd; 5 bins of 10 ms = 50 ms)")


def register(sub) -> None:
    """Add the ``fit-activity`` and ``decode`` sub-commands."""
    f = sub.add_parser(
        "fit-activity", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="learn a ring or torus attractor from recorded spike counts",
        description="Place the cells, decode the bump, measure its relaxation rates and "
        "diffusion, judge whether the activity is an attractor's (attractor: true, false or "
        "inconclusive, each test with its statistic and threshold), and learn the energy. "
        "Exit 0 with a model whenever the cells are tuned (held-out decoding below a third "
        "of chance); exit 1 with no model when they are not, or with --require-attractor "
        "when the verdict is not true; exit 2 on bad input, before anything is written.")
    f.add_argument("manifold", choices=("ring", "torus"), help="attractor manifold")
    f.add_argument("--data", required=True,
                   help=".npz with counts (T, cells), dt (s) and optionally heading (T,) in rad "
                   "or position (T, 2) in m; or spike_times (s), spike_cells and a tracking "
                   "series (tracking_time, heading or position) with --bin; or an NWB file "
                   "(units and a Position or CompassDirection)")
    f.add_argument("--out", required=True, help="output directory")
    _data_options(f)
    f.add_argument("--sleep", action="append", default=None, metavar="FILE",
                   help="a recording of the same cells without the covariate (sleep), "
                   "decoded with the wake fit as evidence; repeatable")
    f.add_argument("--sleep-epoch", default=None,
                   help="the epoch of the --sleep files (e.g. sws)")
    f.add_argument("--hold-out", type=_fraction, default=0.0,
                   help="fraction of --data, at its end, kept out of the fit and decoded")
    f.add_argument("--require-attractor", action="store_true",
                   help="write the model only when the verdict is attractor: true (else exit 1)")
    f.add_argument("--no-covariate", action="store_true",
                   help="ignore the heading: find the ring from the activity alone")
    f.add_argument("--no-topology", action="store_true",
                   help="skip the Betti numbers (and their test): ripser is not needed")
    f.add_argument("--tau", type=positive, default=0.1,
                   help="time constant (s) turning the measured rates into kappa")
    f.add_argument("--n", type=positive_int, default=64, help="neurons of the learned ring")
    f.add_argument("--spacing", type=positive, default=None,
                   help="torus: grid spacing (m); default estimated")
    f.add_argument("--orientation", type=float, default=None,
                   help="torus: orientation (rad) of the first wave vector; default estimated")
    f.add_argument("--seed", type=seed_arg, default=0, help="seeds the bootstraps and the fit")
    f.set_defaults(func=command(_fit_activity))
    d = sub.add_parser("decode", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       help="decode the bump from spike counts with a fit-activity model",
                       description="Maximum-likelihood decoding under Poisson counts with the "
                       "cells of a fit-activity model, of a recording with or without its "
                       "covariate (sleep too); writes OUT/decoded.npy and decoded.png.")
    d.add_argument("--model", required=True, help="fit-activity output folder (cells.npz)")
    d.add_argument("--data", required=True, help="activity file, as for fit-activity")
    d.add_argument("--out", required=True, help="output directory")
    _data_options(d)
    d.set_defaults(func=command(_decode))
