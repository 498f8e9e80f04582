"""MNIST-14 on the CPU: excess risk against a shuffled-target control, classifier FD against
the real-vs-real floor, EMA of weights over seeds, and a figure of samples by class.

- Excess risk (mixture surrogate): the practice-regime two-layer field trained on
  ``mnist14-gmm`` (the 100-component mixture fitted to the 14 x 14 images, whose u* is exact)
  and the same training with the targets of every batch shuffled (the pairing of x_t and
  dx_t broken, the control), both scored by :func:`flows.theory.excess.excess_risk`.
- Classifier FD: the same field trained on ``mnist14`` (the images), ``n`` samples (midpoint,
  20 steps) against ``n`` test images, beside the FD between the ``n`` first validation and
  test images (two real subsets); features from :mod:`flows.evaluation.features`.
- EMA: the ``mnist14`` training with ``ema=0.999`` and without, at equal steps, over
  ``--seeds`` seeds; the relative FD change per seed and on average.

Every training is timed in CPU seconds of this process (``time.process_time``) and on the
wall; the numbers go to ``<out>/mnist14.json`` (``<part>-<emas>.json`` with ``--part``) and the
figure to ``<out>/samples_by_class.png``. ``--part model|control|fd`` runs one part, so that the
parts can run side by side. Needs ``make mnist``. One thread per process.

Measured (one run each, on a shared two-core machine; CPU seconds of the training alone):

- defaults (width 512, batch 256, 3,000 steps, lr 0.03 with cosine decay, ~22-25 CPU s per
  training): excess risk 54.6 +- 0.4 (model) against 133.1 +- 1.0 (shuffled targets), 2.4x;
  FD 13.8, 12.6, 14.9 (seeds 0-2, mean 13.8) against 2.56 between 1,000 validation and 1,000
  test images (5.4x the floor; the feature classifier's validation accuracy is 0.965); with
  ``ema=0.999`` at the same 3,000 steps the FD is 29.2, 19.7, 28.8: 87% worse on average (56%
  to 111%), not better;

      nice -n 5 .venv/bin/python bench/mnist14_acceptance.py --out results/mnist14

- ``--part model`` and ``--part control`` with ``--excess-width 1024 --excess-steps 10000``
  (120 CPU s each): excess risk 13.49 +- 0.16 against 131.2 +- 1.0, 9.7x;
- ``--part fd --width 1024 --steps 10000 --seeds 1`` with ``--emas 0`` and ``--emas 0.999``
  side by side (115-119 CPU s each): FD 5.15 (2.01x the floor 2.56) without EMA, 5.26 with
  (2% worse).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from flows.data import load_dataset
from flows.errors import derive_seed
from flows.evaluation.features import feature_classifier, frechet_distance, image_features
from flows.field import features
from flows.mnist import load_mnist
from flows.sampling.ode import integrate
from flows.theory.excess import excess_risk
from flows.training.batches import draw_batch
from flows.training.loop import TrainConfig, build_model, prepare_data, train
from flows.training.steps import FlatAdam, learning_rate


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def shuffled_control(cfg: TrainConfig):
    """The practice training of ``cfg`` (built-in field, Adam, cosine decay) with the targets
    dx_t of every batch permuted: the field cannot learn more than E[dx_t | t]."""
    cfg = cfg.resolved()
    splits, source = prepare_data(cfg)
    field = build_model(cfg, splits.train.shape[1])
    adam = FlatAdam([field.W, field.A])
    base, gen = derive_seed(cfg.seed, "train"), torch.Generator()
    perm_gen = torch.Generator().manual_seed(derive_seed(cfg.seed, "shuffle-targets"))
    spec = field.spec
    for s in range(cfg.steps):
        x_t, t, dx_t, _ = draw_batch(cfg, splits.train, source, base, s, gen)
        dx_t = dx_t[torch.randperm(dx_t.shape[0], generator=perm_gen)]
        _, gw, ga = field.loss_and_grads(features(x_t, t, spec.fourier, spec.normalize), dx_t)
        adam.step([gw, ga], learning_rate(cfg, s))
    return field


def sample(field, n: int, seed: int) -> torch.Tensor:
    x0 = torch.randn(n, 196, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        return integrate(field, x0, "midpoint", 20).x


def excess_part(cfg: TrainConfig, n_test: int, which: str) -> dict:
    """Excess risk of the model (``which="model"``) or of the shuffled-target control."""
    gmm = load_dataset("mnist14-gmm")
    if which == "model":
        field, cpu, wall = _timed(lambda: train(cfg, progress=False).field)
    else:
        field, cpu, wall = _timed(lambda: shuffled_control(cfg))
    ex = excess_risk(field, gmm, n_test=n_test, seed=1)
    return {"excess": ex.to_dict(), "cpu_s": cpu, "wall_s": wall}


def fd_part(cfg: TrainConfig, seeds: int, n: int, out: Path,
            emas: tuple[float, ...] = (0.0, 0.999)) -> dict:
    test, _ = load_mnist("test", 14)
    valid, _ = load_mnist("valid", 14)
    f_test = image_features(test[:n])
    floor = frechet_distance(image_features(valid[:n]), f_test)
    runs = []
    for seed in range(seeds):
        row = {"seed": seed}
        for ema in emas:
            run_cfg = replace(cfg, seed=seed, ema=ema)
            res, cpu, wall = _timed(lambda c=run_cfg: train(c, progress=False))
            x = sample(res.field, n, 10_000 + seed)
            key = "ema" if ema else "plain"
            row[key] = {"fd": frechet_distance(image_features(x), f_test), "cpu_s": cpu,
                        "wall_s": wall}
            if seed == 0 and ema == emas[0]:
                _figure(x, out / "samples_by_class.png")
        if len(emas) == 2:
            row["ema_change"] = row["ema"]["fd"] / row["plain"]["fd"] - 1
        runs.append(row)
        print(json.dumps(row), flush=True)
    key = "plain" if 0.0 in emas else "ema"
    fds = [r[key]["fd"] for r in runs]
    return {"fd_floor_real_subsets": floor, "runs": runs,
            "fd_mean": float(np.mean(fds)), "fd_over_floor": float(np.mean(fds)) / floor,
            "ema_change_mean": float(np.mean([r["ema_change"] for r in runs]))
            if len(emas) == 2 else None,
            "classifier_accuracy": feature_classifier("mnist14")[1]}


def _figure(x: torch.Tensor, path: Path, per_class: int = 10) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, _ = feature_classifier("mnist14")
    with torch.no_grad():
        lab = model(x.float()).argmax(1).numpy()
    grid = np.full((10 * 15 + 1, per_class * 15 + 1), -1.0)
    for k in range(10):
        for j, img in enumerate(x[lab == k][:per_class].numpy()):
            grid[1 + 15 * k:15 + 15 * k, 1 + 15 * j:15 + 15 * j] = img.reshape(14, 14)
    fig, ax = plt.subplots(figsize=(per_class * 0.6, 6.4))
    ax.imshow(np.clip(grid, -1, 1), cmap="gray_r", vmin=-1, vmax=1)
    ax.set(xticks=[], yticks=[7.5 + 15 * k for k in range(10)],
           yticklabels=[str(k) for k in range(10)], ylabel="class (feature classifier)",
           title="generated MNIST-14 by class")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("results/mnist14"))
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n", type=int, default=1000, help="samples and images per FD")
    p.add_argument("--n-test", type=int, default=4000, dest="n_test")
    p.add_argument("--excess-width", type=int, default=512, dest="excess_width")
    p.add_argument("--excess-steps", type=int, default=3000, dest="excess_steps")
    p.add_argument("--emas", default="0,0.999",
                   help="EMA decays of the FD runs (0: none); two give the EMA change")
    p.add_argument("--part", choices=("all", "model", "control", "fd"), default="all",
                   help="run one part only (model, control: the excess risks; fd: the FD and "
                        "EMA runs), writing <part>.json")
    a = p.parse_args()
    torch.set_num_threads(1)
    a.out.mkdir(parents=True, exist_ok=True)
    common = dict(width=a.width, steps=a.steps, batch=a.batch, n_eval=1000,
                  checkpoint_every=a.steps)
    t0, c0 = time.perf_counter(), time.process_time()
    result = {"settings": vars(a) | {"out": str(a.out)}}
    gmm_cfg = TrainConfig(data="mnist14-gmm", **common | dict(
        width=a.excess_width, steps=a.excess_steps, checkpoint_every=a.excess_steps))
    for which in ("model", "control"):
        if a.part in ("all", which):
            result[which] = excess_part(gmm_cfg, a.n_test, which)
            print(json.dumps({which: result[which]}), flush=True)
    if a.part == "all":
        result["control_over_model"] = (result["control"]["excess"]["value"]
                                        / result["model"]["excess"]["value"])
    if a.part in ("all", "fd"):
        emas = tuple(float(e) for e in a.emas.split(","))
        result["fd"] = fd_part(TrainConfig(data="mnist14", **common), a.seeds, a.n, a.out, emas)
        print(json.dumps({k: result["fd"][k] for k in (
            "fd_floor_real_subsets", "fd_mean", "fd_over_floor", "ema_change_mean")}))
    result["total_cpu_s"] = time.process_time() - c0
    result["total_wall_s"] = time.perf_counter() - t0
    name = "mnist14.json" if a.part == "all" else f"{a.part}-{a.emas}.json"
    (a.out / name).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
