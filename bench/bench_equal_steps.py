"""flows and TorchCFM at equal steps on 2-D cases beyond moons: W2 to held-out points.

Cases (``--cases``, source -> data): ``8gaussians:spirals`` (two thin spiral arms from eight
Gaussians), ``normal:swissroll`` (a thin curved roll) and ``normal:checkerboard`` (sharp edges).
Every run trains a two-layer ReLU field of width ``--width`` on minibatches of ``--batch``
points for ``--steps`` steps with the independent coupling and the linear path (sigma 0), then
draws 1,000 samples (midpoint method, 20 steps, the samples' seed of ``flows train``) and
measures their W2 to the run's 1,000 held-out points, beside the i.i.d. floor (W2 between the
run's floor sample and the held-out points: two independent true samples of the same size).

Sides, each over the learning rates of ``--lrs`` (the same grid for all):

- flows: :func:`flows.training.loop.train` with the library's practice defaults but ``lr``
  (Adam on both layers, the practice schedule, Fourier time features, its initialisation).
- TorchCFM, same field: ``ConditionalFlowMatcher(sigma=0)``, autograd and ``torch.optim.Adam``
  with a cosine decay (``bench_flows.run_torchcfm``) on flows' own field (same inputs, same
  1/sqrt(m) output scaling) from the same initial weights.
- TorchCFM, PyTorch init: the same architecture as ``nn.Linear`` -> ReLU -> ``nn.Linear`` on
  flows' inputs [x, t, sin 2 pi t, cos 2 pi t], with PyTorch's default initialisation (how a
  TorchCFM user writes it), trained the same way.

Each side's best learning rate is the grid value with the lowest median W2 over ``--seeds``; the
report gives every cell, each side's best median, flows' best over each TorchCFM side's best,
every best median over the median floor, and seed by seed the ratio of flows' W2 to each
TorchCFM side's (each at its best lr): their median, range and how often flows is below. With
more than three seeds the ratios of seeds 0-2 alone are printed too. Writes
``bench_equal_steps.json`` into ``--out``.

    python bench/bench_equal_steps.py --out results/bench [--seeds 3] [--steps 3000]

TorchCFM is an optional dependency (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

import torch
from bench_flows import _TimeColumn, _torchcfm, run_torchcfm

from _runkit.timing import Stopwatch
from flows.errors import derive_seed
from flows.evaluation.distances import w2
from flows.field import features
from flows.runs.measure import sample_field
from flows.training.loop import TrainConfig, build_model, prepare_data, train

CASES = ("8gaussians:spirals", "normal:swissroll", "normal:checkerboard")
SIDES = ("flows", "torchcfm same field", "torchcfm pytorch init")


class PyTorchMLP(torch.nn.Module):
    """Linear -> ReLU -> Linear on flows' inputs [x, t, sin 2 pi k t, cos 2 pi k t] (k = 1..F),
    initialised as PyTorch initialises ``nn.Linear``."""

    def __init__(self, dim: int, width: int, fourier: int, seed: int) -> None:
        super().__init__()
        self.fourier = fourier
        with torch.random.fork_rng():  # nn.Linear draws from the global RNG: seed it here only
            torch.manual_seed(derive_seed(seed, "init"))
            self.hidden = torch.nn.Linear(dim + 1 + 2 * fourier, width)
            self.out = torch.nn.Linear(width, dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        z = features(x, t, self.fourier)[:, :-1]  # the bias is the layers' own
        return self.out(torch.relu(self.hidden(z)))


def one_run(side: str, case: str, lr: float, seed: int, a: argparse.Namespace) -> dict:
    """Train one side on one case at one lr and seed; W2 to held-out points and the floor."""
    source_name, data = case.split(":")
    cfg = TrainConfig(data=data, source=None if source_name == "normal" else source_name,
                      width=a.width, batch=a.batch, steps=a.steps, lr=lr, seed=seed,
                      n_eval=1000)
    splits, source = prepare_data(cfg)
    t0 = Stopwatch()
    if side == "flows":
        field = train(cfg, splits=splits, source=source, progress=False).field
    else:
        module = build_model(cfg, 2) if side == "torchcfm same field" else \
            PyTorchMLP(2, a.width, cfg.resolved().fourier, seed)
        field, _ = run_torchcfm(replace(cfg.resolved(), lr=lr), splits.train,
                                _TimeColumn(module), exact_ot=False, source=source)
    seconds = t0.wall_s
    with torch.no_grad():
        x = sample_field(field, source, 1000, derive_seed(seed, "eval-samples")).x
    return {"side": side, "case": case, "lr": lr, "seed": seed, "w2": w2(x, splits.heldout),
            "floor": w2(splits.floor, splits.heldout), "train_s": seconds}


def summarise(runs: list[dict], cases: list[str], lrs: list[float]) -> dict:
    """Per case: each side's median W2 per lr, its best lr and median, the ratios."""
    out = {}
    for case in cases:
        rows = [r for r in runs if r["case"] == case]
        floor = statistics.median({r["seed"]: r["floor"] for r in rows}.values())
        sides = {}
        for side in SIDES:
            med = {lr: statistics.median(r["w2"] for r in rows if r["side"] == side
                                         and r["lr"] == lr) for lr in lrs}
            best = min(med, key=med.get)
            sides[side] = {"median_by_lr": med, "best_lr": best, "best_median": med[best],
                           "best_over_floor": med[best] / floor}
        ours = sides["flows"]["best_median"]
        out[case] = {"floor_median": floor, "sides": sides,
                     "flows_over": {s: ours / sides[s]["best_median"] for s in SIDES[1:]},
                     "flows_over_by_seed": {s: _paired(rows, sides, s) for s in SIDES[1:]}}
    return out


def _paired(rows: list[dict], sides: dict, other: str) -> list[float]:
    """Seed by seed, flows' W2 at its best lr over ``other``'s at its best lr (sorted): the
    spread of the ratio that the medians summarise."""
    def at(side):
        lr = sides[side]["best_lr"]
        return {r["seed"]: r["w2"] for r in rows if r["side"] == side and r["lr"] == lr}

    ours, theirs = at("flows"), at(other)
    return sorted(ours[k] / theirs[k] for k in ours)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--cases", default=",".join(CASES),
                   help="SOURCE:DATA pairs (flows data set names), comma-separated")
    p.add_argument("--lrs", default="0.01,0.03,0.1,0.3", help="the learning-rate grid")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=512)
    a = p.parse_args(argv)
    _torchcfm()
    torch.set_num_threads(1)
    cases = [c for c in a.cases.split(",") if c]
    lrs = [float(v) for v in a.lrs.split(",") if v]
    runs = []
    for case in cases:
        for seed in range(a.seeds):
            for lr in lrs:
                for side in SIDES:
                    runs.append(one_run(side, case, lr, seed, a))
                    r = runs[-1]
                    print(f"{case:22s} seed {seed} lr {lr:<6g} {side:22s} W2 {r['w2']:.4f} "
                          f"(floor {r['floor']:.4f}, {r['train_s']:.0f} s)", flush=True)
    summary = summarise(runs, cases, lrs)
    for case, row in summary.items():
        print(f"{case}: floor {row['floor_median']:.4f}", flush=True)
        for side, s in row["sides"].items():
            print(f"  {side:22s} best lr {s['best_lr']:<6g} median W2 {s['best_median']:.4f} "
                  f"({s['best_over_floor']:.2f}x floor); by lr " + ", ".join(
                      f"{lr:g}: {v:.4f}" for lr, v in s["median_by_lr"].items()), flush=True)
        print("  flows / " + " | flows / ".join(f"{s} {v:.3f}"
                                                 for s, v in row["flows_over"].items()),
              flush=True)
        for s, v in row["flows_over_by_seed"].items():
            print(f"  flows / {s}, seed by seed: median {statistics.median(v):.3f}, range "
                  f"{v[0]:.3f}-{v[-1]:.3f}, below 1 in {sum(x < 1 for x in v)} of {len(v)}",
                  flush=True)
    if a.seeds > 3:  # the acceptance's three seeds, from the same runs
        for case, row in summarise([r for r in runs if r["seed"] < 3], cases, lrs).items():
            print(f"{case}, seeds 0-2: flows / " + " | flows / ".join(
                f"{s} {v:.3f}" for s, v in row["flows_over"].items()), flush=True)
    result = {"steps": a.steps, "width": a.width, "batch": a.batch, "seeds": a.seeds,
              "lrs": lrs, "runs": runs, "summary": {
                  c: {**v, "sides": {s: {**x, "median_by_lr": {str(k): w for k, w in
                                                                x["median_by_lr"].items()}}
                                     for s, x in v["sides"].items()}}
                  for c, v in summary.items()}}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench_equal_steps.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
