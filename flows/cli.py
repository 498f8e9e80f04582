"""Command line: ``flows train | sample | eval | experiment``, a thin layer over :mod:`flows.run`.

Library errors become a one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from .checkpoint import atomic_write_json, load_model
from .coupling import COUPLINGS
from .data import source_for
from .errors import FlowsError, check_positive_int
from .evaluation import METRICS
from .field import REGIMES
from .path import PATHS
from .run import run_eval, run_samples_experiment, run_training, run_width_experiment, sample_field
from .sample import SOLVERS
from .training import TrainConfig


def _ints(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        msg = f"{text!r} is not a comma-separated list of integers"
        raise argparse.ArgumentTypeError(msg) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flows", description="Flow matching with two-layer ReLU "
                                "velocity fields: train, sample, evaluate, theory sweeps.")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: fastest for these small products)")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a field; writes model.pt, config.json, "
                       "metrics.json and figures into --out (resumes from its checkpoint)")
    t.add_argument("--data", required=True, help="dataset name or .npy/.csv file")
    t.add_argument("--out", required=True, type=Path)
    t.add_argument("--source", help="source dataset or file (default: N(0, I))")
    t.add_argument("--width", type=int)
    t.add_argument("--regime", choices=REGIMES)
    t.add_argument("--coupling", choices=COUPLINGS)
    t.add_argument("--path", choices=list(PATHS))
    t.add_argument("--steps", type=int)
    t.add_argument("--batch", type=int)
    t.add_argument("--lr", type=float)
    t.add_argument("--seed", type=int)
    t.add_argument("--sigma-min", type=float, dest="sigma_min")
    t.add_argument("--n-train", type=int, dest="n_train")
    t.add_argument("--k-draws", type=int, dest="k_draws")
    t.add_argument("--n-eval", type=int, dest="n_eval")
    t.add_argument("--fourier", type=int)
    t.add_argument("--checkpoint-every", type=int, dest="checkpoint_every")
    t.add_argument("--solver", choices=SOLVERS, default="midpoint")
    t.add_argument("--sample-steps", type=int, default=20, dest="sample_steps")
    t.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint")
    t.add_argument("--workers", type=int,
                   help="threads preparing coming batches (default: one per core for the "
                        "ot and sinkhorn couplings, 0 otherwise); results do not depend on it")

    s = sub.add_parser("sample", help="draw samples from a trained model into a .npy file")
    s.add_argument("--model", required=True, type=Path, help="training --out dir or model.pt")
    s.add_argument("--n", required=True, type=int)
    s.add_argument("--out", required=True, type=Path, help="FILE.npy")
    s.add_argument("--solver", choices=SOLVERS, default="midpoint")
    s.add_argument("--steps", type=int, default=20)
    s.add_argument("--seed", type=int, default=0)

    e = sub.add_parser("eval", help="distance between samples and a reference; prints JSON")
    e.add_argument("--samples", required=True, type=Path)
    ref = e.add_mutually_exclusive_group(required=True)
    ref.add_argument("--reference", type=Path, help=".npy/.csv reference samples")
    ref.add_argument("--data", help="dataset name (also gives the noise floor)")
    e.add_argument("--metric", choices=METRICS, default="w2")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--out", type=Path, help="also write config.json and metrics.json here")

    x = sub.add_parser("experiment", help="theory-regime sweeps with figures")
    x.add_argument("kind", choices=("width", "samples"))
    x.add_argument("--out", required=True, type=Path)
    x.add_argument("--data", default="moons")
    x.add_argument("--widths", type=_ints, default=[256, 1024, 4096, 16384])
    x.add_argument("--width", type=int, default=4096, help="width of the samples sweep")
    x.add_argument("--n", type=int, default=256, help="training points of the width sweep")
    x.add_argument("--ns", type=_ints, default=[32, 64, 128, 256, 512])
    x.add_argument("--k", type=int, default=4, help="(t, x0) draws per point")
    x.add_argument("--steps", type=int, default=500)
    x.add_argument("--lr", type=float)
    x.add_argument("--seed", type=int, default=0)
    return p


_TRAIN_KEYS = ("source", "width", "regime", "coupling", "path", "steps", "batch", "lr", "seed",
               "sigma_min", "n_train", "k_draws", "n_eval", "fourier", "checkpoint_every")


def _train(a: argparse.Namespace) -> dict:
    given = {k: getattr(a, k) for k in _TRAIN_KEYS if getattr(a, k) is not None}
    cfg = TrainConfig.from_dict({"data": a.data, **given})
    return run_training(cfg, a.out, fresh=a.fresh, solver=a.solver, sample_steps=a.sample_steps,
                        workers=a.workers)


def _sample(a: argparse.Namespace) -> dict:
    check_positive_int("n", a.n)
    if a.out.suffix != ".npy":
        raise FlowsError(f"out={str(a.out)!r} is not allowed; it must end in .npy")
    field, cfg = load_model(a.model)
    source = source_for(cfg.get("source"), field.spec.dim)
    res = sample_field(field, source, a.n, a.seed, a.solver, a.steps)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(a.out, res.x.numpy())
    info = {"out": str(a.out), "n": a.n, "dim": field.spec.dim, "solver": a.solver,
            "steps": a.steps, "seed": a.seed, "nfe": res.nfe, "model": str(a.model)}
    atomic_write_json(info, a.out.with_suffix(".json"))
    return info


def _experiment(a: argparse.Namespace) -> dict:
    if a.kind == "width":
        return run_width_experiment(a.out, a.widths, a.data, a.n, a.k, a.steps, a.lr, a.seed)
    return run_samples_experiment(a.out, a.ns, a.data, a.width, a.k, a.steps, a.lr, a.seed)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flows`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    try:
        if args.command == "train":
            result = _train(args)
        elif args.command == "sample":
            result = _sample(args)
        elif args.command == "eval":
            result = run_eval(args.samples, args.reference, args.data, args.metric, args.seed,
                              args.out)
        else:
            result = _experiment(args)
    except (FlowsError, ValueError, OSError, RuntimeError) as err:
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"flows {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        hint = ("every completed step is in the checkpoint; rerun the same command to resume"
                if args.command == "train" else "its outputs may be incomplete")
        print(f"flows {args.command}: interrupted; {hint}", file=sys.stderr)
        return 130
    print(json.dumps({k: v for k, v in result.items() if k != "figures"}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
