"""SEAL on a real recording: 19 head-direction cells of the mouse anterodorsal thalamus
(Peyrache et al. 2015; ``../shared/data/adn_hd_wake_sws.npz``: spike counts in 10 ms bins,
36 min awake with the heading, 145 min of slow-wave sleep).

Parts (``--parts``), each measured in this one run:

- ``decode``: the first 75% of wake fits the cells, the last 25% is decoded in non-overlapping
  50 ms windows by :func:`neurodyn.inference.fit_activity` (``hold_out=0.25``) and, side by
  side on the same windows, by pynapple's ``decode_bayes`` with tuning curves (36 bins) from
  the same 75% -- the standard Bayesian decoder; the ratio of the median absolute errors;
- ``cofiring``: across cell pairs, the correlation of the wake and SWS pairwise count
  correlations (100 ms bins), and the same with each SWS cell rolled in time (20 rolls);
- ``verdict``: the wake fit's verdict without sleep, with the SWS as sleep, and with the rolled
  SWS as sleep;
- ``cost``: CPU time and peak memory of the wake fit and of the wake fit with the 145 min of
  SWS as sleep, each in a fresh process (the figures the command draws left out).

    python bench/bench_real_recording.py --out results/bench/real_recording.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("NEURODYN_ADN", ROOT.parent / "shared" / "data" /
                           "adn_hd_wake_sws.npz"))
WINDOW = 5  # 10 ms bins: 50 ms windows


def _load():
    d = np.load(DATA)
    return d["wake_counts"].astype(float), d["wake_heading"], d["sws_counts"].astype(float), \
        float(d["dt"])


def _windows(x, k):
    n = (x.shape[0] // k) * k
    return x[:n].reshape(-1, k, x.shape[1]).sum(1)


def pynapple_error(wake, heading, dt, cut, bins: int = 36) -> dict:
    """pynapple's decode_bayes on the held-out windows, tuning curves from the first part."""
    import pynapple as nap

    T = wake.shape[0]
    t = (np.arange(T) + 0.5) * dt
    units = nap.TsGroup({i: nap.Ts(np.repeat(t, wake[:, i].astype(int)))
                         for i in range(wake.shape[1])})
    feature = nap.Tsd(t=t, d=heading)
    start = time.process_time()
    tc = nap.compute_tuning_curves(units, feature, bins=bins, range=(0, 2 * np.pi),
                                   epochs=nap.IntervalSet(0, cut * dt))
    decoded, _ = nap.decode_bayes(tc, units, nap.IntervalSet(cut * dt, T * dt), WINDOW * dt)
    idx = np.clip((np.asarray(decoded.t) / dt).astype(int), 0, T - 1)
    err = np.abs(np.angle(np.exp(1j * (np.asarray(decoded.values) - heading[idx]))))
    return {"median_error_deg": math.degrees(float(np.median(err))), "windows": int(err.size),
            "cpu_s": time.process_time() - start, "bins": bins,
            "version": nap.__version__}


def ours_error(fit, heading, dt, cut) -> dict:
    """The library's held-out decoding at the same non-overlapping 50 ms windows."""
    from neurodyn.inference.files import decode_counts

    end = _windows(FIT_WAKE[cut:], WINDOW)
    decoded = decode_counts(fit.cells, "ring", end, WINDOW * dt, 1)
    centre = heading[cut:][WINDOW // 2::WINDOW][: decoded.size]
    err = np.abs(np.angle(np.exp(1j * (decoded - centre))))
    return {"median_error_deg": math.degrees(float(np.median(err))), "windows": int(err.size),
            "sliding_window_median_error_deg": fit.held_out["median_error_deg"]}


FIT_WAKE = None


def decode_part(out):
    from neurodyn.inference import fit_activity

    global FIT_WAKE
    wake, heading, _, dt = _load()
    FIT_WAKE = wake
    cut = wake.shape[0] - int(round(0.25 * wake.shape[0]))
    start = time.process_time()
    fit = fit_activity(wake, dt, "ring", heading, hold_out=0.25, topology=False)
    ours = {**ours_error(fit, heading, dt, cut), "fit_cpu_s": time.process_time() - start}
    out["decode"] = {"ours": ours, "fit_bins": cut, "held_out_bins": wake.shape[0] - cut}
    try:
        ref = pynapple_error(wake, heading, dt, cut)
    except ImportError:
        out["decode"]["pynapple"] = "not installed (pip install pynapple)"
        return
    out["decode"]["pynapple"] = ref
    out["decode"]["ratio"] = ours["median_error_deg"] / ref["median_error_deg"]


def cofiring_part(out, rolls: int = 20):
    from neurodyn.inference.verdict.sleep import cofiring, rolled

    wake, _, sws, dt = _load()
    e = cofiring(wake, [sws], dt, rolls=rolls, seed=0)
    r = cofiring(wake, [rolled(sws, 3, int(10 / dt))], dt, rolls=rolls, seed=1)
    out["cofiring"] = {"r": e.statistic, "p": e.p_value, "rolled_control_mean": e.details[
        "null_mean"], "rolled_sws_r": r.statistic, "rolled_sws_status": r.status}


def verdict_part(out):
    from neurodyn.inference import fit_activity
    from neurodyn.inference.verdict.sleep import rolled

    wake, heading, sws, dt = _load()
    rows = {}
    for name, sleep in (("no sleep", []), ("SWS", [sws]),
                        ("rolled SWS", [rolled(sws, 3, int(10 / dt))])):
        fit = fit_activity(wake, dt, "ring", heading, sleep=sleep, hold_out=0.25)
        rows[name] = {"attractor": fit.attractor, "reason": fit.verdict.reason,
                      "tests": {k: {"status": t.status, "statistic": t.statistic,
                                    "p": t.p_value, "interval": t.interval}
                                for k, t in fit.tests.items()}}
    out["verdict"] = rows


_COST = """
import resource, sys, time, numpy as np
from neurodyn.inference import fit_activity
d = np.load(sys.argv[1]); sleep = [d["sws_counts"].astype(float)] if sys.argv[2] == "1" else []
start = time.process_time()
fit = fit_activity(d["wake_counts"].astype(float), float(d["dt"]), "ring", d["wake_heading"],
                   sleep=sleep, hold_out=0.25)
print(time.process_time() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def cost_part(out):
    rows = {}
    for name, flag in (("wake", "0"), ("wake + 145 min SWS", "1")):
        res = subprocess.run([sys.executable, "-c", _COST, str(DATA), flag], check=True,
                             capture_output=True, text=True, env={**os.environ,
                                                                 "OMP_NUM_THREADS": "1"})
        cpu, rss = res.stdout.split()[-2:]
        rows[name] = {"cpu_s": float(cpu), "peak_rss_mb": int(rss) / 1024}
    out["cost"] = rows


PARTS = {"decode": decode_part, "cofiring": cofiring_part, "verdict": verdict_part,
         "cost": cost_part}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="decode,cofiring,verdict,cost")
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = p.parse_args(argv)
    if not DATA.is_file():
        raise SystemExit(f"no recording at {DATA} (set NEURODYN_ADN)")
    out = {"data": str(DATA)}
    for part in args.parts.split(","):
        PARTS[part](out)
        print(json.dumps({part: out[part]}, default=str), flush=True)
    out["peak_rss_mb_of_this_process"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1, default=str))
    return out


if __name__ == "__main__":
    main()
