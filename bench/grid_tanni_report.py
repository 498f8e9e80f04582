"""Decoding error and diffusion of grid-cell runs on a real trajectory (bench/grid_tanni.sh).

For each run directory OUT/cue and OUT/nocue: each module's path-integration error (median,
95th percentile, final), the command's wall time, CPU time (user + system: the measure that
survives a loaded machine) and peak resident memory (OUT/<run>.time from
``/usr/bin/time -v``) and, for the run without cues, the bump's diffusion measured against the
theory: with independent noise ``sigma dW`` on every ``u_i`` the phase diffuses with
``D_psi`` (:func:`neurodyn.analysis.drift.diffusion_tensor_theory`, rad^2 per network time
unit), so the position error of a module with wave vectors ``K`` diffuses with
``D_x = K^-1 D_psi K^-T / unit`` (m^2/s) and ``E|e(t + L) - e(t)|^2 = 2 tr(D_x) L``. The
measured increments over non-overlapping windows of ``L`` seconds give the estimate, with a
95% bootstrap interval over windows.

    python bench/grid_tanni_report.py OUT MODEL_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from neurodyn.analysis.drift import diffusion_tensor_theory
from neurodyn.io import load_model
from neurodyn.spatial.phases import wave_vectors


def _time(path: Path) -> dict:
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "Maximum resident" in line:
                out["peak_rss_mb"] = int(line.split(":")[-1]) / 1024
            if line.strip().startswith(("User time", "System time")):
                out["command_cpu_s"] = out.get("command_cpu_s", 0.0) + float(line.split(":")[-1])
            if "Elapsed (wall clock)" in line:
                parts = [float(x) for x in line.split(": ")[-1].split(":")]
                out["command_wall_s"] = sum(p * 60 ** i for i, p in enumerate(parts[::-1]))
    return out


def _diffusion(err: np.ndarray, dt: float, lag_s: float, seed: int = 0):
    """``mean |e(t + L) - e(t)|^2 / (2 L)`` over non-overlapping windows, with a 95% bootstrap
    interval (m^2/s)."""
    k = max(1, int(round(lag_s / dt)))
    inc = err[k::k] - err[:-k:k]
    sq = (inc ** 2).sum(axis=1) / (2 * k * dt)
    boot = np.random.default_rng(seed).choice(sq, size=(2000, sq.size)).mean(axis=1)
    return float(sq.mean()), [float(x) for x in np.percentile(boot, [2.5, 97.5])], int(sq.size)


def report(out: Path, model: Path) -> dict:
    net, _ = load_model(str(model / "model.pt"))
    rows = {}
    for name in ("cue", "nocue"):
        run = out / name
        if not (run / "track.npz").exists():
            continue
        track = np.load(run / "track.npz")
        config = json.loads((run / "config.json").read_text())["config"]
        timing = json.loads((run / "timing.json").read_text())
        metrics = json.loads((run / "metrics.json").read_text())
        unit = config["tau_seconds"] / float(net.tau)
        d_psi = diffusion_tensor_theory(net, config["noise"])
        mods = []
        for m, s in enumerate(track["spacing"]):
            err_vec = track["decoded_modules"][m] - track["position"]
            err = np.linalg.norm(err_vec, axis=1)
            kinv = np.linalg.inv(wave_vectors(float(s), config["orientation_rad"],
                                              config["lattice"])[:2])
            d_x = float(np.trace(kinv @ d_psi @ kinv.T)) / unit  # tr(D_x), m^2/s
            row = {"spacing_m": float(s), "median_error_m": float(np.median(err)),
                   "p95_error_m": float(np.percentile(err, 95)),
                   "final_error_m": float(err[-1]), "theory_trD_m2_per_s": d_x,
                   "sqrt_2Dt_at_end_m": float(np.sqrt(2 * d_x * track["t"][-1]))}
            for lag in (1.0, 10.0, 60.0):
                if lag * 4 > track["t"][-1]:
                    continue
                est, ci, n = _diffusion(err_vec, config["dt_s"], lag)
                row[f"measured_trD_lag{lag:g}s"] = {"value": est, "ci95": ci, "windows": n}
            mods.append(row)
        rows[name] = {"duration_s": config["duration_s"], "sim_wall_s": timing["wall_time_s"],
                      **_time(out / f"{name}.time"), "tracking": metrics.get("tracking"),
                      "fraction_grid": metrics.get("fraction_grid"), "modules": mods}
    return rows


if __name__ == "__main__":
    result = report(Path(sys.argv[1]), Path(sys.argv[2]))
    text = json.dumps(result, indent=1)
    (Path(sys.argv[1]) / "report.json").write_text(text)
    print(text)
