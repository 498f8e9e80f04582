"""Wall and CPU time of the demos' page against ``python -c "import torch"`` in the same run.

The promise: ``python demos/run_all.py --quick`` within 3 minutes on two idle cores, at most 100
times ``import torch``; ``make demo`` (the default sizes) within 15 minutes. On a shared
machine the wall time depends on the load, so this reports, side by side, for the baseline
(``import torch``, the median of ``--repeat`` runs) and for the demos: the wall time, the CPU
time (the process and every child it waited for), the load average before and after, the
ratio of both times to the baseline's, and the estimate for an idle machine of ``--jobs``
cores: the CPU time of each demo (from its ``run_all.json``) scheduled as run_all schedules it
(its order; the demos that load the shared models after the first), plus the workers'
start-up.

    python bench/bench_demo_time.py [--size quick|demo] [--out DIR] [--repeat 5] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str]) -> dict:
    """Run ``cmd`` (from the repository root); its wall and CPU seconds and the load."""
    load, cpu, start = os.getloadavg()[0], _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return {"wall_s": time.perf_counter() - start, "cpu_s": _children_cpu() - cpu,
            "load_before": load, "load_after": os.getloadavg()[0]}


def idle_estimate(order: list[str], demo_cpu: dict[str, float], cores: int,
                  start_up: float, shared: list[str]) -> float:
    """Wall seconds on ``cores`` idle cores: run_all's schedule (``order``, the demos of
    ``shared``, those loading the shared models, only once restoration has ended; a free core
    takes the first ready one) with each demo lasting its CPU time, plus the start-up."""
    first = "restoration" if "restoration" in order else None
    pending, lanes, ends = list(order), [start_up] * cores, {}
    while pending:
        core = lanes.index(min(lanes))
        now = lanes[core]
        ready = [n for n in pending if n not in shared or first is None
                 or ends.get(first, float("inf")) <= now]
        if not ready:  # wait for the first demo
            lanes[core] = ends.get(first, max(lanes))
            continue
        name = ready[0]
        pending.remove(name)
        lanes[core] = ends[name] = now + demo_cpu.get(name, 0.0)
    return max(lanes)


def main(argv: list[str] | None = None) -> dict:
    """Measure; print and return the report (also ``OUT/demo_time.json``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("quick", "demo"), default="quick")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for the demos' page and the report (default: a temporary one)")
    p.add_argument("--repeat", type=int, default=5, help="runs of the import torch baseline")
    p.add_argument("--jobs", type=int, default=2, help="cores of the idle estimate and of run_all")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="demo-time-"))
    base = [timed([sys.executable, "-c", "import torch"]) for _ in range(args.repeat)]
    baseline = {k: statistics.median(b[k] for b in base) for k in ("wall_s", "cpu_s")}
    cmd = [sys.executable, "demos/run_all.py", "--out", str(out / "page"), "--jobs",
           str(args.jobs)] + (["--quick"] if args.size == "quick" else [])
    demos = timed(cmd)
    summary = json.loads((out / "page" / "run_all.json").read_text())
    per_demo = {k: v["cpu_seconds"] for k, v in summary["demos"].items()}
    start_up = max(0.0, demos["cpu_s"] - sum(per_demo.values())) / args.jobs
    idle = idle_estimate(summary["chosen"], per_demo, args.jobs, start_up,
                         summary["shared_models"])
    report = {"size": args.size, "import_torch": baseline, "demos": demos,
              "wall_ratio": demos["wall_s"] / baseline["wall_s"],
              "cpu_ratio": demos["cpu_s"] / baseline["cpu_s"],
              "demo_cpu_s": per_demo, "start_up_s": start_up, "idle_estimate_s": idle,
              "idle_estimate_ratio": idle / baseline["wall_s"]}
    (out / "demo_time.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"import torch: {baseline['wall_s']:.2f} s wall, {baseline['cpu_s']:.2f} s CPU "
          f"(median of {args.repeat})")
    print(f"run_all ({args.size}): {demos['wall_s']:.0f} s wall ({report['wall_ratio']:.0f}x), "
          f"{demos['cpu_s']:.0f} s CPU ({report['cpu_ratio']:.0f}x); load "
          f"{demos['load_before']:.1f} -> {demos['load_after']:.1f}")
    print(f"on {args.jobs} idle cores: about {idle:.0f} s ({report['idle_estimate_ratio']:.0f}x "
          f"import torch's wall time); {out / 'demo_time.json'}")
    return report


if __name__ == "__main__":
    main()
