"""``neurodyn manifold``: embeddings, topology and energy landscape of the attractor manifold."""

from __future__ import annotations

import argparse

from ..visualize import MIN_REPORT_SAMPLES, manifold_report
from ._common import prepare

__all__ = ["register"]


def register(sub) -> argparse.ArgumentParser:
    """Add the ``manifold`` sub-command.

    ``neurodyn manifold --model DIR --out OUT [--samples N] [--seed S] [--no-topology]
    [--animate]`` runs :func:`~neurodyn.visualize.manifold_report` and writes its figures,
    ``activity.npz``, ``metrics.json`` and ``config.json`` into ``OUT``.
    """
    p = sub.add_parser(
        "manifold", help="embeddings, topology and energy landscape of the attractor manifold",
        description="Simulated activity near the attractor manifold: PCA and Isomap embeddings, "
                    "persistent homology (Betti numbers, barcode), the energy along the "
                    "manifold and across it, the bump's path during path integration.")
    p.add_argument("--model", required=True, help="directory holding model.pt")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--samples", type=int, default=2000, help="activity samples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-topology", dest="topology", action="store_false",
                   help="skip persistent homology (ripser)")
    p.add_argument("--animate", action="store_true", help="also write the bump animation (GIF)")
    p.set_defaults(func=_manifold)
    return p


def _manifold(args) -> dict:
    from ..io import write_json

    if args.samples < MIN_REPORT_SAMPLES:
        raise ValueError(f"--samples {args.samples}: must be >= {MIN_REPORT_SAMPLES}")
    network, out = prepare(args, "manifold")
    metrics = manifold_report(network, out, samples=args.samples, seed=args.seed,
                              topology=args.topology, animate=args.animate)
    write_json(metrics, out / "metrics.json")
    return metrics
