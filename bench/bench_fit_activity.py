"""The acceptance numbers of SEAL from recorded activity, against the generator's ground truth.

Data: RatInABox's Sargolini trajectory (600 s; the Tanni session, 2 h, for the timing), 71 of
100 cells, Poisson counts in 20 ms bins (``neurodyn.datasets``). Parts (``--parts``):

- ``ring``: preferred angles (median error after the global rotation), held-out decoding (5
  contiguous folds of 2 minutes), normal rates against the truth, D against its interval, and
  (first seed) the learned network's resting bump against the tuning profile;
- ``nocov``: the same data without the heading: Betti numbers, decoding error after the best
  rotation or reflection;
- ``torus``: one grid module: Betti numbers, lattice, phases, held-out decoding (m);
- ``controls``: time-shifted and identity-shuffled data, ``--seeds`` seeds each: attractor?;
- ``ff``: the feed-forward control (same tuning, no recurrence);
- ``tanni``: wall time of a 2-hour session of 100 cells (fit and energy).

    python bench/bench_fit_activity.py --parts ring,nocov --seeds 3 --out results.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

from neurodyn.datasets import identity_shuffled, ring_activity, time_shifted, torus_activity
from neurodyn.datasets.trajectories import rat_trajectory
from neurodyn.inference import fit_activity
from neurodyn.inference.decode import wrapped


def aligned(est, true, reflect=False):
    """Per-sample error after the best global rotation (and reflection when allowed)."""
    best = None
    for sign in ((1, -1) if reflect else (1,)):
        d = wrapped(sign * est - true)
        err = np.abs(wrapped(d - np.angle(np.mean(np.exp(1j * d)))))
        if best is None or np.median(err) < np.median(best):
            best = err
    return best


def ring_part(seeds, tr):
    out = []
    for seed in range(seeds):
        d = ring_activity(trajectory=tr, seed=seed)
        t0 = time.perf_counter()
        fit = fit_activity(d.counts, d.dt, "ring", d.heading, seed=seed)
        row = {"seed": seed, "seconds": time.perf_counter() - t0, "attractor": fit.attractor,
               "betti": list(fit.betti),
               "angle_error_rad": float(np.median(aligned(fit.cells.preferred,
                                                          d.truth.preferred))),
               "cv_decoding_error_deg": math.degrees(fit.cv_error),
               "rates": {n: [float(r), float(lo), float(hi), t]
                         for n, r, lo, hi, t in zip(fit.rates.names, fit.rates.rate,
                                                    fit.rates.low, fit.rates.high,
                                                    list(d.truth.mode_rates) + [0.0],
                                                    strict=True)},
               "fraction_in_modes": fit.rates.fraction,
               "D": [fit.diffusion.D, fit.diffusion.low, fit.diffusion.high,
                     d.truth.diffusion], "kappa": fit.kappa}
        row["rate_ratio"] = [r[0] / r[3] for r in list(row["rates"].values())[:3]]
        row["rates_within_10pct"] = [abs(q - 1) <= 0.1 for q in row["rate_ratio"]]
        row["rates_in_interval"] = [r[1] <= r[3] <= r[2] for r in list(row["rates"].values())[:3]]
        row["D_in_interval"] = fit.diffusion.low <= d.truth.diffusion <= fit.diffusion.high
        if seed == 0:
            from neurodyn.inference.energy import learn_energy

            t0 = time.perf_counter()
            _, info = learn_energy(fit, n=64, seed=0)
            row["energy"] = {k: v for k, v in info.items() if k != "config"}
            row["energy_seconds"] = time.perf_counter() - t0
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def nocov_part(seeds, tr):
    out = []
    for seed in range(seeds):
        d = ring_activity(trajectory=tr, seed=seed)
        fit = fit_activity(d.counts, d.dt, "ring", None, seed=seed)
        err = aligned(fit.coordinate, d.heading, reflect=True)
        row = {"seed": seed, "attractor": fit.attractor, "betti": list(fit.betti),
               "decoding_error_deg_aligned": math.degrees(float(np.median(err))),
               "rates": fit.rates.rate.tolist()}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def torus_part(seeds, tr):
    out = []
    for seed in range(seeds):
        d = torus_activity(trajectory=tr, seed=seed)
        t0 = time.perf_counter()
        fit = fit_activity(d.counts, d.dt, "torus", d.position, seed=seed)
        e = wrapped(fit.cells.preferred - d.truth.preferred)
        e = wrapped(e - np.angle(np.mean(np.exp(1j * e), axis=0)))
        row = {"seed": seed, "seconds": time.perf_counter() - t0, "attractor": fit.attractor,
               "failed": fit.failed, "betti": list(fit.betti), "lattice": fit.lattice,
               "true_lattice": [d.truth.spacing, d.truth.orientation],
               "phase_error_rad": float(np.median(np.hypot(e[:, 0], e[:, 1]))),
               "cv_decoding_error_m": fit.cv_error,
               "rates": fit.rates.rate.tolist(), "true_rates": list(d.truth.mode_rates),
               "rates_interval": [fit.rates.low.tolist(), fit.rates.high.tolist()],
               "fraction_in_modes": fit.rates.fraction,
               "D": None if fit.diffusion is None else [fit.diffusion.D, fit.diffusion.low,
                                                        fit.diffusion.high, d.truth.diffusion]}
        true = np.r_[d.truth.mode_rates[0], [d.truth.mode_rates[1]] * 3]
        row["rate_ratio"] = (fit.rates.rate / true).tolist()
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def controls_part(seeds, tr):
    out = {"time-shifted": [], "identity-shuffled": []}
    for seed in range(seeds):
        d = ring_activity(trajectory=tr, seed=100 + seed)
        for name, control in (("time-shifted", time_shifted),
                              ("identity-shuffled", identity_shuffled)):
            fit = fit_activity(control(d.counts, seed=seed), d.dt, "ring", d.heading,
                               seed=seed)
            out[name].append({"seed": seed, "attractor": fit.attractor, "failed": fit.failed})
            print(json.dumps({name: out[name][-1]}), flush=True)
    return {k: {"false": sum(not r["attractor"] for r in v), "of": len(v), "runs": v}
            for k, v in out.items()}


def ff_part(seeds, tr):
    out = []
    for seed in range(seeds):
        rec = ring_activity(trajectory=tr, seed=seed)
        ff = ring_activity(trajectory=tr, seed=seed, recurrent=False)
        fr = fit_activity(rec.counts, rec.dt, "ring", rec.heading, seed=seed, topology=False)
        ff_fit = fit_activity(ff.counts, ff.dt, "ring", ff.heading, seed=seed, topology=False)
        row = {"seed": seed, "recurrent_fraction": fr.rates.fraction,
               "recurrent_significant": fr.rates.significant.tolist(),
               "ff_fraction": ff_fit.rates.fraction,
               "ff_significant": ff_fit.rates.significant.tolist(),
               "ff_attractor": ff_fit.attractor, "ff_failed": ff_fit.failed}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def tanni_part():
    """Wall and CPU seconds (``time.process_time``: every thread of this process) of the fit
    and of the energy, with the load average: on shared cores wall time measures the others."""
    tr = rat_trajectory("tanni", dt=0.02)
    d = ring_activity(cells=100, recorded=100, trajectory=tr, seed=0)
    t0, c0 = time.perf_counter(), time.process_time()
    fit = fit_activity(d.counts, d.dt, "ring", d.heading)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    from neurodyn.inference.energy import learn_energy

    t0, c0 = time.perf_counter(), time.process_time()
    learn_energy(fit, n=64)
    true = np.array(d.truth.mode_rates)
    row = {"source": tr.source, "bins": int(d.counts.shape[0]), "cells": 100,
           "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu,
           "energy_seconds": time.perf_counter() - t0,
           "energy_cpu_seconds": time.process_time() - c0, "load_average": os.getloadavg(),
           "attractor": fit.attractor, "cv_decoding_error_deg": math.degrees(fit.cv_error),
           "rates": fit.rates.rate.tolist(), "true_rates": true.tolist(),
           "rate_ratio": (fit.rates.rate[:3] / true).tolist(),
           "rates_interval": [fit.rates.low.tolist(), fit.rates.high.tolist()],
           "D": [fit.diffusion.D, fit.diffusion.low, fit.diffusion.high]}
    print(json.dumps(row), flush=True)
    return row


PARTS = {"ring": ring_part, "nocov": nocov_part, "torus": torus_part,
         "controls": controls_part, "ff": ff_part}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="ring,nocov,torus,controls,ff,tanni")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--control-seeds", type=int, default=10)
    p.add_argument("--out", default=None, help="JSON file of every number")
    args = p.parse_args(argv)
    tr = rat_trajectory("sargolini", dt=0.02)
    results = {"trajectory": tr.source}
    for part in args.parts.split(","):
        if part == "tanni":
            results[part] = tanni_part()
        else:
            seeds = args.control_seeds if part == "controls" else args.seeds
            results[part] = PARTS[part](seeds, tr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1, default=float)
    return results


if __name__ == "__main__":
    main()
