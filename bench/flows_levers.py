"""Why the built-in field trailed TorchCFM at equal steps: one training lever at a time.

The case is 8 Gaussians -> two spirals (``flows.data`` ``8gaussians`` -> ``spirals``), the
two-layer ReLU field of width 256, batch 512, ``--steps`` steps (3,000), the independent coupling
and the linear path. Every lever is a change of one training choice away from the reference
(flows' practice defaults before the warm-up: rows of W ~ N(0, I), A ~ N(0, 1), the output scaled
by 1/sqrt(m), Fourier time features of one frequency, Adam (0.9, 0.999) at lr 0.03 with a cosine
decay to 0, uniform times, sigma 0, no weight average, the data as they are). The training loop
here is that of ``flows.training`` written with autograd so that every choice can be changed
(at the reference it matches ``flows train``'s W2 within the seed-to-seed spread; the bench
prints both for seed 0).

Reported per lever over ``--seeds`` seeds: the median W2 of 1,000 samples (midpoint, 20 steps)
to the run's 1,000 held-out points (the acceptance measure) and the mean W2 of 2,000 samples
to 2,000 fresh points (a less noisy companion), beside the median floor of the held-out
measure. Writes ``flows_levers.json`` into ``--out``.

    python bench/flows_levers.py --out DIR [--levers all] [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import torch

from flows.data import load_dataset
from flows.errors import derive_seed
from flows.evaluation.distances import w2
from flows.field import features
from flows.runs.measure import sample_field
from flows.training.loop import TrainConfig, prepare_data, train

REFERENCE = dict(lr=0.03, init="flows", out_scale=True, schedule="cosine", warmup=0,
                 time="uniform", sigma=0.0, ema=0.0, betas=(0.9, 0.999), scale=1.0, fourier=1)
# lever -> its changes from the reference
LEVERS = {
    "reference": {},
    "init: PyTorch's (U(+-1/sqrt(fan-in)), no 1/sqrt(m))": dict(init="pytorch",
                                                                out_scale=False),
    "init: A = 0": dict(init="zero-a"),
    "init: W rows ~ N(0, I / p)": dict(init="fan-in"),
    "width scaling: none (A ~ N(0, 1), no 1/sqrt(m))": dict(out_scale=False),
    "schedule: constant": dict(schedule="constant"),
    "schedule: linear decay": dict(schedule="linear"),
    "schedule: warm-up 100 + cosine": dict(warmup=100),
    "lr 0.01": dict(lr=0.01),
    "lr 0.1": dict(lr=0.1),
    "lr 0.2": dict(lr=0.2),
    "lr 0.1, warm-up 200": dict(lr=0.1, warmup=200),
    "lr 0.2, warm-up 200": dict(lr=0.2, warmup=200),
    "time: logit-normal": dict(time="logit-normal"),
    "sigma 0.05": dict(sigma=0.05),
    "EMA 0.999": dict(ema=0.999),
    "EMA 0.99": dict(ema=0.99),
    "Adam beta2 0.99": dict(betas=(0.9, 0.99)),
    "Adam betas (0.9, 0.95)": dict(betas=(0.9, 0.95)),
    "data: coordinates / 2": dict(scale=2.0),
    "data: coordinates x 2": dict(scale=0.5),
    "Fourier features: none": dict(fourier=0),
    "Fourier features: 2": dict(fourier=2),
}


class Field(torch.nn.Module):
    """v(x, t) = c A^T relu(W z(x, t)), c = 1/sqrt(m) or 1, with the lever's initialisation."""

    def __init__(self, m: int, fourier: int, init: str, out_scale: bool, seed: int) -> None:
        super().__init__()
        p, g = 2 + 2 + 2 * fourier, torch.Generator().manual_seed(derive_seed(seed, "init"))
        w, a = torch.randn(m, p, generator=g), torch.randn(m, 2, generator=g)
        if init == "pytorch":  # nn.Linear: U(+-1/sqrt(fan-in)) for weights and bias
            w = (torch.rand(m, p, generator=g) * 2 - 1) / math.sqrt(p - 1)
            a = (torch.rand(m, 2, generator=g) * 2 - 1) / math.sqrt(m)
        elif init == "zero-a":
            a = torch.zeros(m, 2)
        elif init == "fan-in":
            w = w / math.sqrt(p)
        self.W, self.A = torch.nn.Parameter(w), torch.nn.Parameter(a)
        self.fourier, self.c = fourier, 1 / math.sqrt(m) if out_scale else 1.0

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return torch.relu(features(x, t, self.fourier) @ self.W.T) @ self.A * self.c


class Scaled(torch.nn.Module):
    """The flow of data scaled by 1/s, in the data's own units: s v(x / s, t)."""

    def __init__(self, field: torch.nn.Module, s: float) -> None:
        super().__init__()
        self.field, self.s = field, s

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.s * self.field(x / self.s, t)


def factor(o: dict, step: int, steps: int) -> float:
    """The learning rate of ``step`` over the peak: warm-up times the schedule."""
    ramp = min(1.0, (step + 1) / o["warmup"]) if o["warmup"] else 1.0
    return ramp * {"cosine": 0.5 * (1 + math.cos(math.pi * step / steps)), "constant": 1.0,
                   "linear": 1 - step / steps}[o["schedule"]]


def train_lever(o: dict, splits, source, seed: int, steps: int) -> torch.nn.Module:
    """Train the field of the options ``o`` on ``splits``; returns the (averaged) field."""
    field = Field(256, o["fourier"], o["init"], o["out_scale"], seed)
    opt = torch.optim.Adam(field.parameters(), lr=o["lr"], betas=o["betas"])
    avg = torch.optim.swa_utils.AveragedModel(
        field, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(o["ema"])) \
        if o["ema"] else None
    g = torch.Generator().manual_seed(derive_seed(seed, "levers"))
    pool, s = splits.train, o["scale"]
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = o["lr"] * factor(o, step, steps)
        x1 = pool[torch.randint(0, pool.shape[0], (512,), generator=g)] / s
        x0 = source.sample(512, g) / s
        t = torch.rand(512, 1, generator=g) if o["time"] == "uniform" else \
            torch.sigmoid(torch.randn(512, 1, generator=g))
        x_t = (1 - t) * x0 + t * x1 + o["sigma"] * torch.randn(x1.shape, generator=g)
        loss = (field(x_t, t) - (x1 - x0)).square().sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if avg is not None:
            avg.update_parameters(field)
    out = avg.module if avg is not None else field
    return Scaled(out, s) if s != 1.0 else out


def measures(field, splits, source, seed: int) -> tuple[float, float]:
    """(W2 of 1,000 samples to the 1,000 held-out points, W2 of 2,000 to 2,000 fresh points)."""
    with torch.no_grad():
        x = sample_field(field, source, 1000, derive_seed(seed, "eval-samples")).x
        big = sample_field(field, source, 2000, derive_seed(seed, "lever-samples")).x
    fresh = load_dataset("spirals").sample(2000, derive_seed(seed, "lever-points"))
    return w2(x, splits.heldout), w2(big, fresh)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--levers", default="all", help="names of LEVERS separated by ';', or all")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=3000)
    a = p.parse_args(argv)
    names = list(LEVERS) if a.levers == "all" else [n for n in a.levers.split(";") if n]
    unknown = [n for n in names if n not in LEVERS]
    if unknown:
        sys.exit(f"flows_levers: levers {unknown} are unknown; choose from {list(LEVERS)}")
    torch.set_num_threads(1)
    data = []
    for seed in range(a.seeds):
        cfg = TrainConfig(source="8gaussians", data="spirals", width=256, batch=512,
                          steps=a.steps, lr=0.03, warmup=0, seed=seed, n_eval=1000)
        splits, source = prepare_data(cfg)
        data.append((splits, source, w2(splits.floor, splits.heldout)))
    ref = train(TrainConfig(source="8gaussians", data="spirals", steps=a.steps, lr=0.03,
                            warmup=0, seed=0, n_eval=1000), splits=data[0][0],
                source=data[0][1], progress=False)
    check = measures(ref.field, *data[0][:2], 0)[0]
    table = {}
    for name in names:
        o = {**REFERENCE, **LEVERS[name]}
        runs = [measures(train_lever(o, sp, so, seed, a.steps), sp, so, seed)
                for seed, (sp, so, _) in enumerate(data)]
        table[name] = {"w2_heldout": [r[0] for r in runs], "w2_fresh_2000": [r[1] for r in runs],
                       "median_heldout": statistics.median(r[0] for r in runs),
                       "mean_fresh_2000": statistics.mean(r[1] for r in runs)}
        row = table[name]
        print(f"{name:52s} W2 median {row['median_heldout']:.4f} "
              f"[{', '.join(f'{v:.3f}' for v in row['w2_heldout'])}] | 2,000 fresh: mean "
              f"{row['mean_fresh_2000']:.4f}", flush=True)
    floor = statistics.median(d[2] for d in data)
    print(f"floor (median): {floor:.4f}; flows train itself at the reference, seed 0: "
          f"{check:.4f}", flush=True)
    result = {"steps": a.steps, "seeds": a.seeds, "floor_median": floor,
              "flows_train_reference_seed0": check, "levers": table}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "flows_levers.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
