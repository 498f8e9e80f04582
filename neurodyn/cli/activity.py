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
"""

from __future__ import annotations

import argparse
import math
import time

from _runkit import BadInput, RunFailed, check_memory

from ._common import command, open_run, positive, positive_int, seed_arg

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


def _covariate(args, data: dict):
    if args.no_covariate:
        if args.manifold == "torus":
            raise BadInput("--no-covariate: a torus is fitted with the positions only")
        return None
    key = "heading" if args.manifold == "ring" else "position"
    if key not in data:
        if args.manifold == "torus":
            raise BadInput(f"--data={args.data!r}: a torus needs 'position' (T, 2) in the file")
        return None
    return data[key]


def _check_window(window: int, data: dict, name: str = "--data") -> None:
    if window > data["counts"].shape[0]:
        raise BadInput(f"--window={window}: longer than the recording "
                       f"({data['counts'].shape[0]} bins in {name})")


def _sleeps(args, data: dict) -> list:
    from ..inference.recordings import read_activity

    out = []
    for k, path in enumerate(args.sleep or ()):
        s = read_activity(path, f"--sleep={path!r}", args.sleep_epoch, args.bin)
        if abs(s["dt"] - data["dt"]) > 1e-9 * data["dt"]:
            raise BadInput(f"--sleep={path!r}: bins of {s['dt']:g} s; the wake recording's are "
                           f"{data['dt']:g} s (give both at one bin width)")
        if s["counts"].shape[1] != data["counts"].shape[1]:
            raise BadInput(f"--sleep={path!r}: {s['counts'].shape[1]} cells; --data has "
                           f"{data['counts'].shape[1]}")
        out.append(s["counts"])
        if k == 0 and s["counts"].shape[0] * s["dt"] < 60:
            raise BadInput(f"--sleep={path!r}: {s['counts'].shape[0] * s['dt']:.0f} s of sleep; "
                           "its tests need >= 60 s")
    return out


def _inputs(args) -> tuple[dict, object, list]:
    """Everything read and checked before ``--out`` is claimed: the recording, its covariate,
    the sleep recordings, the options against them and the memory of the learned network."""
    from ..fitting.config import FitConfig
    from ..fitting.core import fit_bytes
    from ..inference.core import _check_inputs
    from ..inference.recordings import read_activity

    data = read_activity(args.data, "--data", args.epoch, args.bin)
    cov = _covariate(args, data)
    if (args.spacing is None) != (args.orientation is None):
        raise BadInput("--spacing, --orientation: give both or neither")
    if args.orientation is not None and not math.isfinite(args.orientation):
        raise BadInput(f"--orientation={args.orientation!r}: must be finite")
    _check_inputs(data["counts"], data["dt"], args.manifold, cov)
    _check_window(args.window, data)
    end = int(round(args.hold_out * data["counts"].shape[0]))
    if args.hold_out and (data["counts"].shape[0] - end < 100 or end < 10):
        raise BadInput(f"--hold-out={args.hold_out}: leaves {data['counts'].shape[0] - end} "
                       f"bins to fit and {end} to decode; need >= 100 and >= 10")
    if args.manifold == "ring":
        check_memory("--n", fit_bytes(FitConfig(n=args.n)))
    return data, cov, _sleeps(args, data)


def _fit_activity(args) -> dict:
    from ..inference.core import fit_activity

    data, cov, sleeps = _inputs(args)
    with open_run(args, "fit-activity") as run:
        start = time.perf_counter()
        fit = fit_activity(data["counts"], data["dt"], args.manifold, cov, sleep=sleeps,
                           hold_out=args.hold_out, window=args.window, tau=args.tau,
                           spacing=args.spacing, orientation=args.orientation,
                           topology=not args.no_topology, seed=args.seed)
        metrics = fit.metrics()
        _figures(fit, data, sleeps, args, run)
        refusal = _refusal(fit, args)
        if refusal:
            metrics["model"] = None
            run.write_json("metrics.json", metrics)
            raise RunFailed(refusal)
        metrics["energy"] = _learn(fit, run, args)
        metrics["model"] = "model.pt"
        run.write_json("metrics.json", metrics)
        run.write_json("timing.json", {"seconds": time.perf_counter() - start})
    return metrics


def _refusal(fit, args) -> str:
    """Why no model is written, or '' (one is)."""
    if not fit.tuned:
        return f"no model: {fit.verdict.reason} ({fit.tests['tuning'].reason})"
    if args.require_attractor and fit.attractor is not True:
        return (f"no model (--require-attractor): attractor is {fit.attractor!r}: "
                f"{fit.verdict.reason}")
    return ""


def _figures(fit, data, sleeps, args, run) -> None:
    from ..plotting import save_figure
    from ..plotting.recordings import (
        plot_decoded,
        plot_embedding,
        plot_sleep,
        plot_tuning,
        plot_verdict,
    )

    save_figure(plot_verdict(fit.verdict), run.path("verdict.png"))
    if fit.cells is None:
        return
    if fit.geometry == "ring":
        save_figure(plot_tuning(fit), run.path("tuning.png"))
    if fit.held_out_reference is not None:
        save_figure(plot_decoded(fit.held_out_decoded, fit.held_out_reference, fit.dt),
                    run.path("decoded.png"))
    colour = fit.reference if fit.geometry == "ring" else None
    fitted = data["counts"][: fit.reference.shape[0], fit.used]
    slept = fit.sleep
    save_figure(plot_embedding(fitted, fit.dt, colour, sleeps[0][:, fit.used] if sleeps else
                               None, _per_bin(slept, fit.dt) if slept else None, fit.geometry),
                run.path("embedding.png"))
    if slept is not None:
        save_figure(plot_sleep(slept), run.path("sleep.png"))


def _per_bin(slept, dt):
    """The first sleep recording's decoded bump per bin (each window's value repeated)."""
    import numpy as np

    per = max(1, int(round(slept.window_s / dt)))
    return np.repeat(slept.decoded[0], per, axis=0)


def _learn(fit, run, args) -> dict:
    from ..inference.energy import learn_energy
    from ..inference.files import save_cells
    from ..io import save_model

    network, info = learn_energy(fit, n=args.n, seed=args.seed)
    save_model(network, run.path("model.pt"), extra={"fit_activity": {
        "kappa": info["kappa"], "kappa_source": info["kappa_source"],
        "profile_used": info["profile_used"]}})
    save_cells(run.path("cells.npz"), fit)
    return {k: v for k, v in info.items() if k != "config"}


def _decode(args) -> dict:
    import numpy as np

    from _runkit.files import atomic_save_npy

    from ..inference.decode import wrapped
    from ..inference.files import decode_file, load_cells
    from ..inference.recordings import read_activity
    from ..plotting import save_figure
    from ..plotting.recordings import plot_decoded

    cells, info = load_cells(args.model)
    data = read_activity(args.data, "--data", args.epoch, args.bin)
    if data["counts"].shape[1] != info["used"].size:
        raise BadInput(f"--data: {data['counts'].shape[1]} cells; the model was fitted to "
                       f"{info['used'].size}")
    if abs(data["dt"] - info["dt"]) > 1e-9 * info["dt"]:
        raise BadInput(f"--data: bins of {data['dt']:g} s; the model's cells were fitted in bins "
                       f"of {info['dt']:g} s")
    _check_window(args.window, data)
    with open_run(args, "decode") as run:
        decoded = decode_file(cells, info, data, args.window)
        atomic_save_npy(run.path("decoded.npy"), decoded)
        metrics = {"geometry": info["geometry"], "bins": int(decoded.shape[0]),
                   "seconds": float(decoded.shape[0] * data["dt"])}
        if info["geometry"] == "ring" and "heading" in data:
            err = np.abs(wrapped(decoded - data["heading"]))
            metrics["median_error_deg"] = math.degrees(float(np.median(err)))
            save_figure(plot_decoded(decoded, data["heading"], data["dt"], title="decoding"),
                        run.path("decoded.png"))
        elif info["geometry"] == "ring":
            save_figure(plot_decoded(decoded, np.full(decoded.shape, np.nan), data["dt"],
                                     title="decoded without a covariate"),
                        run.path("decoded.png"))
        run.write_json("metrics.json", metrics)
    return metrics


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
