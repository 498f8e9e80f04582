"""Side-by-side training speed and quality: flows versus TorchCFM on the same network and data.

Both train v(x, t) = m^{-1/2} A^T relu(W [x, t, 1]) (same initial weights) on N(0, I) -> moons
with batch 512, Adam and the same cosine learning-rate schedule, for the same number of steps:

- flows: gradients from the activation pattern, Adam on a flat buffer, exact OT as a
  permutation (compiled auction with an exact sparse finish, :mod:`flows.assignment`); with the
  OT coupling the batches of coming steps are prepared by ``train``'s worker threads (one per
  core by default), so couplings are solved on both cores;
- TorchCFM: ``ConditionalFlowMatcher`` / ``ExactOptimalTransportConditionalFlowMatcher`` (POT's
  network simplex, which runs on one core), autograd and ``torch.optim.Adam``.

Both sides get the same ``--threads`` torch threads. The two sides are timed alternately over
``--repeats`` rounds and each ratio is the median of the per-round ratios (machines are noisy).
For exact OT, flows is also timed with ``workers=0`` (everything in one thread) and that ratio is
reported as ``speed_ratio_one_core``.

Reports training steps per second, their ratio, and W2 (1,000 generated points against 1,000
held-out points) beside its noise floor. Writes ``bench_flows.json`` into ``--out``.

    python bench/bench_flows.py --out results/bench

TorchCFM is an optional dependency (the ``bench`` extra); without it the script exits with a
message.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from flows.evaluation import w2
from flows.run import sample_field
from flows.training import TrainConfig, prepare_data, train


def _torchcfm():
    try:
        import torchcfm.conditional_flow_matching as cfm
    except ImportError:
        sys.exit("bench_flows: TorchCFM is not installed; install the 'bench' extra "
                 "(pip install -e '.[bench]') to run this comparison")
    return cfm


class TwoLayer(torch.nn.Module):
    """The same field as flows.TwoLayerReLUField, written as an autograd module."""

    def __init__(self, w: torch.Tensor, a: torch.Tensor) -> None:
        super().__init__()
        self.W = torch.nn.Parameter(w.clone())
        self.A = torch.nn.Parameter(a.clone())
        self.scale = 1.0 / math.sqrt(w.shape[0])

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        t = torch.as_tensor(t, dtype=x.dtype).reshape(-1, 1).expand(x.shape[0], 1)
        z = torch.cat([x, t, torch.ones_like(t)], 1)
        return torch.relu(z @ self.W.T) @ self.A * self.scale


def run_torchcfm(cfg: TrainConfig, pool: torch.Tensor, w0: torch.Tensor, a0: torch.Tensor,
                 exact_ot: bool) -> tuple[TwoLayer, float]:
    cfm = _torchcfm()
    matcher = (cfm.ExactOptimalTransportConditionalFlowMatcher(sigma=0.0) if exact_ot
               else cfm.ConditionalFlowMatcher(sigma=0.0))
    model = TwoLayer(w0, a0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    g = torch.Generator().manual_seed(cfg.seed)
    np.random.seed(cfg.seed)  # noqa: NPY002 (TorchCFM samples OT pairs from the global RNG)
    start = time.perf_counter()
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))
        x1 = pool[torch.randint(0, pool.shape[0], (cfg.batch,), generator=g)]
        x0 = torch.randn(x1.shape, generator=g)
        t, xt, ut = matcher.sample_location_and_conditional_flow(x0, x1)
        loss = (model(xt, t) - ut).square().sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=2000, help="steps, independent coupling")
    p.add_argument("--ot-steps", type=int, default=600, help="steps, exact OT coupling")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3,
                   help="alternating rounds; the reported ratio is the median over rounds")
    a = p.parse_args(argv)
    _torchcfm()
    torch.set_num_threads(a.threads)
    result: dict = {"width": a.width, "batch": a.batch, "lr": a.lr, "threads": a.threads,
                    "data": "N(0, I) -> moons", "n_eval": 1000}
    for coupling, steps in (("independent", a.steps), ("ot", a.ot_steps)):
        cfg = TrainConfig(data="moons", coupling=coupling, steps=steps, width=a.width,
                          batch=a.batch, lr=a.lr, seed=a.seed, n_eval=1000, fourier=0)
        splits, source = prepare_data(cfg)
        warm = replace(cfg, steps=min(20, steps))  # first-touch allocations, untimed
        train(warm, splits=splits, source=source, progress=False)
        run_torchcfm(warm.resolved(), splits.train, *_initial(cfg), exact_ot=coupling == "ot")
        # alternate the two sides over several rounds; ratios are taken within each round
        rounds = []
        for _ in range(a.repeats):
            ours = train(cfg, splits=splits, source=source, progress=False)
            theirs, t_theirs = run_torchcfm(cfg.resolved(), splits.train, *_initial(cfg),
                                            exact_ot=coupling == "ot")
            one = {"flows_s": ours.wall_time, "torchcfm_s": t_theirs}
            if coupling == "ot":
                serial = train(cfg, splits=splits, source=source, progress=False, workers=0)
                one["flows_one_core_s"] = serial.wall_time
            rounds.append(one)
        floor = w2(splits.floor, splits.heldout)
        w_ours = w2(sample_field(ours.field, source, 1000, 7).x, splits.heldout)
        with torch.no_grad():
            w_theirs = w2(sample_field(theirs, source, 1000, 7).x, splits.heldout)
        med = {k: float(np.median([r[k] for r in rounds])) for k in rounds[0]}
        row = {"steps": steps, "rounds": rounds,
               "flows_steps_per_s": steps / med["flows_s"],
               "torchcfm_steps_per_s": steps / med["torchcfm_s"],
               "speed_ratio": float(np.median([r["torchcfm_s"] / r["flows_s"] for r in rounds])),
               "w2_flows": w_ours, "w2_torchcfm": w_theirs, "w2_floor": floor}
        if coupling == "ot":
            row["flows_one_core_steps_per_s"] = steps / med["flows_one_core_s"]
            row["speed_ratio_one_core"] = float(np.median(
                [r["torchcfm_s"] / r["flows_one_core_s"] for r in rounds]))
            row["one_core_result_identical"] = bool(torch.equal(serial.field.W, ours.field.W))
        row["w2_no_worse"] = bool(w_ours <= w_theirs)
        result[coupling] = row
        print(f"{coupling:12s} flows {row['flows_steps_per_s']:8.1f} steps/s | TorchCFM "
              f"{row['torchcfm_steps_per_s']:8.1f} steps/s | ratio {row['speed_ratio']:5.2f} | "
              f"W2 {w_ours:.4f} vs {w_theirs:.4f} (floor {floor:.4f})", flush=True)
        if coupling == "ot":
            print(f"{'':12s} flows on one core (workers=0): "
                  f"{row['flows_one_core_steps_per_s']:8.1f} steps/s | ratio "
                  f"{row['speed_ratio_one_core']:5.2f}", flush=True)
    result["ratios"] = {"independent": result["independent"]["speed_ratio"],
                        "ot": result["ot"]["speed_ratio"]}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench_flows.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["ratios"]))
    return result


def _initial(cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    from flows.errors import derive_seed
    from flows.field import FieldSpec, TwoLayerReLUField

    r = cfg.resolved()
    spec = FieldSpec(2, r.width, r.regime, bool(r.normalize), r.fourier)
    field = TwoLayerReLUField(spec, seed=derive_seed(r.seed, "init"))
    return field.W.detach().clone(), field.A.detach().clone()


if __name__ == "__main__":
    main()
