"""``neurodyn manifold``: embeddings, topology and energy landscape of the attractor manifold."""

from __future__ import annotations

import argparse

from ._common import MIN_SURVEY_SAMPLES, args_config, command, config_of, positive_int, seed_arg

__all__ = ["register"]


def register(sub) -> argparse.ArgumentParser:
    """Add the ``manifold`` sub-command.

    ``neurodyn manifold --model DIR --out OUT [--samples N] [--seed S] [--no-topology]
    [--animate]`` runs :func:`~neurodyn.runs.simulate.manifold_run`
    (:func:`~neurodyn.runs.manifold_report`), which writes its figures,
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
    from ..runs.simulate import ManifoldConfig, manifold_run

    return manifold_run(config_of(ManifoldConfig, args), args.out,
                        arguments=args_config(args))
