"""Generated population activity, three flow-matching generators, and whether it keeps the
attractor.

Noisy states of a fitted ring (N = 128) and hex torus (16 x 16; 32 x 32 with ``--full``); (a)
ambient flow matching on the states, (b) Riemannian flow matching on the decoded coordinate
mapped through the manifold with a learned normal variability, (c) ambient samples relaxed by
the network's own dynamics.
Every sampler takes 10 field evaluations (5 midpoint steps). Each is judged against held-out
states (normal distance against the data's noise floor, Betti numbers, intrinsic W2 of the
decoded coordinate against its i.i.d. floor, tuning curves, correlations, memorization); a flow
trained on shuffled states is the control that must not produce the attractor's topology.
Whether the generated activity is an attractor population (``verdict``, ``*_verdict.png``) is
judged on (a)'s samples as generated: the states are the network's own (an attractor's), and
(a)'s rate W2 to the held-out states must be within 1.2x that of real states; (b) and (c) are
shaped by the network's manifold and are reported beside it, never judged. The barcodes of
every set (``*_barcodes.png``) show the topology the Betti numbers count; the table
(``*_methods.png``, ``equal_time`` in the metrics) puts the three side by side at equal flow
evaluations and, with (a) and (b) retrained to the CPU time (c) took, at equal cost (CPU
time, not wall time: the cores may be shared; on an idle core the two agree).

    python demos/generate_activity.py --out results/generate_activity [--quick | --full]

The default size (``make demo``) generates the torus's activity on the 16 x 16 sheet the other
demos share (256 neurons: its model is fitted once, by the restoration demo); ``--full`` on the
32 x 32 sheet above (1,024 neurons, its own fit), which takes several times as long.
"""

from __future__ import annotations

from pathlib import Path

import torch
from _models import attractor_configs, cache_dir, demo_parser, finish, fitted, size

from _runkit.timing import Stopwatch
from neurodyn.fitting.core import FitConfig
from neurodyn.generative.compare import compare_generators, equal_time
from neurodyn.generative.metrics import ATTRACTOR_BETTI, state_homology
from neurodyn.generative.states import locate, population_states
from neurodyn.plotting import save_figure
from neurodyn.plotting.generative import (
    method_rows,
    plot_generated,
    plot_generated_barcodes,
    plot_kept_verdict,
    plot_method_table,
    verdict_title,
)


def _one(network, count: int, held: int, train_steps: int, seed: int, out: Path, name: str):
    states = population_states(network, count, seed=seed)
    samples: dict = {}
    res = compare_generators(network, states, held, train_steps=train_steps, seed=seed,
                             samples=samples)
    phases = {k: locate(network, r)[0] for k, r in samples.items()}
    save_figure(plot_generated(samples, phases), out / f"{name}_generated.png")
    homologies = {k: state_homology(r, seed=seed) for k, r in samples.items()}
    save_figure(plot_generated_barcodes(homologies, ATTRACTOR_BETTI[network.geometry.dim],
                                        verdict_title(res.verdict.to_dict())),
                out / f"{name}_barcodes.png")
    eq = equal_time(network, states, res, held, train_steps=train_steps, seed=seed)
    d = res.to_dict()
    save_figure(plot_kept_verdict(d), out / f"{name}_verdict.png")
    save_figure(plot_method_table(method_rows(d, eq), f"{name}: 10 flow evaluations each; "
                                  "equal CPU time: (a), (b) retrained to the time of (c)"),
                out / f"{name}_methods.png")
    return {**d, "equal_time": eq}


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns the comparison per geometry."""
    args = demo_parser(__doc__, "generate_activity").parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    args.out.mkdir(parents=True, exist_ok=True)
    cache = cache_dir(args.cache, args.out)
    quick = args.quick
    ring = fitted(FitConfig(n=48 if quick else 128, seed=args.seed), cache)[0]
    metrics = {"ring": _one(ring, 600 if quick else 2000, 150 if quick else 400,
                            300 if quick else 4500, args.seed, args.out, "ring")}
    figures = ["ring_generated.png", "ring_barcodes.png", "ring_methods.png"]
    if not quick:
        torus_config = (FitConfig(geometry="torus", seed=args.seed) if size(args) == "full"
                        else attractor_configs(False, args.seed)["torus"])
        torus = fitted(torus_config, cache)[0]
        metrics["torus"] = _one(torus, 2000, 400, 4500, args.seed, args.out, "torus")
        figures += ["torus_generated.png", "torus_barcodes.png", "torus_methods.png"]
    metrics["figures"] = figures
    metrics["seconds"] = clock.wall_s
    return finish(metrics, args.out)


if __name__ == "__main__":
    main()
