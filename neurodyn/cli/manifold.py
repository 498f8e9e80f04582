"""``neurodyn manifold``: embeddings, topology and energy landscape of the attractor manifold."""

from __future__ import annotations

import argparse

from _runkit import BadInput, check_memory
from _runkit.checks import check_installed

from ._common import MIN_SURVEY_SAMPLES, command, load_network, open_run, positive_int, seed_arg

__all__ = ["register"]


def register(sub) -> argparse.ArgumentParser:
    """Add the ``manifold`` sub-command.

    ``neurodyn manifold --model DIR --out OUT [--samples N] [--seed S] [--no-topology]
    [--animate]`` runs :func:`~neurodyn.runs.manifold_report` and writes its figures,
    ``activity.npz``, ``metrics.json`` and ``config.json`` into ``OUT``.
    """
    p = sub.add_parser(
        "manifold", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="embeddings, topology and energy landscape of the attractor manifold",
        description="Simulated activity near the attractor manifold: PCA and Isomap embeddings, "
                    "persistent homology (Betti numbers, barcode), the energy along the "
                    "manifold and across it, the bump's path during path integration.")
    p.add_argument("--model", required=True, help="directory holding model.pt (or the file)")
    p.add_argument("--out", required=True, help="output directory (locked while the run writes)")
    p.add_argument("--samples", type=positive_int, default=2000,
                   help=f"activity samples (>= {MIN_SURVEY_SAMPLES})")
    p.add_argument("--seed", type=seed_arg, default=0, help="seeds every random draw")
    p.add_argument("--no-topology", dest="topology", action="store_false",
                   help="skip persistent homology (ripser)")
    p.add_argument("--animate", action="store_true", help="also write the bump animation (GIF)")
    p.set_defaults(func=command(_manifold))
    return p


def _manifold(args) -> dict:
    from ..runs import manifold_report

    if args.topology:
        check_installed("ripser", "topology", "persistent homology (neurodyn manifold)",
                        avoid="--no-topology")
    if args.samples < MIN_SURVEY_SAMPLES:
        raise BadInput(f"--samples={args.samples}: must be >= {MIN_SURVEY_SAMPLES}")
    network = load_network(args.model)
    # pairwise distances of the Isomap landmarks and the rates of every sample (float64)
    check_memory("--samples", 8.0 * args.samples * (network.geometry.size * 4 + 2000))
    with open_run(args, "manifold") as run:
        metrics = manifold_report(network, run.out, samples=args.samples, seed=args.seed,
                                  topology=args.topology, animate=args.animate)
        # wall times differ between runs of one seed: timing.json, not metrics.json
        run.write_json("metrics.json", {k: v for k, v in metrics.items() if k != "seconds"})
        run.write_json("timing.json", {"seconds": metrics["seconds"]})
    return metrics
