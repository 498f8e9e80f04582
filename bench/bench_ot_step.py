"""The exact-OT training step through ``flows train``, at this checkout and at a baseline commit
side by side, and TorchCFM's exact-OT step measured the same way.

A step is measured as the difference of two runs that differ only in their step count,
(wall of ``--long`` steps - wall of ``--short`` steps) / (long - short), so that start-up,
data, compilation, evaluation and figures cancel. Each run is a fresh process:

- flows: ``flows train --data moons --coupling {ot,independent} --width 256 --batch 512`` at
  this checkout and at each ``--baseline`` commit (``git archive`` of it into a temporary
  folder, run with ``PYTHONPATH`` pointing there). The wall is the run's
  ``train_wall_time_s`` (timing.json: the training loop alone); the process's CPU time (all
  threads, from the child's resource usage) is reported beside it: the work of a step,
  whatever else the machine runs (a difference of two runs, so evaluation cancels only on
  average).
- TorchCFM: its training loop (``bench_flows.run_torchcfm``: ``ConditionalFlowMatcher`` or
  ``ExactOptimalTransportConditionalFlowMatcher``, autograd, ``torch.optim.Adam``, one torch
  thread) on the same field (flows' ``TwoLayerReLUField`` with the run's initial weights), in a
  process of its own, timed around the loop.

Every round runs all sides in turn (the machine may be shared), and each ratio is the median of
the per-round ratios. Printed: OT step / independent step at each commit, this checkout's step
over each baseline's per coupling, and TorchCFM's OT step over flows' OT step, of walls and of
CPU times. On two cores an OT step can overlap its coupling with training (batch threads), so
its wall ratio can fall to about half its CPU ratio on an idle machine, not on a busy one. Writes
``bench_ot_step.json`` into ``--out``.

    python bench/bench_ot_step.py --out results/bench [--baseline 913b2d5,main] [--rounds 3]

TorchCFM is an optional dependency (the ``bench`` extra); ``--no-torchcfm`` leaves it out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from _runkit.timing import Stopwatch

ROOT = Path(__file__).resolve().parents[1]
CASE = ["--data", "moons", "--width", "256", "--batch", "512", "--seed", "0"]
COUPLINGS = ("ot", "independent")


def export_commit(commit: str, dest: Path) -> Path:
    """The files of ``commit`` of this repository, unpacked under ``dest`` (no work tree is
    registered); returns the folder."""
    folder = dest / commit
    folder.mkdir(parents=True)
    archive = dest / f"{commit}.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()
    return folder


def _child(args: list[str], cwd: Path, tree: Path) -> tuple[float, float, str]:
    """Run a child process; (its wall, its CPU time (user + system, all threads), stdout)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = Stopwatch()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True)
    wall = t0.wall_s
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout


def flows_run(tree: Path, coupling: str, steps: int, scratch: Path) -> tuple[float, float]:
    """(training-loop wall, process CPU time) of one ``flows train`` run at ``tree``, in
    seconds."""
    out = Path(tempfile.mkdtemp(dir=scratch)) / "run"
    _, cpu, _ = _child(["-m", "flows.cli", "train", *CASE, "--coupling", coupling, "--steps",
                        str(steps), "--out", str(out)], tree, tree)
    timing = out / "timing.json"
    record = json.loads((timing if timing.exists() else out / "metrics.json").read_text())
    return float(record["train_wall_time_s"]), cpu


def torchcfm_loop(coupling: str, steps: int) -> float:
    """Seconds of TorchCFM's training loop on the two-layer field (run in a child process)."""
    import torch
    from bench_flows import _TimeColumn, run_torchcfm

    from flows.training.loop import TrainConfig, build_model, prepare_data

    torch.set_num_threads(1)
    cfg = TrainConfig(data="moons", coupling=coupling, steps=steps, width=256, batch=512)
    splits, _ = prepare_data(cfg)
    field = build_model(cfg, 2)  # flows' field and initial weights, trained by autograd
    _, seconds = run_torchcfm(cfg.resolved(), splits.train, _TimeColumn(field), coupling == "ot")
    return seconds


def torchcfm_run(coupling: str, steps: int, scratch: Path) -> tuple[float, float]:
    """(training-loop wall, process CPU time) of TorchCFM's loop in a fresh process."""
    _, cpu, stdout = _child([__file__, "--torchcfm-loop", coupling, str(steps)], ROOT, ROOT)
    return float(stdout.strip().splitlines()[-1]), cpu


def step_ms(run, short: int, long: int) -> tuple[float, float]:
    """Milliseconds a step of ``run(steps)``: (loop wall, process CPU), from a short and a
    long run."""
    a, b = run(short), run(long)
    return tuple(1e3 * (y - x) / (long - short) for x, y in zip(a, b, strict=True))


def measure(a: argparse.Namespace, trees: dict[str, Path], scratch: Path) -> list[dict]:
    """Rounds of every side in turn: {side: (loop wall ms, process CPU ms)} per round."""
    sides = {f"{name} {c}": (lambda s, t=tree, c=c: flows_run(t, c, s, scratch))
             for name, tree in trees.items() for c in COUPLINGS}
    if not a.no_torchcfm:
        sides |= {f"torchcfm {c}": (lambda s, c=c: torchcfm_run(c, s, scratch))
                  for c in COUPLINGS}
    for run in sides.values():  # compile the kernels into each tree's cache, untimed
        run(a.short)
    rounds = []
    for r in range(a.rounds):
        one = {name: step_ms(run, a.short, a.long) for name, run in sides.items()}
        rounds.append(one)
        print(f"round {r}: " + " | ".join(f"{k} {v[0]:.2f} ms ({v[1]:.2f} CPU)"
                                          for k, v in one.items()), flush=True)
    return rounds


def ratios(rounds: list[dict], names: list[str], torchcfm: bool) -> dict:
    """Medians over rounds of each per-round ratio: of loop walls, and of CPU times (the work
    a step takes, whatever else the machine runs)."""
    def med(num: str, den: str, k: int = 0) -> float:
        return statistics.median(r[num][k] / r[den][k] for r in rounds)

    out = {f"{n}: OT step / independent step": med(f"{n} ot", f"{n} independent")
           for n in names}
    out |= {f"{n}: OT step / independent step, CPU time":
            med(f"{n} ot", f"{n} independent", 1) for n in names}
    current = names[0]
    out |= {f"{c} step: {current} / {baseline}": med(f"{current} {c}", f"{baseline} {c}")
            for baseline in names[1:] for c in COUPLINGS}
    if torchcfm:
        out |= {f"TorchCFM OT step / {n} OT step": med("torchcfm ot", f"{n} ot") for n in names}
        out |= {f"TorchCFM OT step / {n} OT step, CPU time": med("torchcfm ot", f"{n} ot", 1)
                for n in names}
        out["TorchCFM OT step / TorchCFM independent step"] = med("torchcfm ot",
                                                                  "torchcfm independent")
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--baseline", default="913b2d5",
                   help="commits to compare with, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--short", type=int, default=20)
    p.add_argument("--long", type=int, default=420)
    p.add_argument("--no-torchcfm", action="store_true", help="leave TorchCFM out")
    p.add_argument("--torchcfm-loop", nargs=2, metavar=("COUPLING", "STEPS"),
                   help=argparse.SUPPRESS)  # the child process of a TorchCFM run
    a = p.parse_args(argv)
    if a.torchcfm_loop:
        print(torchcfm_loop(a.torchcfm_loop[0], int(a.torchcfm_loop[1])))
        return {}
    if a.out is None:
        p.error("--out is required")
    if not a.no_torchcfm:
        try:
            import torchcfm  # noqa: F401
        except ImportError:
            sys.exit("bench_ot_step: TorchCFM is not installed; install the 'bench' extra or "
                     "pass --no-torchcfm")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        trees = {"this checkout": ROOT} | {c: export_commit(c, scratch)
                                           for c in a.baseline.split(",") if c}
        rounds = measure(a, trees, scratch)
    result = {"head": head, "baseline": a.baseline, "short": a.short, "long": a.long,
              "case": " ".join(CASE), "rounds": rounds,
              "ratios": ratios(rounds, list(trees), not a.no_torchcfm)}
    for k, v in result["ratios"].items():
        print(f"{k}: {v:.2f}", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench_ot_step.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
