"""Run every benchmark in turn (one at a time: timings on a shared machine are ratios).

    python bench/run_benches.py --out results/bench [--quick]

The flows benchmark's comparisons with TorchCFM (parts ``speed`` and ``selu``) need the optional
``bench`` extra; without it they are reported as skipped with the reason and its other parts run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import bench_gridcells
import bench_neurodyn


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmarks; returns their results keyed by name."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results/bench"))
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    quick = ["--quick"] if args.quick else []
    out = {"neurodyn": bench_neurodyn.main(["--out", str(args.out / "neurodyn"), *quick]),
           "gridcells": bench_gridcells.main(["--out", str(args.out / "gridcells"), *quick])}
    import bench_flows

    extra = ["--steps", "200", "--ot-steps", "50"] if args.quick else []
    parts = list(bench_flows.PARTS)
    if importlib.util.find_spec("torchcfm") is None:  # the parts against TorchCFM need it
        parts = [name for name in parts if name not in bench_flows.TORCHCFM_PARTS]
    out["flows"] = bench_flows.main(["--out", str(args.out / "flows"), "--parts",
                                     ",".join(parts), *extra])
    if len(parts) < len(bench_flows.PARTS):
        out["flows"]["skipped"] = {name: "torchcfm is not installed (pip install -e '.[bench]')"
                                   for name in sorted(bench_flows.TORCHCFM_PARTS)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(out, indent=2, default=str) + "\n")
    return out


if __name__ == "__main__":
    main()
