"""``neurodyn fit-activity`` and ``neurodyn decode``: SEAL from recorded activity.

``fit-activity ring|torus --data FILE --out DIR`` places the cells, decodes the bump, measures
its relaxation rates and diffusion and gives the verdict (:func:`neurodyn.inference.core.
fit_activity`); with an attractor it learns the energy and writes ``model.pt`` and ``cells.npz``,
without one it writes ``metrics.json`` (``attractor: false``) and exits 1 naming the failed
tests, with no model. ``decode --model DIR --data FILE --out OUT`` writes ``OUT/decoded.npy``.
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


def _fit_activity(args) -> dict:
    from ..fitting.config import FitConfig
    from ..fitting.core import fit_bytes
    from ..inference.core import _check_inputs, fit_activity
    from ..inference.files import read_activity

    data = read_activity(args.data)
    cov = _covariate(args, data)
    if (args.spacing is None) != (args.orientation is None):
        raise BadInput("--spacing, --orientation: give both or neither")
    if args.orientation is not None and not math.isfinite(args.orientation):
        raise BadInput(f"--orientation={args.orientation!r}: must be finite")
    if data["counts"].shape[0] < 100 or data["counts"].shape[1] < 3:
        raise BadInput(f"--data: counts of shape {data['counts'].shape}; need T >= 100 bins "
                       "and >= 3 cells")
    # before --out is claimed: the counts, the window and the learned ring's fit
    _check_inputs(data["counts"], data["dt"], args.manifold, cov)
    _check_window(args, data)
    if args.manifold == "ring":
        check_memory("--n", fit_bytes(FitConfig(n=args.n)))
    with open_run(args, "fit-activity") as run:
        start = time.perf_counter()
        fit = fit_activity(data["counts"], data["dt"], args.manifold, cov, window=args.window,
                           tau=args.tau, spacing=args.spacing, orientation=args.orientation,
                           topology=not args.no_topology, seed=args.seed)
        metrics = fit.metrics()
        if not fit.attractor:
            run.write_json("metrics.json", metrics)
            raise RunFailed(f"no attractor: failed test(s) {', '.join(fit.failed)} "
                            f"({_failed_text(fit)}); no model written")
        metrics["energy"] = _learn(fit, run, args)
        run.write_json("metrics.json", metrics)
        run.write_json("timing.json", {"seconds": time.perf_counter() - start})
    return metrics


def _check_window(args, data: dict) -> None:
    if args.window > data["counts"].shape[0]:
        raise BadInput(f"--window={args.window}: longer than the recording "
                       f"({data['counts'].shape[0]} bins in --data)")


def _failed_text(fit) -> str:
    parts = []
    for name in fit.failed:
        t = fit.tests[name]
        parts.append(f"{name}: {t['value']} against {t['threshold']}")
    return "; ".join(parts)


def _learn(fit, run, args) -> dict:
    from ..inference.energy import learn_energy
    from ..inference.files import save_cells
    from ..io import save_model

    network, info = learn_energy(fit, n=args.n, seed=args.seed)
    save_model(network, run.path("model.pt"), extra={"fit_activity": {
        "kappa": info["kappa"], "profile_used": info["profile_used"]}})
    save_cells(run.path("cells.npz"), fit)
    return {k: v for k, v in info.items() if k != "config"}


def _decode(args) -> dict:
    import numpy as np

    from _runkit.files import atomic_save_npy

    from ..inference.decode import wrapped
    from ..inference.files import decode_file, load_cells, read_activity

    cells, info = load_cells(args.model)
    data = read_activity(args.data)
    if data["counts"].shape[1] != info["used"].size:
        raise BadInput(f"--data: {data['counts'].shape[1]} cells; the model was fitted to "
                       f"{info['used'].size}")
    _check_window(args, data)
    with open_run(args, "decode") as run:
        decoded = decode_file(cells, info, data, args.window)
        atomic_save_npy(run.path("decoded.npy"), decoded)
        metrics = {"geometry": info["geometry"], "bins": int(decoded.shape[0])}
        if info["geometry"] == "ring" and "heading" in data:
            err = np.abs(wrapped(decoded - data["heading"]))
            metrics["median_error_deg"] = math.degrees(float(np.median(err)))
        run.write_json("metrics.json", metrics)
    return metrics


def register(sub) -> None:
    """Add the ``fit-activity`` and ``decode`` sub-commands."""
    f = sub.add_parser("fit-activity", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       help="learn a ring or torus attractor from recorded spike counts",
                       description="Place the cells, decode the bump, measure its normal "
                       "relaxation rates and diffusion, decide whether there is an attractor "
                       "(exit 1 and no model if not), and learn its energy.")
    f.add_argument("manifold", choices=("ring", "torus"), help="attractor manifold")
    f.add_argument("--data", required=True,
                   help=".npz with counts (T, cells), dt (s) and optionally heading (T,) or "
                   "position (T, 2); or an NWB file")
    f.add_argument("--out", required=True, help="output directory")
    f.add_argument("--no-covariate", action="store_true",
                   help="ignore the heading: find the ring from the activity alone")
    f.add_argument("--no-topology", action="store_true",
                   help="skip the Betti numbers (and their test): ripser is not needed")
    f.add_argument("--window", type=_odd, default=5, help="bins pooled per decoded bin (odd)")
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
                       "cells of a fit-activity model; writes OUT/decoded.npy.")
    d.add_argument("--model", required=True, help="fit-activity output folder (cells.npz)")
    d.add_argument("--data", required=True, help="activity file, as for fit-activity")
    d.add_argument("--out", required=True, help="output directory")
    d.add_argument("--window", type=_odd, default=5, help="bins pooled per decoded bin (odd)")
    d.set_defaults(func=command(_decode))
