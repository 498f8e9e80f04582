"""N(0, I) -> moons with the practice regime: samples, trajectories, W2 beside its floor,
path straightness and memorization against the exact empirical optimal velocity.

    python demos/flows_moons.py --out results/flows_moons [--quick]
"""

from __future__ import annotations

import torch
from _models import demo_parser, finish

from flows.evaluation.distances import memorization, path_energy
from flows.optimal import EmpiricalOptimalField
from flows.runs.run import run_training
from flows.sampling.ode import integrate
from flows.training.loop import TrainConfig, prepare_data


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics (also written to OUT/metrics.json)."""
    p = demo_parser(__doc__, "flows_moons", cache=False)
    p.add_argument("--animate", action="store_true",
                   help="also write a GIF of trajectories from noise to data (slower)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    steps, n_eval = (300, 200) if a.quick else (15_000, 1000)
    cfg = TrainConfig(data="moons", steps=steps, n_eval=n_eval, seed=a.seed)
    metrics = run_training(cfg, a.out / "train", fresh=True, progress=False).to_dict()
    from flows.training.checkpoint import load_model

    field, _ = load_model(a.out / "train")
    splits, source = prepare_data(cfg)
    x0 = source.sample(n_eval, a.seed + 1)
    pe = path_energy(field, x0, steps=20)
    x = integrate(field, x0, steps=20).x
    mem = memorization(x, splits.train, seed=a.seed)
    # the memorizing reference: the exact velocity of the empirical training distribution
    ref_field = EmpiricalOptimalField(splits.train)
    x_ref = integrate(ref_field, x0, steps=100).x
    mem_ref = memorization(x_ref, splits.train)
    out = {"w2": metrics["w2_heldout"], "w2_floor": metrics["w2_floor"],
           "train_wall_time_s": metrics["train_wall_time_s"], "steps": steps,
           "normalized_path_energy": pe.normalized,
           "memorized_fraction": mem.fraction,
           "memorized_fraction_iid_baseline": mem.baseline,
           "memorized_fraction_empirical_optimal": mem_ref.fraction,
           "figures": [f"train/{f}" for f in metrics["figures"]]}
    if a.animate:
        from flows.plotting.animation import animate_flow

        sol = integrate(field, x0[:500], steps=40, save_trajectory=True)
        gif = animate_flow(sol.trajectory.numpy(), a.out / "flow.gif", times=sol.times.numpy(),
                           target=splits.heldout[:500].numpy())
        out["animation"] = str(gif.relative_to(a.out))
    return finish(out, a.out)


if __name__ == "__main__":
    main()
