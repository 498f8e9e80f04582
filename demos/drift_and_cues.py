"""Drift of the head-direction ring under noise, against theory; landmark anchoring; cue conflict.

1. Ring diffusion: for N in {64, 128, 256} and noise sigma in {0.02, 0.05, 0.1} (and 0.2, where
   the small-noise theory starts to miss), D from the increments of the decoded phase at lags
   1-8 tau with a 95% bootstrap interval over 128 runs of 400 tau, against the one-neuron-noise
   theory; with nine cells, nine 95% intervals all contain even an exact theory only 63% of the
   time, so each cell also carries a family-wise interval (level 1 - 0.05 / cells, Bonferroni)
   and the check that all contain the theory is made on those. The integration horizon (mean
   time for the drift to reach 0.05 rad) against ``epsilon^2 / (2 D)`` from the same runs.
2. Anchoring: 2,000 tau of heading integration (OU angular velocity) with noise sigma = 0.3, with
   and without a landmark of strength A = 0.05 (1.25% of the bump height) reporting the true
   heading; the same velocity and noise in both runs.
3. Cue conflict: the landmark rotated by 90 degrees; the fraction followed within 50 tau against
   the cue strength, with the phase-equation prediction.

Usage: python demos/drift_and_cues.py [--out DIR] [--quick | --full] [--models DIR]

The default sizes (``make demo``) check the diffusion on rings of 64 and 128 neurons; ``--full``
adds the ring of 256 (bench/README.md's numbers), which costs more than the other two together.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
from _models import cache_dir, demo_parser, fitted, size, written

from _runkit.files import atomic_save_figure
from _runkit.timing import Stopwatch
from neurodyn.analysis.bump_motion import from_manifold
from neurodyn.analysis.drift import (
    diffusion_estimate,
    diffusion_tensor_theory,
    integration_horizon,
    unwrap_track,
)
from neurodyn.fitting.core import FitConfig
from neurodyn.io import write_json
from neurodyn.plotting.spatial import plot_anchoring, plot_conflict, plot_diffusion_ratios
from neurodyn.spatial.anchoring import cue_conflict, landmark_anchoring

HERE = Path(__file__).resolve().parent

LAGS = (1.0, 2.0, 4.0, 8.0)


def ring_diffusion(net, n: int, noise: float, runs: int, duration: float, seed: int,
                   family_level: float) -> dict:
    """One (N, noise) cell of the diffusion check, with 95% and ``family_level`` intervals."""
    tr = from_manifold(net, runs, duration, 0.05, seed, noise=noise, diagnostics=False)
    est = diffusion_estimate(tr.decoded, tr.t, lags=LAGS, seed=seed)
    fam = diffusion_estimate(tr.decoded, tr.t, lags=LAGS, seed=seed, level=family_level)
    theory = float(diffusion_tensor_theory(net, noise)[0, 0])
    drift = unwrap_track(tr.decoded.numpy())
    drift = drift - drift[:1]
    eps = 0.05
    hz = integration_horizon(drift, tr.t.numpy(), eps, d_trace=theory, seed=seed)
    return {"n": n, "noise": noise, "D": est.D, "D_low": est.low, "D_high": est.high,
            "D_theory": theory, "ratio": est.D / theory, "ratio_low": est.low / theory,
            "ratio_high": est.high / theory, "contains_theory": est.contains(theory),
            "family_level": family_level, "ratio_family_low": fam.low / theory,
            "ratio_family_high": fam.high / theory,
            "family_contains_theory": fam.contains(theory),
            "within_10pct": abs(est.D / theory - 1) <= 0.1, "runs": runs,
            "duration_tau": duration, "lags_tau": list(est.lags),
            "horizon_threshold_rad": eps, "horizon_mean_tau": hz.mean_time,
            "horizon_low_tau": hz.low, "horizon_high_tau": hz.high,
            "horizon_theory_tau": hz.theory_time,
            "horizon_theory_sampled_tau": hz.theory_time_sampled, "horizon_crossed": hz.crossed}


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics."""
    p = demo_parser(__doc__, "drift_and_cues")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = cache_dir(args.cache, out)
    q = args.quick
    sizes = {"quick": (64,), "demo": (64, 128), "full": (64, 128, 256)}[size(args)]
    noises = (0.05,) if q else (0.02, 0.05, 0.1, 0.2)
    runs, duration = (16, 80.0) if q else (128, 400.0)
    steps = 60 if q else None
    rows, nets = [], {}
    family_level = 1 - 0.05 / (len(sizes) * sum(s <= 0.1 for s in noises))
    for n in sizes:
        cfg = FitConfig(geometry="ring", n=n, seed=0, **({"steps": steps} if steps else {}))
        nets[n], _ = fitted(cfg, cache)
        for i, noise in enumerate(noises):
            rows.append(ring_diffusion(nets[n], n, noise, runs, duration,
                                       args.seed + 100 * n + i, family_level))
    acc = [r for r in rows if r["noise"] <= 0.1]
    metrics: dict = {"diffusion": rows,
                     "diffusion_all_within_10pct": all(r["within_10pct"] for r in acc),
                     "diffusion_all_contain_theory": all(r["contains_theory"] for r in acc),
                     "diffusion_family_level": family_level,
                     "diffusion_all_family_contain_theory": all(r["family_contains_theory"]
                                                                for r in acc),
                     "diffusion_ratio_range": [min(r["ratio"] for r in acc),
                                               max(r["ratio"] for r in acc)]}
    fig = plot_diffusion_ratios(rows)
    atomic_save_figure(fig, out / "diffusion_vs_theory.png", dpi=110)

    ring = nets[64 if q else 128]
    anch = landmark_anchoring(ring, noise=0.3, strength=0.05,
                              duration=100.0 if q else 2000.0, runs=8 if q else 32,
                              velocity="ou:0.05:10:0.2", seed=args.seed)
    metrics["anchoring"] = anch.metrics
    atomic_save_figure(plot_anchoring(anch), out / "anchoring.png", dpi=110)

    conf = cue_conflict(ring, strengths=(0.01, 0.1, 1.0) if q else
                        (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
                        rotation=math.pi / 2, window=10.0 if q else 50.0,
                        runs=4 if q else 16, noise=0.05, seed=args.seed)
    metrics["conflict"] = conf.to_dict()
    atomic_save_figure(plot_conflict(conf), out / "cue_conflict.png", dpi=110)
    metrics["seconds"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    print(written(out))
    _section(out, metrics, argv)
    return metrics


def _section(out: Path, m: dict, argv) -> None:
    from page import Section, write_section

    a = m["anchoring"]
    lo, hi = m["diffusion_ratio_range"]
    write_section(out, Section(
        title="Head direction: drift under noise, landmark anchoring, cue conflict",
        description=("Ring diffusion D from lagged increments with 95% and family-wise "
                     "bootstrap intervals "
                     "against the one-neuron-noise theory (sigma <= 0.1; sigma = 0.2 shown as "
                     "where the small-noise theory starts to miss); heading error with and "
                     "without a landmark (same velocity and noise); the fraction of a 90-degree "
                     "cue rotation followed, against strength, with the phase equation."),
        figures=["diffusion_vs_theory.png", "anchoring.png", "cue_conflict.png"],
        metrics={"D / theory range (sigma <= 0.1)": f"{lo:.3f} - {hi:.3f}",
                 "all within 10%": m["diffusion_all_within_10pct"],
                 "all 95% intervals contain theory": m["diffusion_all_contain_theory"],
                 "all family-wise intervals contain theory (level "
                 f"{m['diffusion_family_level']:.4f})": m["diffusion_all_family_contain_theory"],
                 "anchored RMS error, late mean (rad)": a["rms_cue_late_mean"],
                 "anchored bound sqrt(D/k) (rad)": a["bound"],
                 "anchored max RMS over the run (rad)": a["rms_cue_max"],
                 "no cue: final RMS / sqrt(2 D t)": a["free_ratio"],
                 "seconds": round(m["seconds"], 1)},
        command="python demos/drift_and_cues.py " + " ".join(argv if argv is not None
                                                             else sys.argv[1:])))


if __name__ == "__main__":
    main()
