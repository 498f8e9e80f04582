"""Run the main demos on their defaults and build the offline results page.

    python demos/run_all.py --out results [--quick] [--jobs 2] [--only NAME,...]

Each demo runs as its own process writing into ``OUT/<name>/``; two run at a time on a
two-core machine (one torch thread each). The fitted attractor models are shared through
``OUT/models``. Afterwards every demo folder gets a ``section.json`` (unless the demo wrote
its own) and ``OUT/index.html`` lists every figure with its key numbers and the command that
reproduces it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from report import (  # noqa: E402
    Section,
    build_report,
    collect_sections,
    notebook_sections,
    write_section,
)

# name, script, title, description, {label: dotted metric path}
DEMOS = [
    ("restoration", "attractor_restoration.py", "SEAL: restoration to the ring and the torus",
     "Perturbed states (noise, shape, amplitude, 20% lesion) at relative distances 0.1-0.5 "
     "relax back to the manifold within 20 tau; the energy never increases.",
     {"ring: worst fraction within 0.01": "ring.worst_fraction_within",
      "ring: energy non-increasing": "ring.energy_ok",
      "ring: neutral eigenvalues": "ring.jacobian.n_zero",
      "ring: slowest decay (1/tau)": "ring.jacobian.slowest_nonzero",
      "torus: worst fraction within 0.01": "torus.worst_fraction_within",
      "torus: energy non-increasing": "torus.energy_ok",
      "torus: neutral eigenvalues": "torus.jacobian.n_zero",
      "torus: slowest decay (1/tau)": "torus.jacobian.slowest_nonzero"}),
    ("moving_bump", "moving_bump.py", "SEAL: velocity-driven moving bumps",
     "Velocity input moves the ring's bump along the manifold; decoded phase against the "
     "integrated input, per input regime (RMS wrapped error at the end, rad).",
     {"constant": "constant.rms_final", "sine": "sine.rms_final", "steps": "steps.rms_final",
      "Ornstein-Uhlenbeck (|v| <= 0.5)": "ou.rms_final", "user series": "user series.rms_final"}),
    ("speed_gain", "speed_gain.py", "Speed physics: speed gain and maximum tracked speed",
     "The asymmetric velocity coupling (one smooth odd kernel, calibrated at small speed) moves "
     "the bump at the commanded speed when slow and lags and deforms when fast; v_max (gain "
     "within 5% of 1) per kappa, beside the exact transport that tracks every speed.",
     {"kappa": "kappas", "v_max (rad/tau)": "v_max", "v_max / kappa": "v_max_per_kappa"}),
    ("seal_capacity", "seal_capacity.py", "SEAL capacity: any bump shape, error vs parameters",
     "The learned-template family fitted to von Mises (K = 5), flat-top (W = 0.6) and "
     "asymmetric (S = 0.5) bumps on the ring at kappa = 2 with 2 to 8 harmonics: worst "
     "restoring-field error falls with capacity; zeroing the learned template and the per-mode "
     "SEAL family are the controls.",
     {"von Mises: field-error fall per step": "summary.von_mises_fall_per_step",
      "flat-top: fall per step": "summary.flat_top_fall_per_step",
      "asymmetric: fall per step": "summary.asymmetric_fall_per_step",
      "template zeroed / fitted (smallest ratio)": "summary.ablation_min_ratio",
      "per-mode family, von Mises: spectrum error": "summary.control_von_mises_spectrum_error"}),
    ("energy_comparison", "energy_comparison.py",
     "Learned energy vs Fourier construction vs classic network",
     "The same restoration and path-integration tasks for three ring networks; the learned "
     "energy restores every normal direction at the prescribed rate 1/tau.",
     {"learned: slowest decay": "learned (SEAL).slowest_decay",
      "Fourier: slowest decay": "Fourier construction.slowest_decay",
      "classic: slowest decay": "classic hand-wired.slowest_decay",
      "learned: max final distance": "learned (SEAL).final_distance_max",
      "Fourier: max final distance": "Fourier construction.final_distance_max",
      "classic: max final distance": "classic hand-wired.final_distance_max"}),
    ("seal_learning", "seal_learning.py", "SEAL learning: prescribed normal attraction",
     "Kappa sweep (ring N=128, hex torus 32x32): normal eigenvalues and simulated decay of "
     "small white, smooth, odd and amplitude perturbations against the prescribed rate; the "
     "power spectrum alone (control) keeps its phase directions at the leak rate 1/tau. "
     "Capacity sweep and ablation (Fourier construction, classic CANN, spectral SEAL, full SEAL) "
     "at kappa = 2 on the same perturbations. Fitted MLP energies (ring N=64, kappa 0.5 and 2) "
     "with the MLP or the learned leak coefficient c0 removed. Hex torus restoring field with "
     "the spectral polynomials in |z_k| and, as the control, in |z_k|^2.",
     {"ring: worst normal eigenvalue error": "kappa_sweep.ring_summary.worst_spectrum_relative",
      "ring: worst simulated decay error": "kappa_sweep.ring_summary.worst_decay_relative",
      "ring: worst restoring-field error": "kappa_sweep.ring_summary.worst_field_error",
      "ring: worst energy-ratio error": "kappa_sweep.ring_summary.worst_energy_error",
      "ring: slowest fit (s)": "kappa_sweep.ring_summary.slowest_fit_seconds",
      "ring control (spectral only): largest normal eigenvalue":
          "kappa_sweep.ring_summary.spectral_only_max_eigenvalue",
      "torus: worst normal eigenvalue error": "kappa_sweep.torus_summary.worst_spectrum_relative",
      "torus: worst simulated decay error": "kappa_sweep.torus_summary.worst_decay_relative",
      "torus: worst restoring-field error": "kappa_sweep.torus_summary.worst_field_error",
      "torus: worst energy-ratio error": "kappa_sweep.torus_summary.worst_energy_error",
      "torus: slowest fit (s)": "kappa_sweep.torus_summary.slowest_fit_seconds",
      "torus kappa=2, bump-height perturbations: field error, |z_k|":
          "variable_control.amplitude.field_error.amplitude",
      "torus kappa=2, bump-height perturbations: field error, |z_k|^2 (control)":
          "variable_control.power.field_error.amplitude",
      "MLP: worst normal eigenvalue error": "mlp_summary.worst_spectrum_relative",
      "MLP: learned c0 (derivation: kappa - 1)": "mlp_summary.c0",
      "MLP without c0: worst normal eigenvalue error":
          "mlp_summary.without_c0_worst_spectrum_relative",
      "MLP without the MLP: worst normal eigenvalue error":
          "mlp_summary.without_mlp_worst_spectrum_relative",
      "ablation: Fourier construction slowest rate": "ablation.Fourier construction.slowest_rate",
      "ablation: classic CANN slowest rate": "ablation.classic CANN (cosine W).slowest_rate",
      "ablation: spectral SEAL slowest rate": "ablation.spectral SEAL.slowest_rate",
      "ablation: full SEAL slowest rate": "ablation.full SEAL.slowest_rate"}),
    ("connectivity", "connectivity.py", "SEAL: local excitation, surround inhibition",
     "The best fixed circulant W reproducing the recurrent input (least squares, with its "
     "errors), beside the state-dependent effective connectivity -Hess F (rank, spectrum).",
     {"ring w(0)": "ring.w0", "ring min w beyond pi/3": "ring.min_beyond_pi_over_3",
      "ring zero crossings (rad)": "ring.zero_crossings",
      "ring fixed-W field error": "ring.fixed_field_error",
      "ring rank of W_eff": "ring.effective.rank", "torus w(0)": "torus.w0",
      "torus min w beyond pi/3": "torus.min_beyond_pi_over_3",
      "torus fixed-W field error": "torus.fixed_field_error",
      "torus rank of W_eff": "torus.effective.rank"}),
    ("manifold", "manifold.py", "Manifolds of population activity",
     "PCA and Isomap embeddings, persistent homology (Betti numbers), the energy along and "
     "across the manifold, and the bump's path during path integration.",
     {"ring Betti numbers": "ring.betti", "torus Betti numbers": "torus.betti",
      "ring matches (1, 1, 0)": "ring.betti_ok", "torus matches (1, 2, 1)": "torus.betti_ok"}),
    ("grid_cells", "grid_cells.py", "Grid cells", "", {}),
    ("drift_and_cues", "drift_and_cues.py", "Head direction: drift, anchoring, cue conflict",
     "", {}),
    ("grid_modules", "grid_modules.py", "Grid modules under noise", "", {}),
    ("heterogeneity", "heterogeneity.py", "Heterogeneous rings: disorder pins the bump", "", {}),
    ("fit_activity", "fit_activity.py", "SEAL from recorded activity", "", {}),
    ("generate_activity", "generate_activity.py",
     "Generated population activity that keeps its attractor",
     "Noisy states of a fitted ring and hex torus; (a) ambient flow matching, (b) Riemannian "
     "flow matching on the decoded coordinate mapped through the manifold with a learned normal "
     "variability, (c) ambient samples relaxed by the network; 10 field evaluations each. "
     "Normal distance over the data's own, Betti numbers, intrinsic W2 over its i.i.d. floor; "
     "a flow trained on shuffled states is the control; *_barcodes.png shows each set's "
     "persistence barcode. The tables (*_methods.png) give the "
     "three at equal evaluations and at equal CPU time ((a), (b) retrained to the time of (c)).",
     {"ring (b): Betti": "ring.methods.riemannian.betti",
      "ring (b): distance / floor": "ring.methods.riemannian.distance_ratio",
      "ring (b): W2 / floor": "ring.methods.riemannian.w2_ratio",
      "ring (c): Betti": "ring.methods.relaxed.betti",
      "ring (c): distance / floor": "ring.methods.relaxed.distance_ratio",
      "ring (c): W2 / floor": "ring.methods.relaxed.w2_ratio",
      "ring (a): distance / floor": "ring.methods.ambient.distance_ratio",
      "ring control (shuffled): Betti": "ring.control_betti",
      "ring (a) at the CPU time of (c): W2 / floor": "ring.equal_time.ambient.metrics.w2_ratio",
      "ring (b) at the CPU time of (c): W2 / floor":
          "ring.equal_time.riemannian.metrics.w2_ratio",
      "torus (b): Betti": "torus.methods.riemannian.betti",
      "torus (b): W2 / floor": "torus.methods.riemannian.w2_ratio",
      "torus (c): Betti": "torus.methods.relaxed.betti",
      "torus (c): W2 / floor": "torus.methods.relaxed.w2_ratio",
      "torus control (shuffled): Betti": "torus.control_betti"}),
    ("flows_moons", "flows_moons.py", "Flow matching: N(0, I) to moons",
     "Two-layer ReLU velocity field, practice regime; W2 on held-out points beside the noise "
     "floor of two true samples of the same size.",
     {"W2 held-out": "w2", "W2 floor": "w2_floor", "training seconds": "train_wall_time_s",
      "normalized path energy": "normalized_path_energy",
      "memorized fraction (nearest < 1/3 second nearest)": "memorized_fraction",
      "memorized fraction of an i.i.d. sample (leave-one-out)": "memorized_fraction_iid_baseline",
      "memorized fraction, empirical optimum": "memorized_fraction_empirical_optimal"}),
    ("flows_theory", "flows_theory.py",
     "Flow matching theory: NTK curves, excess risk, W2 bound, memorization",
     "Theory regime (fixed +-1 output layer, full-batch GD) on moons. ntk_curves/ntk_gap: "
     "observed loss vs the infinite-width prediction (I - 2 lr H/N)^t on the same draws, gap "
     "vs width against K m^-1/2, flipped activations; the check passes when L_obs(T) / "
     "L_NTK(T) is within 10%. excess_vs_n: objective minus its "
     "population minimum (closed form of the moons mixture), test with 95% intervals over "
     "seeds, train, n^-1/2 reference. w2_bound_vs_n / _vs_width: Groenwall bound G "
     "sqrt(excess) (and with G along the trajectories) beside the measured W2, its i.i.d. "
     "floor and W2(source, data), above which a bound is vacuous. "
     "generalization_bound_vs_n: the computed bound on the excess gap beside L*. "
     "memorization_vs_n / _vs_time: "
     "fraction with nearest training point < 1/3 of the second, trained fields vs the exact "
     "empirical-optimal field, and along the reverse process.",
     {"NTK-curve gap per width": "ntk_gap", "gap tolerance K m^-1/2": "ntk_tolerance",
      "gap falls monotonically with m": "ntk_gap_monotone",
      "activations flipped per width": "kernel_flipped",
      "theorem's width (unit constants)": "required_width",
      "population minimum L*": "population_minimum.value",
      "excess test risk vs n": "excess_test", "95% half-widths": "excess_test_ci95",
      "adjacent intervals separate": "excess_intervals_separate",
      "n=first vs n=last intervals separate": "excess_endpoints_separate",
      "excess slope (bound rate -1/2)": "excess_slope",
      "W2 bound holds on every run": "w2_bound_holds_all",
      "bound / measured W2 (min)": "w2_bound_looseness_min",
      "bound / measured W2 (max)": "w2_bound_looseness_max",
      "NTK check L_obs(T)/L_NTK(T) within 10% per width": "ntk_passes",
      "W2 bound / W2(source, data) vs n": "w2_bound_vs_source",
      "same, G along trajectories": "w2_bound_trajectory_vs_source",
      "generalization bound / L* vs n": "gen_bound_ratio",
      "generalization bound >= excess gap on every run": "gen_bound_holds_all",
      "memorized fraction vs n (trained)": "memorization.memorized_trained",
      "memorized fraction vs n (empirical optimum)": "memorization.memorized_empirical_optimal"}),
    ("flows_digits", "flows_digits.py", "Flow matching: 8x8 digits",
     "Samples of a flow trained on scikit-learn's digits; sliced W to held-out digits with its "
     "floor.", {"sliced W": "sliced_w", "sliced W floor": "sliced_floor", "W2": "w2",
                "W2 floor": "w2_floor"}),
    ("flows_digits_by_class", "flows_digits_by_class.py", "Flow matching: digits by class",
     "One class-conditional flow (labels as inputs, exact OT within classes, 10% label "
     "dropout); each class's generated digits against its held-out digits (sliced W) beside "
     "the class's own floor (as many training digits of the class).",
     {"worst class: sliced W / floor": "worst_class_ratio",
      "sliced W / floor by class 0..9": "class_ratios",
      "every class within 1.5x its floor": "every_class_within_1.5x_floor",
      "sliced W (all classes)": "sliced_w", "sliced W floor": "sliced_floor"}),
]


def _get(metrics: dict, path: str):
    cur = metrics
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _run(name: str, script: str, out: Path, quick: bool) -> dict:
    # the demo runs in the repository root: a relative --out is resolved against the caller's
    # working directory first, where the results page is written
    cmd = [sys.executable, str(HERE / script), "--out", str((out / name).resolve())]
    if quick:
        cmd.append("--quick")
    # RUNKIT_SVG: the library's figure writers add an SVG beside each PNG (linked on the page)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", RUNKIT_SVG="1")
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, env=env)
    return {"name": name, "returncode": proc.returncode, "seconds": time.perf_counter() - start,
            "stderr": proc.stderr[-4000:], "command": " ".join(["python", f"demos/{script}",
                                                               "--out", str(out / name)]
                                                              + (["--quick"] if quick else []))}


def _notebooks(out: Path) -> None:
    """Execute the tutorial notebooks onto the page (:func:`report.notebook_sections`)."""
    try:
        start = time.perf_counter()
        done = notebook_sections(out)
    except ImportError as err:  # nbclient, nbformat and ipykernel come with the dev extra
        print(f"notebooks left off the page: {err}", flush=True)
        return
    print(f"notebooks: {len(done)} executed in {time.perf_counter() - start:.0f} s", flush=True)


def _in_tour_order(sections: list) -> list:
    """The sections in the order of :data:`DEMOS` (the README's tour), others after them."""
    rank = {**{d[2]: i for i, d in enumerate(DEMOS)}, **{d[0]: i for i, d in enumerate(DEMOS)}}

    def place(section) -> int:
        folder = Path(section.figures[0]).parts[0] if section.figures else section.title
        return rank.get(folder, rank.get(section.title, len(DEMOS)))

    return sorted(sections, key=place)


def _announce(run: dict, done: int, total: int, out: Path) -> None:
    """One line on stdout as a demo finishes: its count, name, outcome, time and figures."""
    figures = len(list((out / run["name"]).rglob("*.png")))
    outcome = "ok" if run["returncode"] == 0 else f"FAILED (exit {run['returncode']})"
    print(f"[{done}/{total}] {run['name']}: {outcome} in {run['seconds']:.0f} s, "
          f"{figures} figures in {out / run['name']}", flush=True)


def _section(out: Path, demo, run: dict) -> None:
    name, _script, title, description, keys = demo
    folder = out / name
    if (folder / "section.json").exists():
        return
    metrics_file = folder / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    numbers = {label: _get(metrics, path) for label, path in keys.items()}
    numbers["seconds"] = round(run["seconds"], 1)
    figures = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.png"))
    write_section(folder, Section(title=title, description=description, figures=figures,
                                  metrics=numbers, command=run["command"]))


def main(argv: list[str] | None = None) -> dict:
    """Run the demos and build ``OUT/index.html``; returns the run summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--quick", action="store_true", help="tiny sizes (for the tests)")
    p.add_argument("--jobs", type=int, default=2, help="demos run at the same time")
    p.add_argument("--only", default=None, help="comma-separated demo names")
    p.add_argument("--notebooks", choices=("auto", "on", "off"), default="auto",
                   help="execute the tutorial notebooks onto the page (auto: unless --quick)")
    args = p.parse_args(argv)
    names = [d[0] for d in DEMOS]
    chosen = names if args.only is None else args.only.split(",")
    unknown = set(chosen) - set(names)
    if unknown:
        p.error(f"--only: unknown demos {sorted(unknown)}; choose from {names}")
    demos = [d for d in DEMOS if d[0] in chosen]
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    runs = {}
    # the first demo fits the shared attractor models; the rest run in parallel
    first, rest = demos[:1], demos[1:]
    print(f"running {len(demos)} demos into {args.out} ({args.jobs} at a time"
          f"{', quick sizes' if args.quick else ''}); a line as each finishes", flush=True)
    for d in first:
        runs[d[0]] = _run(d[0], d[1], args.out, args.quick)
        _announce(runs[d[0]], len(runs), len(demos), args.out)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(_run, d[0], d[1], args.out, args.quick) for d in rest]
        for future in as_completed(futures):
            r = future.result()
            runs[r["name"]] = r
            _announce(r, len(runs), len(demos), args.out)
    failed = [n for n, r in runs.items() if r["returncode"] != 0]
    for d in demos:
        if runs[d[0]]["returncode"] == 0:
            _section(args.out, d, runs[d[0]])
    if args.notebooks == "on" or (args.notebooks == "auto" and not args.quick):
        _notebooks(args.out)
    page = build_report(args.out, _in_tour_order(collect_sections(args.out)), quick=args.quick)
    summary = {"seconds": time.perf_counter() - start, "page": str(page), "failed": failed,
               "quick": args.quick,
               "demos": {n: {"seconds": r["seconds"], "returncode": r["returncode"]}
                         for n, r in runs.items()}}
    (args.out / "run_all.json").write_text(json.dumps(summary, indent=2) + "\n")
    for n in failed:
        print(f"demo {n} failed:\n{runs[n]['stderr']}", file=sys.stderr)
    print(json.dumps(summary["demos"], indent=1))
    print(f"results page: {page} ({summary['seconds']:.0f} s)")
    if failed:
        raise SystemExit(1)
    return summary


if __name__ == "__main__":
    main()
