"""Side-by-side training speed and quality: flows versus TorchCFM, and the assignment's worst case.

Parts (``--parts``, comma-separated; default all):

- ``speed``: both train v(x, t) = m^{-1/2} A^T relu(W [x, t, 1]) (same initial weights) on
  N(0, I) -> moons with batch 512, Adam and the same cosine learning-rate schedule, for the same
  number of steps, with the independent and the exact-OT coupling. flows: gradients from the
  activation pattern, flat Adam, exact OT as a permutation (compiled auction + exact sparse
  finish), batches prepared ahead by a thread per other core and by the training thread whenever its
  batch is not ready; TorchCFM:
  ``ConditionalFlowMatcher`` / ``ExactOptimalTransportConditionalFlowMatcher`` (POT's network
  simplex), autograd and ``torch.optim.Adam``. Reports steps/s, the flows/TorchCFM ratio, the
  flows OT step over the flows independent step, and W2 beside its floor. flows' OT run is
  timed with its default batch threads (the coupling of coming steps solved on the other core
  while a step trains) and with ``workers=0`` (every coupling solved in the training thread: the
  single-core cost), each with the auction's candidate lists and without (the plain auction),
  and once with every auction started cold (no warm start from reference batches); all draw
  the same batches and must give the same weights. Also reported: half the single-core
  OT step over the independent step, the even split of one step's work (training and coupling)
  between the two cores. A threaded OT step near it uses both cores fully, so it can come down
  further only with less work per step.
- ``selu``: a user-defined 3 x 64 SELU MLP (``flows.field.mlp.SeluMLP``) trained by flows (the
  ``model`` option: autograd, the library's batches and schedule) and by TorchCFM for the same
  steps from the same initial weights; W2 of 1,000 samples to 1,000 held-out points, over
  ``--seeds`` seeds.
- ``adversarial``: the exact assignment on 200 batches of 512 built to be hard (one point at
  distance 1e4, all points tied, heavy duplicates, coordinates on a coarse grid) against 200
  typical batches; thread CPU time per batch, worst over median.
- ``assignment``: the exact assignment alone on 100 typical batches of 512 (N(0, I) -> moons,
  squared Euclidean cost): flows from the points (cold, and warm-started from a
  ``flows.assignment.warmstart.PriceMap`` of 4 reference batches, as in training), flows' auction
  with candidate lists, the same auction scanning every row in full (``list_length=0``), POT's
  network simplex and scipy's linear_sum_assignment;
  thread CPU time per batch, medians and ratios.
- ``anatomy``: where one exact assignment's time goes (60 typical batches of 512): the cost, the
  auction phase by phase, the sparse graph and the exact finish, and the same with a final eps
  10x coarser (a shorter auction, a denser exact finish).
- ``likelihood``: log-likelihood of 1,000 held-out moons points under a trained field with
  dopri5 at rtol = atol = 1e-5 (wall time and NFE).

Every timed comparison alternates the sides over ``--repeats`` rounds and reports the median of
the per-round ratios (the machine may be shared). Writes ``bench_flows.json`` into ``--out``.

    python bench/bench_flows.py --out results/bench [--parts speed,selu,adversarial,assignment,
                                                              likelihood]

TorchCFM is an optional dependency (the ``bench`` extra); the parts that need it exit with a
message without it.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from flows.assignment import auction as assignment
from flows.assignment.auction import LIST_LENGTH, auction_assignment, squared_euclidean_assignment
from flows.assignment.warmstart import PriceMap
from flows.data import load_dataset
from flows.errors import derive_seed
from flows.evaluation.distances import w2
from flows.field import FieldSpec, TwoLayerReLUField
from flows.field.module import build_module
from flows.runs.run import sample_field
from flows.sampling.ode import log_likelihood
from flows.training import batches as batches_module
from flows.training.batches import WARM_BATCHES as WARM
from flows.training.loop import TrainConfig, prepare_data, train

SELU_MODEL = "flows.field.mlp:SeluMLP"

# flows' exact-OT run again, by (workers, candidate-list length, warm-start reference batches):
# None = the default batch threads, 0 = every coupling in the training thread (single core);
# list length 0 = the plain auction, every bid scanning its row in full
# (flows.assignment.auction.LIST_LENGTH, set for that run); 0 reference batches = every auction
# starts cold (flows.training.batches.WARM_BATCHES, set for that run)
OT_VARIANTS = {"single core": (0, LIST_LENGTH, WARM), "plain auction": (None, 0, WARM),
               "plain, single core": (0, 0, WARM), "cold start": (None, LIST_LENGTH, 0)}


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


class _TimeColumn(torch.nn.Module):
    """TorchCFM passes t of shape (B,) (or a scalar when sampling); the module wants (B, 1)."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        t = torch.as_tensor(t, dtype=x.dtype).reshape(-1, 1).expand(x.shape[0], 1)
        return self.module(x, t)


def run_torchcfm(cfg: TrainConfig, pool: torch.Tensor, model: torch.nn.Module,
                 exact_ot: bool, source=None) -> tuple[torch.nn.Module, float]:
    """TorchCFM's training loop on ``model`` (trained in place); returns (model, seconds).

    x1 is drawn from ``pool``, x0 from ``source`` (a :class:`flows.data.Dataset`; None: N(0, I)).
    """
    cfm = _torchcfm()
    matcher = (cfm.ExactOptimalTransportConditionalFlowMatcher(sigma=0.0) if exact_ot
               else cfm.ConditionalFlowMatcher(sigma=0.0))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    g = torch.Generator().manual_seed(cfg.seed)
    np.random.seed(cfg.seed)  # noqa: NPY002 (TorchCFM samples OT pairs from the global RNG)
    with torch.random.fork_rng():  # TorchCFM draws t from torch's global RNG: seed it per run
        torch.manual_seed(cfg.seed)
        start = time.perf_counter()
        for step in range(cfg.steps):
            for group in opt.param_groups:
                group["lr"] = cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))
            x1 = pool[torch.randint(0, pool.shape[0], (cfg.batch,), generator=g)]
            x0 = torch.randn(x1.shape, generator=g) if source is None else \
                source.sample(cfg.batch, g)
            t, xt, ut = matcher.sample_location_and_conditional_flow(x0, x1)
            loss = (model(xt, t) - ut).square().sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model, time.perf_counter() - start


def _initial(cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    r = cfg.resolved()
    spec = FieldSpec(2, r.width, r.regime, bool(r.normalize), r.fourier)
    field = TwoLayerReLUField(spec, seed=derive_seed(r.seed, "init"))
    return field.W.detach().clone(), field.A.detach().clone()


def bench_speed(a: argparse.Namespace) -> dict:
    """flows and TorchCFM on the two-layer field, independent and exact-OT couplings."""
    result: dict = {"width": a.width, "batch": a.batch, "lr": a.lr, "threads": a.threads}
    steps_of = {"independent": a.steps, "ot": a.ot_steps}
    cfgs = {c: TrainConfig(data="moons", coupling=c, steps=s, width=a.width, batch=a.batch,
                           lr=a.lr, seed=a.seed, n_eval=1000, fourier=0)
            for c, s in steps_of.items()}
    splits, source = prepare_data(cfgs["ot"])
    for cfg in cfgs.values():  # first-touch allocations and compilation, untimed
        warm = replace(cfg, steps=20)
        train(warm, splits=splits, source=source, progress=False)
        train(warm, splits=splits, source=source, progress=False, workers=0)
        assignment.LIST_LENGTH = 0
        train(warm, splits=splits, source=source, progress=False, workers=0)
        assignment.LIST_LENGTH = LIST_LENGTH
        run_torchcfm(warm.resolved(), splits.train, TwoLayer(*_initial(cfg)),
                     cfg.coupling == "ot")
    rounds = []
    for _ in range(a.repeats):  # alternate all four sides within each round
        one = {}
        for c, cfg in cfgs.items():
            ours = train(cfg, splits=splits, source=source, progress=False)
            theirs, t_theirs = run_torchcfm(cfg.resolved(), splits.train,
                                            TwoLayer(*_initial(cfg)), c == "ot")
            one[f"flows_{c}_step_s"] = ours.wall_time / cfg.steps
            one[f"torchcfm_{c}_step_s"] = t_theirs / cfg.steps
            one[f"_{c}"] = (ours, theirs)
        for name, (workers, lists, warm) in OT_VARIANTS.items():
            assignment.LIST_LENGTH, batches_module.WARM_BATCHES = lists, warm
            try:
                run = train(cfgs["ot"], splits=splits, source=source, progress=False,
                            workers=workers)
            finally:
                assignment.LIST_LENGTH, batches_module.WARM_BATCHES = LIST_LENGTH, WARM
            same = torch.equal(run.field.W, one["_ot"][0].field.W)
            if lists == LIST_LENGTH and not same:  # threads never change a batch
                raise RuntimeError(f"the OT run {name} differs from the default one")
            one[f"flows_{name}_step_s"] = run.wall_time / cfgs["ot"].steps
            one[f"flows_{name}_same_weights"] = same
        rounds.append(one)
    floor = w2(splits.floor, splits.heldout)
    for c in cfgs:
        ours, theirs = rounds[-1][f"_{c}"]
        w_ours = w2(sample_field(ours.field, source, 1000, 7).x, splits.heldout)
        with torch.no_grad():
            w_theirs = w2(sample_field(_TimeColumn(theirs), source, 1000, 7).x,
                          splits.heldout)
        result[c] = {
            "steps": steps_of[c],
            "flows_steps_per_s": 1 / float(np.median([r[f"flows_{c}_step_s"] for r in rounds])),
            "torchcfm_steps_per_s": 1 / float(np.median([r[f"torchcfm_{c}_step_s"]
                                                         for r in rounds])),
            "speed_ratio": float(np.median([r[f"torchcfm_{c}_step_s"] / r[f"flows_{c}_step_s"]
                                            for r in rounds])),
            "w2_flows": w_ours, "w2_torchcfm": w_theirs, "w2_floor": floor}
    result["ot_step_over_independent_step"] = float(np.median(
        [r["flows_ot_step_s"] / r["flows_independent_step_s"] for r in rounds]))
    # the single-core OT step's work (training + coupling) split evenly between two cores
    result["two_core_split_over_independent_step"] = float(np.median(
        [r["flows_single core_step_s"] / 2 / r["flows_independent_step_s"] for r in rounds]))
    result["ot_variants"] = {name: {
        "workers": "default" if workers is None else workers, "list_length": lists,
        "warm_start_batches": warm,
        "same_weights": all(r[f"flows_{name}_same_weights"] for r in rounds),
        "steps_per_s": 1 / float(np.median([r[f"flows_{name}_step_s"] for r in rounds])),
        "step_over_independent_step": float(np.median(
            [r[f"flows_{name}_step_s"] / r["flows_independent_step_s"] for r in rounds]))}
        for name, (workers, lists, warm) in OT_VARIANTS.items()}
    result["rounds"] = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rounds]
    for c in cfgs:
        row = result[c]
        print(f"{c:12s} flows {row['flows_steps_per_s']:8.1f} steps/s | TorchCFM "
              f"{row['torchcfm_steps_per_s']:8.1f} steps/s | ratio {row['speed_ratio']:5.2f} | "
              f"W2 {row['w2_flows']:.4f} vs {row['w2_torchcfm']:.4f} (floor {floor:.4f})",
              flush=True)
    print(f"flows OT step / independent step: {result['ot_step_over_independent_step']:.2f} "
          f"(single-core OT step / 2: "
          f"{result['two_core_split_over_independent_step']:.2f})", flush=True)
    for name, row in result["ot_variants"].items():
        print(f"  {name:18s} (workers {row['workers']}, lists {row['list_length']}, warm "
              f"{row['warm_start_batches']}): "
              f"{row['steps_per_s']:7.1f} steps/s, OT step / independent step "
              f"{row['step_over_independent_step']:.2f}", flush=True)
    return result


def bench_selu(a: argparse.Namespace) -> dict:
    """A user's 3 x 64 SELU MLP trained by flows (model option) and by TorchCFM."""
    rows = []
    for seed in range(a.seeds):
        cfg = TrainConfig(data="moons", model=SELU_MODEL, model_args={"hidden": 64, "depth": 3},
                          steps=a.selu_steps, batch=a.selu_batch, lr=a.selu_lr, seed=seed,
                          n_eval=1000)
        splits, source = prepare_data(cfg)
        init = build_module(SELU_MODEL, cfg.model_args, derive_seed(seed, "init"))
        t0 = time.perf_counter()
        ours = train(cfg, splits=splits, source=source, progress=False,
                     model=copy.deepcopy(init))
        t_ours = time.perf_counter() - t0
        theirs, t_theirs = run_torchcfm(cfg.resolved(), splits.train,
                                        _TimeColumn(copy.deepcopy(init)), exact_ot=False)
        with torch.no_grad():
            w_ours = w2(sample_field(ours.field, source, 1000, 7).x, splits.heldout)
            w_theirs = w2(sample_field(theirs, source, 1000, 7).x, splits.heldout)
        rows.append({"seed": seed, "w2_flows": w_ours, "w2_torchcfm": w_theirs,
                     "w2_floor": w2(splits.floor, splits.heldout), "flows_s": t_ours,
                     "torchcfm_s": t_theirs})
        print(f"SELU seed {seed}: W2 flows {w_ours:.4f} | TorchCFM {w_theirs:.4f} | floor "
              f"{rows[-1]['w2_floor']:.4f}", flush=True)
    med_ours = float(np.median([r["w2_flows"] for r in rows]))
    med_theirs = float(np.median([r["w2_torchcfm"] for r in rows]))
    out = {"steps": a.selu_steps, "batch": a.selu_batch, "lr": a.selu_lr, "runs": rows,
           "w2_flows_median": med_ours, "w2_torchcfm_median": med_theirs,
           "w2_relative_difference": med_ours / med_theirs - 1}
    print(f"SELU median W2: flows {med_ours:.4f} vs TorchCFM {med_theirs:.4f} "
          f"({100 * out['w2_relative_difference']:+.1f}%)", flush=True)
    return out


def adversarial_batch(kind: int, seed: int, n: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """A hard assignment instance: 0 one target point at distance 1e4, 1 all targets equal,
    2 targets drawn from 32 points (about 16 copies each), 3 both clouds on a 0.5 grid."""
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((n, 2))
    x1 = load_dataset("moons").sample(n, seed).double().numpy()
    if kind == 0:
        ang = rng.uniform(0, 2 * np.pi)
        x1[rng.integers(n)] = 1e4 * np.array([np.cos(ang), np.sin(ang)])
    elif kind == 1:
        x1[:] = x1[0]
    elif kind == 2:
        x1 = x1[rng.integers(0, 32, n)]
    else:
        x0, x1 = np.round(x0 * 2) / 2, np.round(x1 * 2) / 2
    return x0, x1


def bench_adversarial(a: argparse.Namespace) -> dict:
    """Thread CPU time of the assignment on 200 typical and 200 adversarial batches of 512."""
    moons = load_dataset("moons")
    squared_euclidean_assignment(*adversarial_batch(0, 0))  # compile / load, untimed
    typical, hard = [], {k: [] for k in range(4)}
    for s in range(200):  # alternate typical and adversarial batches
        rng = np.random.default_rng(10_000 + s)
        x0, x1 = rng.standard_normal((512, 2)), moons.sample(512, 10_000 + s).double().numpy()
        t0 = time.thread_time()
        squared_euclidean_assignment(x0, x1)
        typical.append(time.thread_time() - t0)
        x0, x1 = adversarial_batch(s % 4, s)
        t0 = time.thread_time()
        squared_euclidean_assignment(x0, x1)
        hard[s % 4].append(time.thread_time() - t0)
    med = float(np.median(typical))
    every = [t for v in hard.values() for t in v]
    names = ["outlier at 1e4", "all tied", "duplicates (32 points)", "0.5 grid"]
    out = {"typical_median_ms": 1e3 * med, "typical_max_ms": 1e3 * max(typical),
           "adversarial_median_ms": 1e3 * float(np.median(every)),
           "adversarial_max_ms": 1e3 * max(every),
           "worst_over_typical_median": max(every) / med,
           "worst_over_adversarial_median": max(every) / float(np.median(every)),
           "by_kind": {names[k]: {"median_ms": 1e3 * float(np.median(v)),
                                  "max_ms": 1e3 * max(v)} for k, v in hard.items()}}
    print(f"assignment, batch 512: typical median {out['typical_median_ms']:.2f} ms | worst of "
          f"200 adversarial {out['adversarial_max_ms']:.2f} ms = "
          f"{out['worst_over_typical_median']:.2f}x the typical median, "
          f"{out['worst_over_adversarial_median']:.2f}x the adversarial median", flush=True)
    return out


def bench_assignment(a: argparse.Namespace) -> dict:
    """The exact assignment alone: flows (lists, plain), POT and scipy on typical batches."""
    import ot
    from scipy.optimize import linear_sum_assignment

    moons = load_dataset("moons")
    w = np.full(a.batch, 1.0 / a.batch)
    rng = np.random.default_rng(19_999)  # reference batches of the warm start, as in training
    warm = PriceMap.fit([(rng.standard_normal((a.batch, 2)),
                          moons.sample(a.batch, 19_000 + r).double().numpy()) for r in range(4)])
    solvers = {
        "flows (from points)": lambda x, y, c: squared_euclidean_assignment(x, y),
        "flows, warm start": lambda x, y, c: squared_euclidean_assignment(x, y, warm(y)),
        "flows auction, lists": lambda x, y, c: auction_assignment(c),
        "flows auction, plain": lambda x, y, c: auction_assignment(c, list_length=0),
        "POT emd": lambda x, y, c: ot.emd(w, w, c, numItermax=10**7),
        "scipy lsa": lambda x, y, c: linear_sum_assignment(c),
    }
    times: dict = {k: [] for k in solvers}
    for s in range(-1, 100):  # batch -1 compiles / loads, untimed
        rng = np.random.default_rng(20_000 + abs(s))
        x0 = rng.standard_normal((a.batch, 2))
        x1 = moons.sample(a.batch, 20_000 + abs(s)).double().numpy()
        c = ((x0[:, None] - x1[None]) ** 2).sum(-1)
        for name, fn in solvers.items():
            t0 = time.thread_time()
            fn(x0, x1, c)
            if s >= 0:
                times[name].append(time.thread_time() - t0)
    med = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
    ref = med["flows (from points)"]
    out = {"batches": 100, "batch": a.batch, "median_ms": med,
           "over_flows": {k: v / ref for k, v in med.items()},
           "warm_over_cold_paired": float(np.median(np.array(times["flows, warm start"])
                                                    / times["flows (from points)"]))}
    print("assignment alone, batch " + str(a.batch) + ": " + " | ".join(
        f"{k} {v:.2f} ms ({v / ref:.2f}x)" for k, v in med.items()), flush=True)
    print(f"warm start / cold start, median of paired ratios (map included): "
          f"{out['warm_over_cold_paired']:.3f}", flush=True)
    return out


def bench_anatomy(a: argparse.Namespace) -> dict:
    """Where one exact assignment's time goes, on 60 typical batches (medians): the cost, each
    eps phase of the auction (the difference of the auction stopped after it and before it, on
    the same batch), the sparse graph and the exact finish, for the library's final eps and one
    10x coarser."""
    auction, matching = assignment._kernels()
    moons = load_dataset("moons")
    n = a.batch
    problems = []
    for s in range(60):
        rng = np.random.default_rng(30_000 + s)
        x0 = rng.standard_normal((n, 2))
        x1 = moons.sample(n, 30_000 + s).double().numpy()
        seconds = []
        for _ in range(3):  # the least of 3: first-touch page faults are not the kernel's
            t0 = time.thread_time()
            c, typical, top, _, _, _ = matching.reduced_squared_euclidean(x0, x1, False)
            seconds.append(time.thread_time() - t0)
        problems.append((c, typical, top, min(seconds)))
    eps0 = assignment.EPS0
    phases = 1 + math.ceil(math.log(eps0 * n / assignment.DELTA) / math.log(assignment.THETA))

    def run(c, typical, top, eps_f) -> tuple[float, float, float, float]:
        """Thread times (auction, graph, finish) in ms and edges a row of one solve."""
        t0 = time.thread_time()
        sigma, p, ok, cand, cost, bound = auction.auction(
            c, np.zeros(n), eps0 * typical, eps_f, assignment.THETA, 1000 * n + 10 * n * n,
            assignment.LIST_LENGTH, assignment.LIST_PHASE, np.int64, np.inf)
        t1 = time.thread_time()
        margin = 4 * (n + 2) * np.finfo(float).eps * (top + np.abs(p).max())
        indptr, ind, val = auction.slack_graph(c, p, sigma, cand, bound, margin)
        t2 = time.thread_time()
        matching.sparse_assignment(indptr, ind, val)
        return 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (time.thread_time() - t2), len(ind) / n

    # stopping points: after phase k (k = 0 .. phases - 2), the library's final eps, and a final
    # eps 10x coarser; timed in turn on each batch, the least of 3 rounds
    finals = [eps0 / assignment.THETA ** k for k in range(phases - 1)] + \
        [assignment.DELTA / n, 10 * assignment.DELTA / n]
    run(*problems[0][:3], finals[-2] * problems[0][1])  # compile / load, untimed
    table = np.empty((len(problems), len(finals), 4))
    for b, (c, typical, top, _) in enumerate(problems):
        rounds = [[run(c, typical, top, max(f * typical, 1e-10 * top)) for f in finals]
                  for _ in range(3)]
        table[b] = np.min(np.array(rounds), axis=0)
    cumulative = table[:, : phases, 0]  # auction time up to and including each phase
    per_phase = np.median(np.diff(cumulative, axis=1, prepend=0.0), axis=0).tolist()
    out = {"batch": n, "batches": len(problems),
           "cost_ms": 1e3 * float(np.median([p[3] for p in problems])),
           "auction_ms_by_phase": per_phase, "finals": {}}
    for col, delta in ((phases - 1, assignment.DELTA), (phases, 10 * assignment.DELTA)):
        auc, graph, finish, edges = np.median(table[:, col], axis=0).tolist()
        out["finals"][str(delta)] = {"auction_ms": auc, "graph_ms": graph, "finish_ms": finish,
                                     "total_ms": auc + graph + finish, "edges_per_row": edges}
    print(f"anatomy of one assignment, batch {n}: cost {out['cost_ms']:.2f} ms | auction by eps "
          "phase " + " + ".join(f"{v:.2f}" for v in per_phase) + " ms", flush=True)
    for delta, row in out["finals"].items():
        print(f"  final eps {delta} x typical / n: auction {row['auction_ms']:.2f} + graph "
              f"{row['graph_ms']:.2f} + finish {row['finish_ms']:.2f} = {row['total_ms']:.2f} "
              f"ms, {row['edges_per_row']:.1f} edges a row", flush=True)
    return out


def bench_likelihood(a: argparse.Namespace) -> dict:
    """log p of 1,000 held-out moons points, dopri5 at rtol = atol = 1e-5."""
    cfg = TrainConfig(data="moons", steps=a.steps, width=a.width, seed=a.seed, n_eval=1000)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    t0 = time.perf_counter()
    ll = log_likelihood(res.field, splits.heldout[:1000], method="dopri5", rtol=1e-5, atol=1e-5)
    seconds = time.perf_counter() - t0
    out = {"points": 1000, "rtol": 1e-5, "atol": 1e-5, "seconds": seconds, "nfe": ll.nfe,
           "mean_logp": float(ll.logp.mean()), "train_steps": a.steps}
    print(f"likelihood, 1,000 moons points, dopri5 rtol 1e-5: {seconds:.1f} s, NFE {ll.nfe}, "
          f"mean log p {out['mean_logp']:.3f}", flush=True)
    return out


TORCHCFM_PARTS = {"speed", "selu"}  # the parts that compare with TorchCFM
PARTS = {"speed": bench_speed, "selu": bench_selu, "adversarial": bench_adversarial,
         "assignment": bench_assignment, "anatomy": bench_anatomy,
         "likelihood": bench_likelihood}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--parts", default=",".join(PARTS))
    p.add_argument("--steps", type=int, default=2000, help="steps, independent coupling")
    p.add_argument("--ot-steps", type=int, default=600, help="steps, exact OT coupling")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--selu-steps", type=int, default=3000)
    p.add_argument("--selu-batch", type=int, default=256)
    p.add_argument("--selu-lr", type=float, default=3e-3)
    p.add_argument("--seeds", type=int, default=3, help="seeds of the SELU comparison")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3,
                   help="alternating rounds; the reported ratio is the median over rounds")
    a = p.parse_args(argv)
    parts = [s for s in a.parts.split(",") if s]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        sys.exit(f"bench_flows: parts {unknown} are unknown; choose from {', '.join(PARTS)}")
    if TORCHCFM_PARTS & set(parts):
        _torchcfm()
    torch.set_num_threads(a.threads)
    result = {"parts": parts}
    for name in parts:
        result[name] = PARTS[name](a)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench_flows.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
