"""Run the main demos on their defaults and build the offline results page.

    python demos/run_all.py --out results [--quick | --full] [--jobs 2] [--only NAME,...]

Three sizes: ``--quick`` (tiny, for the tests: about 3 minutes on two cores), the default (the
figures that carry the claims, ``make demo``: about 15 minutes on two cores) and ``--full``
(the long measurements behind bench/README.md's numbers, ``bench/demos_full.py``: hours).

The demos run in ``--jobs`` worker processes (two on a two-core machine, one torch thread
each), which import the libraries once and run one demo after another in-process, each writing
into ``OUT/<name>/`` (its printed output into ``OUT/<name>/log.txt``). The first demo fits the
attractor models the others share through ``OUT/models``; the demos that load them start when
it has finished, the others at once. A line is printed as each demo finishes (its wall and CPU
time), its ``section.json`` written (unless the demo wrote its own) and ``OUT/index.html``
rebuilt, so an interrupted or slow run still leaves a page of what has finished, naming what
has not (``python demos/run_all.py --out OUT --page-only`` rebuilds it the same way, running
nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import multiprocessing
import os
import queue
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

from page import (
    SECTION_FILE,
    Section,
    build_report,
    collect_sections,
    notebook_sections,
    write_section,
)

HERE = Path(__file__).resolve().parent

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
    ("real_recording", "real_recording.py", "SEAL on a real recording (ADn, 19 cells)", "", {}),
    ("generate_activity", "generate_activity.py",
     "Generated population activity: is it an attractor population?",
     "Noisy states of a fitted ring and hex torus; (a) ambient flow matching, (b) Riemannian "
     "flow matching on the decoded coordinate mapped through the manifold with a learned normal "
     "variability, (c) ambient samples relaxed by the network; 10 field evaluations each. "
     "Normal distance over the data's own, Betti numbers, intrinsic W2 over its i.i.d. floor; "
     "a flow trained on shuffled states is the control; *_barcodes.png shows each set's "
     "persistence barcode. The tables (*_methods.png) give the "
     "three at equal evaluations and at equal CPU time ((a), (b) retrained to the time of (c)). "
     "Whether the generated activity is an attractor population (*_verdict.png) is judged on "
     "(a)'s samples as generated: rate W2 to held-out states within 1.2x that of real states; "
     "(b) and (c) are shaped by the network's manifold and never count.",
     {"ring: attractor population ((a) as generated)": "ring.verdict.kept",
      "ring (a): rate W2 / floor": "ring.verdict.rate_w2_ratio",
      "torus: attractor population ((a) as generated)": "torus.verdict.kept",
      "torus (a): rate W2 / floor": "torus.verdict.rate_w2_ratio",
      "ring (b): Betti": "ring.methods.riemannian.betti",
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


#: demos that load the attractor models the first demo (restoration) fits into OUT/models:
#: they start once it has finished, the others at once
SHARED_MODELS = {"moving_bump", "speed_gain", "energy_comparison", "connectivity", "manifold",
                 "drift_and_cues", "grid_modules", "heterogeneity", "generate_activity"}
#: the tutorial notebooks executed onto the page (a full run's), as tasks beside the demos
NOTEBOOKS = HERE.parent / "notebooks"
#: environment of the worker processes: one thread per library, SVG copies of the figures
#: (RUNKIT_SVG: the library's figure writers add an SVG beside each PNG, linked on the page)
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
              "RUNKIT_SVG": "1", "MPLBACKEND": "Agg"}


def _get(metrics: dict, path: str):
    cur = metrics
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _worker_init() -> None:
    """A worker process: the libraries imported once, Ctrl-C left to the parent (which ends
    the workers), the repository root as working directory (where the demos run)."""
    os.environ.update(WORKER_ENV)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.chdir(HERE.parent)
    import matplotlib  # noqa: F401 - paid once per worker, not once per demo
    import torch

    torch.set_num_threads(1)


@contextlib.contextmanager
def _output_to(path: Path):
    """Standard output and error, Python's and the C libraries', into ``path``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "w", encoding="utf-8", buffering=1) as fh:
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        try:
            with contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _cpu_seconds() -> float:
    """CPU time of this process (every thread) and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


#: a demo's command-line flag per size
SIZE_FLAGS = {"quick": ["--quick"], "demo": [], "full": ["--full"]}


def _command(name: str, script: str, out: Path, size: str) -> str:
    return " ".join(["python", f"demos/{script}", "--out", str(out / name)] + SIZE_FLAGS[size])


def run_demo(name: str, script: str, out: Path, size: str) -> dict:
    """Run one demo in this process: ``main(["--out", OUT/name, ...])`` of its script, its
    printed output in ``OUT/name/log.txt``; returns its outcome, wall and CPU seconds."""
    folder = (out / name).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "log.txt"
    start, cpu = time.perf_counter(), _cpu_seconds()
    code = 0
    with _output_to(log):
        try:
            if script.endswith(".ipynb"):
                notebook_sections(out.resolve(), NOTEBOOKS, only=[script])
            else:
                spec = importlib.util.spec_from_file_location(f"demo_{name}", HERE / script)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                module.main(["--out", str(folder)] + SIZE_FLAGS[size])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except Exception:  # noqa: BLE001 - a demo's failure is reported, the run goes on
            traceback.print_exc()
            code = 1
        finally:
            _close_figures()
    return {"name": name, "returncode": code, "seconds": time.perf_counter() - start,
            "cpu_seconds": _cpu_seconds() - cpu, "log": str(log),
            "stderr": log.read_text(errors="replace")[-4000:] if code else "",
            "command": _command(name, script, out, size)}


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    gc.collect()


def _in_tour_order(sections: list) -> list:
    """The sections in the order of :data:`DEMOS` (the tour), others after them."""
    rank = {**{d[2]: i for i, d in enumerate(DEMOS)}, **{d[0]: i for i, d in enumerate(DEMOS)}}

    def place(section) -> int:
        folder = Path(section.figures[0]).parts[0] if section.figures else section.title
        return rank.get(folder, rank.get(section.title, len(DEMOS)))

    return sorted(sections, key=place)


def _announce(run: dict, done: int, total: int, out: Path) -> None:
    """One line on stdout as a demo finishes: its count, name, outcome, times and figures."""
    folder = out / run["name"]
    figures = len(list(folder.rglob("*.png"))) if folder.is_dir() else 0
    outcome = "ok" if run["returncode"] == 0 else f"FAILED (exit {run['returncode']})"
    print(f"[{done}/{total}] {run['name']}: {outcome} in {run['seconds']:.0f} s "
          f"({run['cpu_seconds']:.0f} s CPU), {figures} figures in {folder}", flush=True)


def section_for(out: Path, demo, seconds: float | None = None, command: str | None = None,
                cpu_seconds: float | None = None) -> Section | None:
    """The page's section of a finished demo from its ``metrics.json`` and figures (None when
    it has no metrics): its title, description and key numbers from :data:`DEMOS`."""
    name, script, title, description, keys = demo
    folder = out / name
    metrics_file = folder / "metrics.json"
    if not metrics_file.is_file():
        return None
    metrics = json.loads(metrics_file.read_text())
    numbers = {label: _get(metrics, path) for label, path in keys.items()}
    if seconds is not None:
        numbers["seconds"] = round(seconds, 1)
    if cpu_seconds is not None:
        numbers["CPU seconds"] = round(cpu_seconds, 1)
    figures = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.png"))
    return Section(title=title, description=description, figures=figures, metrics=numbers,
                   command=command or _command(name, script, out, "demo"))


def _section(out: Path, demo, run: dict) -> None:
    if (out / demo[0] / "section.json").exists():
        return
    section = section_for(out, demo, run["seconds"], run["command"], run["cpu_seconds"])
    if section is not None:
        write_section(out / demo[0], section)


def missing_demos(out: Path, names: list[str] | None = None) -> list[str]:
    """The demos (of ``names``, default all) whose section is not in ``out``."""
    names = [d[0] for d in DEMOS] if names is None else names
    return [n for n in names if not (out / n / "section.json").is_file()]


def missing_note(out: Path, chosen: list[str]) -> str:
    """The page's line naming the chosen demos that are not on it (empty when none)."""
    missing = missing_demos(out, chosen)
    return ("Not on this page (not finished, failed or not run): " + ", ".join(missing) + "."
            if missing else "")


def rebuild_page(out: Path, quick: bool, chosen: list[str], note: str = "") -> Path:
    """``OUT/index.html`` from every finished section, naming the chosen demos not on it."""
    note = " ".join(n for n in (note, missing_note(out, chosen)) if n)
    return build_report(out, _in_tour_order(collect_sections(out)), quick=quick, note=note)


def _tasks(demos: list, notebooks: bool) -> list:
    tasks = [(d[0], d[1]) for d in demos]
    if notebooks:
        tasks += [(f"notebook_{p.stem}", p.name) for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
    return tasks


def _schedule(tasks: list, out: Path, size: str, jobs: int, finished) -> None:
    """Run ``tasks`` (name, script) on ``jobs`` workers, calling ``finished(run)`` in this
    process as each ends; those of :data:`SHARED_MODELS` wait for the first demo when it is
    restoration. Ctrl-C ends the workers and raises ``KeyboardInterrupt``."""
    names = [t[0] for t in tasks]
    first = "restoration" if "restoration" in names else None
    done: queue.Queue = queue.Queue()
    pending, running, ended = list(tasks), 0, set()

    def ready(task) -> bool:
        return task[0] not in SHARED_MODELS or first is None or first in ended

    pool = multiprocessing.get_context("spawn").Pool(max(1, jobs), initializer=_worker_init)
    try:
        while pending or running:
            while running < max(1, jobs):
                task = next((t for t in pending if ready(t)), None)
                if task is None:
                    break
                pending.remove(task)
                running += 1
                pool.apply_async(run_demo, (*task, out, size), callback=done.put,
                                 error_callback=lambda err, t=task: done.put(_crashed(t, err)))
            run = _next(done)
            running -= 1
            ended.add(run["name"])
            finished(run)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _next(done: queue.Queue) -> dict:
    while True:  # a timeout, so that Ctrl-C is seen at once
        try:
            return done.get(timeout=0.2)
        except queue.Empty:
            continue


def _crashed(task, err: BaseException) -> dict:
    return {"name": task[0], "returncode": 1, "seconds": 0.0, "cpu_seconds": 0.0, "log": "",
            "stderr": f"worker failed: {type(err).__name__}: {err}", "command": ""}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results folder: a folder per demo, the models they share (models/) "
                        "and the page index.html (default: results)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="tiny sizes: every demo and the page in about 3 minutes on two cores; "
                           "the numbers do not test the claims")
    size.add_argument("--full", action="store_true",
                      help="the measurements of bench/README.md (hours; default: "
                           "the sizes that carry the claims in about 15 minutes on two cores)")
    p.add_argument("--jobs", type=int, default=2,
                   help="worker processes, each running one demo at a time (default: 2)")
    p.add_argument("--only", default=None, help="comma-separated demo names (default: all)")
    p.add_argument("--notebooks", choices=("auto", "on", "off"), default="auto",
                   help="execute the tutorial notebooks onto the page (auto: unless --quick)")
    page = p.add_argument_group("the page alone")
    page.add_argument("--page-only", action="store_true", dest="page_only",
                      help="run nothing: rebuild OUT/index.html from the demos that have "
                           "finished (a demo with no section.json gets one from its "
                           "metrics.json), naming those that have not")
    page.add_argument("--title", default="neurodyn-flows results", help="page title")
    page.add_argument("--embed", action="store_true",
                      help="embed images as data URIs instead of linking them")
    return p


def page_only(args: argparse.Namespace) -> dict:
    """Rebuild ``OUT/index.html`` from the demos that have finished, running nothing (with
    ``--notebooks on``, the tutorial notebooks are executed onto it first)."""
    out = args.out
    if not out.is_dir():
        _parser().error(f"--out {str(out)!r} is not a folder; run the demos first")
    if args.notebooks == "on":
        notebook_sections(out)
    summary_file = out / "run_all.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    quick = bool(summary.get("quick"))
    for demo in DEMOS:
        if not (out / demo[0] / SECTION_FILE).is_file():
            seconds = summary.get("demos", {}).get(demo[0], {}).get("seconds")
            section = section_for(out, demo, seconds, _command(
                demo[0], demo[1], out, summary.get("size", "quick" if quick else "demo")))
            if section is not None:
                write_section(out / demo[0], section)
    sections = _in_tour_order(collect_sections(out))
    chosen = summary.get("chosen") or [d[0] for d in DEMOS]
    missing = missing_demos(out, chosen)
    path = build_report(out, sections, title=args.title, embed_images=args.embed, quick=quick,
                        note=missing_note(out, chosen))
    print(f"wrote {path} ({len(sections)} sections)"
          + (f"; not finished or failed: {', '.join(missing)}" if missing else ""))
    return {"page": str(path), "sections": len(sections), "missing": missing}


def main(argv: list[str] | None = None) -> dict:
    """Run the demos and build ``OUT/index.html`` as each finishes; returns the run summary."""
    p = _parser()
    args = p.parse_args(argv)
    if args.page_only:
        return page_only(args)
    names = [d[0] for d in DEMOS]
    chosen = names if args.only is None else args.only.split(",")
    unknown = set(chosen) - set(names)
    if unknown:
        p.error(f"--only: unknown demos {sorted(unknown)}; choose from {names}")
    demos = [d for d in DEMOS if d[0] in chosen]
    notebooks = args.notebooks == "on" or (args.notebooks == "auto" and not args.quick)
    tasks = _tasks(demos, notebooks)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    runs: dict = {}
    size = "quick" if args.quick else "full" if args.full else "demo"
    summary = {"quick": args.quick, "size": size, "chosen": [t[0] for t in tasks], "demos": {},
               "shared_models": sorted(SHARED_MODELS)}
    print(f"running {len(tasks)} demos into {out} ({args.jobs} at a time, {size} sizes); a "
          "line as each finishes", flush=True)
    by_name = {d[0]: d for d in demos}

    def finished(run: dict) -> None:
        runs[run["name"]] = run
        _announce(run, len(runs), len(tasks), out)
        if run["returncode"] == 0 and run["name"] in by_name:
            _section(out, by_name[run["name"]], run)
        summary["demos"][run["name"]] = {k: run[k] for k in ("seconds", "cpu_seconds",
                                                              "returncode")}
        _write_summary(out, summary, start, cpu_start)
        rebuild_page(out, args.quick, summary["chosen"])

    _write_summary(out, summary, start, cpu_start)
    try:
        _schedule(tasks, out, size, args.jobs, finished)
    except KeyboardInterrupt:
        page = rebuild_page(out, args.quick, summary["chosen"],
                            note=f"Interrupted after {len(runs)} of {len(tasks)} demos.")
        print(f"interrupted: {len(runs)} of {len(tasks)} demos finished; results page: {page}",
              file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    return _finish(out, summary, runs, start, cpu_start)


def _write_summary(out: Path, summary: dict, start: float, cpu_start: float) -> None:
    summary["seconds"] = time.perf_counter() - start
    # this process and its ended workers (the workers count once the run has ended)
    summary["cpu_seconds"] = _cpu_seconds() - cpu_start
    summary["failed"] = [n for n, r in summary["demos"].items() if r["returncode"] != 0]
    tmp = out / "run_all.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    os.replace(tmp, out / "run_all.json")


def _finish(out: Path, summary: dict, runs: dict, start: float, cpu_start: float) -> dict:
    _write_summary(out, summary, start, cpu_start)
    page = out / "index.html"
    summary["page"] = str(page)
    for n in summary["failed"]:
        print(f"demo {n} failed (its output: {runs[n]['log']}):\n{runs[n]['stderr']}",
              file=sys.stderr)
    print(f"results page: {page} ({summary['seconds']:.0f} s, {summary['cpu_seconds']:.0f} s "
          f"CPU); every demo's times in {out / 'run_all.json'}")
    if summary["failed"]:
        raise SystemExit(1)
    return summary


if __name__ == "__main__":
    main()
