"""The attractor verdict on populations generated apart from the library, seed by seed.

The generators are tests/independent_populations.py (numpy only, Poisson counts, the real
Tanni trajectory of RatInABox's wheel; 30 min in 10 ms bins): 60 head-direction cells with
clustered preferred angles and heterogeneous widths and rates -- a ring attractor (the bump at
the heading plus a drift pulled back to it, coherent amplitude and width fluctuations), a
feed-forward population with a shared gain, one with independent noise per cell, the
attractor's cells shifted in time -- and 80 grid cells of one module (2-7 Hz), place cells and
band cells. Each case is fitted by :func:`neurodyn.inference.fit_activity` and its verdict
compared with what the case is:

    case                      expected
    attractor (heading)       attractor true
    attractor-no-heading      attractor true
    gain / independent        attractor false, the failed test named
    shifted                   attractor false (not tuned)
    grid                      Betti (1, 2, 1), attractor true
    place / band              attractor false
    attractor-nan (30% bins)  the same verdict as without NaN; every fraction <= 1

    python bench/bench_verdict.py --seeds 10 --jsonl results/bench/verdict.jsonl
    python bench/bench_verdict.py --summarize results/bench/verdict.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: case -> (generator kind, geometry, covariate, NaN fraction, expected verdict)
CASES = {
    "attractor": ("attractor", "ring", True, 0.0, True),
    "attractor-no-heading": ("attractor", "ring", False, 0.0, True),
    "gain": ("gain", "ring", True, 0.0, False),
    "independent": ("independent", "ring", True, 0.0, False),
    "shifted": ("shifted", "ring", True, 0.0, False),
    "grid": ("grid", "torus", True, 0.0, True),
    "place": ("place", "torus", True, 0.0, False),
    "band": ("band", "torus", True, 0.0, False),
    "attractor-nan": ("attractor", "ring", True, 0.3, "same"),
}


def _generators():
    spec = importlib.util.spec_from_file_location(
        "independent_populations", ROOT / "tests" / "independent_populations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _population(kind: str, seed: int):
    g = _generators()
    if kind in g.HD_KINDS:
        return g.hd_population(kind, seed)
    if kind == "grid":
        return g.grid_population(seed)
    return g.spatial_population(kind, seed)


def run_case(case: str, seed: int) -> dict:
    """Fit one case of one seed; the verdict and every test's status and statistic."""
    import torch

    from neurodyn.inference import fit_activity

    torch.set_num_threads(1)
    kind, geometry, covariate, nan, expected = CASES[case]
    p = _population(kind, seed)
    counts = p.counts.astype(float)
    if nan:
        counts[np.random.default_rng(seed + 77).random(counts.shape[0]) < nan] = np.nan
    cov = (p.heading if geometry == "ring" else p.position) if covariate else None
    start = time.process_time()
    fit = fit_activity(counts, p.dt, geometry, cov, seed=seed)
    return {"case": case, "seed": seed, "expected": expected, "attractor": fit.attractor,
            "tuned": fit.tuned, "betti": list(fit.betti), "failed": fit.failed,
            "reason": fit.verdict.reason, "fraction_in_modes": fit.rates.fraction,
            "tests": {k: [t.status, t.statistic] for k, t in fit.tests.items()},
            "cpu_s": time.process_time() - start}


def _run(job):
    try:
        return run_case(*job)
    except Exception as err:  # a case that breaks is a row that says so
        return {"case": job[0], "seed": job[1], "error": f"{type(err).__name__}: {err}"}


def _ok(row, rows) -> bool:
    exp = row["expected"]
    if exp == "same":
        twin = [r for r in rows if r["case"] == "attractor" and r["seed"] == row["seed"]]
        return bool(twin) and twin[0]["attractor"] == row["attractor"] and \
            0 <= row["fraction_in_modes"] <= 1
    ok = row["attractor"] is exp
    if row["case"] == "grid":
        ok = ok and row["betti"] == [1, 2, 1]
    if exp is False and row["case"] != "shifted":
        ok = ok and bool(row["failed"])
    return ok


def summarize(rows: list) -> dict:
    """Per case: seeds run, seeds whose verdict is the expected one, and the verdicts."""
    out = {}
    for case in CASES:
        mine = [r for r in rows if r.get("case") == case and "error" not in r]
        errors = [r for r in rows if r.get("case") == case and "error" in r]
        out[case] = {"seeds": len(mine), "right": sum(_ok(r, rows) for r in mine),
                     "verdicts": [str(r["attractor"]) for r in mine],
                     "errors": [r["error"] for r in errors]}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--jsonl", type=Path, default=Path("results/bench/verdict.jsonl"))
    p.add_argument("--summarize", type=Path, default=None, help="only summarize this file")
    args = p.parse_args(argv)
    if args.summarize:
        rows = [json.loads(line) for line in args.summarize.read_text().splitlines() if line]
        print(json.dumps(summarize(rows), indent=1))
        return summarize(rows)
    cases = args.cases.split(",")
    unknown = set(cases) - set(CASES)
    if unknown:
        raise SystemExit(f"--cases: unknown {sorted(unknown)}; choose from {list(CASES)}")
    jobs = [(c, s) for s in range(args.first_seed, args.first_seed + args.seeds) for c in cases]
    args.jsonl.parent.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with get_context("spawn").Pool(args.workers, maxtasksperchild=1) as pool, \
            args.jsonl.open("a") as f:
        for row in pool.imap_unordered(_run, jobs):
            f.write(json.dumps(row, default=str) + "\n")
            f.flush()
            print(json.dumps({k: row.get(k) for k in ("case", "seed", "attractor", "betti",
                                                     "failed", "cpu_s", "error")},
                             default=str), flush=True)
    rows = [json.loads(line) for line in args.jsonl.read_text().splitlines() if line]
    print(json.dumps(summarize(rows), indent=1))


if __name__ == "__main__":
    main()
