"""``neurodyn generate``: generative models of a fitted network's population activity, three
ways side by side (:func:`neurodyn.generative.compare_generators`)."""

from __future__ import annotations

import argparse
import math

from _runkit import BadInput, check_memory
from _runkit.checks import check_installed

from ._common import (
    check_states_memory,
    command,
    load_network,
    open_run,
    positive,
    positive_int,
    seed_arg,
)

__all__ = ["register"]


def register(sub) -> argparse.ArgumentParser:
    """Add the ``generate`` sub-command.

    ``neurodyn generate --model DIR --out OUT`` samples noisy states of the model, trains the
    ambient, Riemannian and relaxed generators, judges them against held-out states, says
    whether the ambient flow's samples as generated are an attractor population (``verdict``;
    :mod:`neurodyn.generative.verdict`) and writes ``metrics.json``, ``timing.json``,
    ``config.json``, ``generated.png``, ``barcodes.png`` and ``verdict.png`` into ``OUT``.
    """
    p = sub.add_parser(
        "generate", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="flow-matching generators of the model's population activity, judged on the "
             "attractor",
        description="Noisy population states of a fitted ring or torus; (a) ambient flow "
                    "matching, (b) Riemannian flow matching on the decoded coordinate mapped "
                    "through the manifold, (c) ambient samples relaxed by the network; normal "
                    "distance, Betti numbers, intrinsic W2, tuning curves, correlations and "
                    "memorization of each against held-out states, and a shuffled control. "
                    "The verdict (metrics.json's 'verdict', verdict.png) judges (a)'s samples "
                    "as generated, before any relaxation: kept (an attractor population) only "
                    "when the data's own attractor verdict is true (with --data, the "
                    "fit-activity folder's metrics.json, or a fit of the counts where it holds "
                    "none; the network's own states otherwise) and their W2 to the held-out "
                    "states in the neurons' space is at most 1.2x the floor of real states "
                    "against them; otherwise it says which failed. (b) and (c) are shaped by "
                    "the model's manifold: reported beside (a), never judged. Exit 0 whether "
                    "kept or not; 2 on bad input, before anything is written.")
    p.add_argument("--model", required=True, help="directory holding model.pt (or the file)")
    p.add_argument("--out", required=True, help="output directory (locked while the run writes)")
    p.add_argument("--count", type=positive_int, default=2000, help="noisy states sampled")
    p.add_argument("--held", type=positive_int, default=400,
                   help="states held out for judging (at most a third of --count)")
    p.add_argument("--noise", type=positive, default=0.2, help="noise sigma on u of the data")
    p.add_argument("--steps", type=positive_int, default=5,
                   help="midpoint steps of every sampler (2 field evaluations each)")
    p.add_argument("--train-steps", type=positive_int, default=4500, dest="train_steps",
                   help="training steps of each flow")
    p.add_argument("--relax", type=positive, default=4.0,
                   help="relaxation time of method (c), tau (4 / kappa leaves 2%% of the distance)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--data", default="",
                     help="recorded counts (.npz/.nwb) of a fit-activity --model (ring or torus): "
                          "states are its windowed rates on the model's neurons, not "
                          "noise-driven runs")
    src.add_argument("--trajectory", default="none",
                     choices=("none", "sargolini", "tanni", "synthetic"),
                     help="drive the network by this trajectory's heading (ring) or lattice "
                          "phase (torus, --spacing) with noise --noise, instead of noise alone")
    p.add_argument("--window", type=positive_int, default=5,
                   help="with --data: odd number of bins pooled per state")
    p.add_argument("--tau", type=positive, default=0.1,
                   help="with --trajectory: seconds per unit of the network's time")
    p.add_argument("--spacing", type=positive, default=0.5,
                   help="with --trajectory on a torus: grid spacing of the module (m)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seeds every random draw")
    p.set_defaults(func=command(_generate))
    return p


def _generate(args) -> dict:
    from ..generative.compare import compare_generators
    from ..generative.states import population_states
    from ..generative.verdict import fitted_verdict

    network, recorded, data = _checked_inputs(args)
    with open_run(args, "generate") as run:
        if recorded is not None:
            states = recorded
        elif args.trajectory != "none":
            states = _driven(network, args)
        else:
            states = population_states(network, args.count, args.noise, seed=args.seed)
        if isinstance(data, dict):  # the model folder holds no verdict: fit the counts
            data = fitted_verdict(**data, seed=args.seed)
        samples: dict = {}
        res = compare_generators(network, states, args.held, args.steps, args.train_steps,
                                 args.relax, args.seed, samples=samples, data=data)
        metrics = res.to_dict()
        seconds = {k: c.pop("seconds") for k, c in metrics["cost"].items()}
        cpu = {k: c.pop("cpu_seconds") for k, c in metrics["cost"].items()}
        run.write_figures({"generated.png": _figure(network, samples),
                           "barcodes.png": _barcodes(network, samples, res.verdict, args.seed),
                           "verdict.png": _verdict_figure(res)})
        _write_states(run, states.rates[args.held:], samples)
        run.write_json("metrics.json", metrics)
        run.write_json("timing.json", {"seconds": seconds, "cpu_seconds": cpu})
    return {**metrics, "seconds": seconds}


def _checked_inputs(args):
    """The network, the recorded states with ``--data`` (else None) and the data's own
    attractor verdict (None: the states will be the network's own; a dict of
    :func:`~neurodyn.generative.verdict.fitted_verdict`'s arguments where the model folder holds
    none), every option and file checked and the memory estimate made before ``--out`` is
    claimed."""
    from ..generative.methods import RELAX_DT

    check_installed("ripser", "topology", "Betti numbers of generated states (neurodyn generate)")
    if 3 * args.held > args.count:
        raise BadInput(f"--held={args.held}: at most a third of --count={args.count}")
    if not math.isfinite(args.relax):
        raise BadInput(f"--relax={args.relax}: must be finite")
    if args.window % 2 == 0:
        raise BadInput(f"--window={args.window}: must be odd")
    if args.data:
        network, states, data = _recorded(args)
    else:
        network, states, data = load_network(args.model), None, None
        if network.manifold is None:
            raise BadInput(f"--model={args.model!r}: the network has no target manifold")
    # the states, the three flows' copies of them and the held-out distances, float64
    check_memory("--count", 8.0 * args.count * (16.0 * network.geometry.size + args.held))
    # method (c) saves every state of its relaxations (u and r)
    check_states_memory("--relax", args.relax / RELAX_DT + 2, args.count, network.geometry.size)
    return network, states, data


def _write_states(run, train, samples: dict) -> None:
    """``states.npy``: the training states (float32, one row per state; ``flows train --data``
    takes it; its sha256 beside it); ``generated.npz``: held-out, generated and control states
    by name."""
    import torch

    from _runkit.files import atomic_save_npy, atomic_savez

    atomic_save_npy(run.path("states.npy"), train.to(torch.float32).numpy())
    atomic_savez(run.path("generated.npz"),
                 **{k: v.to(torch.float32).numpy() for k, v in samples.items()})


def _recorded(args):
    """The model folder's network, the counts' states on its neurons and the data's verdict
    (the folder's, or the arguments to fit one from the counts, checked as fit-activity
    checks them)."""
    from ..generative.sources import recorded_states
    from ..generative.verdict import data_verdict
    from ..inference.core import _check_inputs
    from ..inference.recordings import read_activity

    network, states = recorded_states(args.model, args.data, args.count, args.window, args.seed)
    verdict = data_verdict(args.model)
    if verdict.attractor != "unknown":
        return network, states, verdict
    data = read_activity(args.data, "--data")
    geometry = "ring" if network.geometry.dim == 1 else "torus"
    cov = data.get("heading" if geometry == "ring" else "position")
    _check_inputs(data["counts"], data["dt"], geometry, cov)
    return network, states, {"counts": data["counts"], "dt": data["dt"], "geometry": geometry,
                             "covariate": cov}


def _driven(network, args):
    from ..datasets import rat_trajectory
    from ..generative.sources import driven_states

    name = "sargolini" if args.trajectory == "synthetic" else args.trajectory
    tr = rat_trajectory(name, dt=0.02, seed=args.seed, synthetic=args.trajectory == "synthetic")
    return driven_states(network, tr, args.count, args.noise, args.tau, spacing=args.spacing,
                         seed=args.seed)


def _barcodes(network, samples: dict, verdict, seed: int):
    from ..generative.metrics import ATTRACTOR_BETTI, state_homology
    from ..plotting.generative import plot_generated_barcodes, verdict_title

    homologies = {k: state_homology(r, seed=seed) for k, r in samples.items()}
    return plot_generated_barcodes(homologies, ATTRACTOR_BETTI[network.geometry.dim],
                                   verdict_title(verdict.to_dict()))


def _verdict_figure(res):
    from ..plotting.generative import plot_kept_verdict

    return plot_kept_verdict(res.to_dict())


def _figure(network, samples: dict):
    from ..generative.states import locate
    from ..plotting.generative import plot_generated

    phases = {k: locate(network, r)[0] for k, r in samples.items()}
    return plot_generated(samples, phases)
