"""Decoding error and diffusion of grid-cell runs on a real trajectory (bench/grid_tanni.sh).

For each run directory OUT/cue and OUT/nocue:

- the error of the three modules decoded together without the start position (track.npz's
  ``decoded_joint``, or :func:`neurodyn.spatial.gridcells.joint.joint_decode` of the saved phases
  for a run written before it existed): median, 95th percentile, maximum;
- each module's path-integration error (median, 95th percentile, final; a cue that pulls a
  module more than half a period counts a whole period here) and its phase error modulo the
  lattice (``|K^-1 wrap(psi - K x)|``, what the joint decoder reads);
- where the joint error is large, whether the true position explains the phases less well than
  the decoded one (then no decoder of these phases could do better there), and the joint error
  against the time since the last cue;
- the command's wall time, CPU time (user + system: the measure that survives a loaded machine)
  and peak resident memory (OUT/<run>.time from ``/usr/bin/time -v``);
- the control, for the run without cues: the noise was set so that each module's position error
  diffuses with ``D = tr(D_x)`` (metrics.json's ``noise_calibration``, from
  :func:`neurodyn.spatial.gridcells.calibration.module_diffusion`), so its increments over a lag
  ``L`` have ``E|e(t + L) - e(t)|^2 = 2 D L``: the root-mean-square increment over
  non-overlapping windows of ``L`` = 10, 60, 300 and 900 s against ``sqrt(2 D L)``, with a 95%
  bootstrap interval over windows, and ``D`` fitted over those lags with an intercept (the
  decoding jitter of the bump's non-zero modes adds a constant).

    python bench/grid_tanni_report.py OUT MODEL_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from neurodyn.io import load_model
from neurodyn.spatial.decoding import module_phases, module_wave_vectors
from neurodyn.spatial.gridcells.calibration import module_diffusion
from neurodyn.spatial.gridcells.joint import joint_decode
from neurodyn.spatial.phases import wave_vectors

LAGS = (10.0, 60.0, 300.0, 900.0)


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


def _increments(err: np.ndarray, dt: float, lag_s: float, seed: int = 0) -> dict:
    """RMS increment of the error vector over non-overlapping windows of ``lag_s``, with a 95%
    bootstrap interval over windows (m)."""
    k = max(1, int(round(lag_s / dt)))
    inc = err[k::k] - err[:-k:k]
    sq = (inc ** 2).sum(axis=1)
    boot = np.random.default_rng(seed).choice(sq, size=(2000, sq.size)).mean(axis=1)
    lo, hi = np.sqrt(np.percentile(boot, [2.5, 97.5]))
    return {"lag_s": lag_s, "rms_m": float(np.sqrt(sq.mean())), "ci95_m": [float(lo), float(hi)],
            "windows": int(sq.size)}


def _control(err: np.ndarray, dt: float, d_theory: float, duration: float) -> dict:
    """Increments at :data:`LAGS` against ``sqrt(2 D L)``, and ``D`` fitted with an
    intercept (m^2/s)."""
    rows = []
    for lag in LAGS:
        if lag * 4 > duration:
            continue
        row = _increments(err, dt, lag)
        row["theory_sqrt_2DL_m"] = float(np.sqrt(2 * d_theory * lag))
        lo, hi = row["ci95_m"]
        row["theory_inside_ci"] = bool(lo <= row["theory_sqrt_2DL_m"] <= hi)
        rows.append(row)
    fit = None
    if len(rows) >= 2:
        lags = np.array([r["lag_s"] for r in rows])
        msd = np.array([r["rms_m"] ** 2 for r in rows])
        slope, icpt = np.polyfit(lags, msd, 1)
        fit = {"D_fit_cm2_per_s": float(1e4 * slope / 2), "intercept_m2": float(icpt)}
    return {"theory_D_cm2_per_s": 1e4 * d_theory, "lags": rows, "fit": fit}


def _joint(track, config: dict) -> tuple[np.ndarray, dict]:
    """The jointly decoded track (recomputed from the phases) and its diagnostics."""
    arena = config.get("arena_m") or [config["box_m"]] * 2
    phases = np.transpose(track["phases"], (1, 0, 2))
    res = joint_decode(phases, track["spacing"], arena, config["dt_s"],
                       config["orientation_rad"], config["lattice"])
    k = module_wave_vectors(track["spacing"], config["orientation_rad"], config["lattice"])
    of = module_phases(phases, config["lattice"]).reshape(phases.shape[0], -1)
    ll_true = np.cos(of - track["position"] @ k.reshape(-1, 2).T).sum(axis=1)
    bad = np.linalg.norm(res.position - track["position"], axis=1) > 0.1
    return res.position, {"lost_samples": res.lost, "relocks": res.relocks,
                          "fraction_above_10cm": float(bad.mean()),
                          "truth_less_likely_where_above_10cm": float(
                              np.mean(ll_true[bad] < res.loglik[bad])) if bad.any() else None}


def _phase_error(track, config: dict, m: int) -> dict:
    """Module ``m``'s phase error modulo the lattice, in metres."""
    s = float(track["spacing"][m])
    kk = wave_vectors(s, config["orientation_rad"], config["lattice"])[:2]
    d = track["phases"][m] - track["position"] @ kk.T
    d = (d + np.pi) % (2 * np.pi) - np.pi
    e = np.linalg.norm(d @ np.linalg.inv(kk).T, axis=1)
    return {"median_m": float(np.median(e)), "p95_m": float(np.percentile(e, 95))}


def _since_cue(track, config: dict, err: np.ndarray) -> list:
    """The joint error against the time since the agent was last within the cue's distance of
    a wall: the share of samples and the median and 95th percentile error per interval."""
    cue = config.get("boundary_cue")
    if not cue:
        return []
    w, h = config.get("arena_m") or [config["box_m"]] * 2
    x = track["position"]
    near = np.minimum.reduce([x[:, 0], w - x[:, 0], x[:, 1], h - x[:, 1]]) < cue[1]
    idx = np.arange(near.size)
    last = np.maximum.accumulate(np.where(near, idx, -1))
    since = np.where(last >= 0, (idx - last) * config["dt_s"], np.inf)
    rows = []
    for lo, hi in ((0, 1), (1, 10), (10, 30), (30, 60), (60, np.inf)):
        sel = (since >= lo) & (since < hi)
        if sel.any():
            rows.append({"since_cue_s": [lo, hi], "share": float(sel.mean()),
                         "median_error_m": float(np.median(err[sel])),
                         "p95_error_m": float(np.percentile(err[sel], 95))})
    return rows


def _stats(err: np.ndarray) -> dict:
    return {"median_error_m": float(np.median(err)), "p95_error_m": float(np.percentile(err, 95)),
            "max_error_m": float(err.max()), "final_error_m": float(err[-1])}


def report(out: Path, model: Path) -> dict:
    net, _ = load_model(str(model / "model.pt"))
    rows = {}
    for name in ("cue", "nocue"):
        run = out / name
        if not (run / "track.npz").exists():
            continue
        track = np.load(run / "track.npz")
        config = json.loads((run / "config.json").read_text())
        config = {**config.get("config", {}), **config}
        metrics = json.loads((run / "metrics.json").read_text())
        noise = config["noise"]
        d_theory = module_diffusion(net, track["spacing"], noise, config["orientation_rad"],
                                    config["tau_seconds"])
        decoded, diagnostics = _joint(track, config)
        joint = np.linalg.norm(decoded - track["position"], axis=1)
        mods = []
        for m, s in enumerate(track["spacing"]):
            err_vec = track["decoded_modules"][m] - track["position"]
            row = {"spacing_m": float(s), **_stats(np.linalg.norm(err_vec, axis=1)),
                   "phase_error": _phase_error(track, config, m)}
            if name == "nocue":
                row["control"] = _control(err_vec, config["dt_s"], float(d_theory[m]),
                                          config["duration_s"])
            mods.append(row)
        rows[name] = {"duration_s": config["duration_s"], **_time(out / f"{name}.time"),
                      "joint": {**_stats(joint), **diagnostics},
                      "joint_since_cue": _since_cue(track, config, joint),
                      "noise_calibration": metrics.get("noise_calibration"),
                      "tracking": metrics.get("tracking"),
                      "fraction_grid": metrics.get("fraction_grid"), "modules": mods}
    return rows


if __name__ == "__main__":
    result = report(Path(sys.argv[1]), Path(sys.argv[2]))
    text = json.dumps(result, indent=1)
    (Path(sys.argv[1]) / "report.json").write_text(text)
    print(text)
