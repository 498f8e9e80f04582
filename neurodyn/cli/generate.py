"""``neurodyn generate``: generative models of a fitted network's population activity, three
ways side by side (:func:`neurodyn.generative.compare_generators`), run by
:func:`neurodyn.runs.generate.generate_run`; this module parses its options."""

from __future__ import annotations

import argparse

from ._common import args_config, command, config_of, positive, positive_int, seed_arg

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
    from ..runs.generate import GenerateConfig, generate_run

    return generate_run(config_of(GenerateConfig, args), args.out,
                        arguments=args_config(args))
