"""Acceptance grid of the target profiles: fits of the learned-template family, measured.

For every geometry (ring of 128, 32 x 32 hex torus), profile (von-mises:5, flat-top:0.6,
asymmetric:0.5) and kappa (0.5, 2, 4): fit (:func:`neurodyn.fitting.core.fit`, family
``template``, default capacity) and measure with the library's attraction report
(:func:`neurodyn.analysis.attraction.attraction_report`: normal spectrum, neutral count, field
error on perturbations of relative size 0.03-0.3, simulated decay rates of white, smooth, odd and
amplitude perturbations), the fixed-point residual and the resting bump's correlation with the
requested rates (:func:`neurodyn.experiments.capacity.resting_correlation`). Cells run in
parallel processes, one torch thread each. ``--exact`` writes the closed-form solution
(template ``kappa u*``, leak coefficient ``kappa - 1``) instead of fitting: what the family can
reach on the lattice, separately from what the fit learns. Each row records the fit's and the
whole cell's wall and CPU seconds and the load average (the machine may be shared).

    python bench/bench_profiles.py --out /tmp/profiles.json [--geometry ring] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor


def cell(job: tuple) -> dict:
    """Fit and measure one (geometry, profile, kappa)."""
    import torch

    torch.set_num_threads(1)
    from neurodyn.analysis.attraction import attraction_report
    from neurodyn.analysis.diagnostics import fixed_point_residual
    from neurodyn.experiments.capacity import resting_correlation
    from neurodyn.fitting.core import FitConfig, fit
    from neurodyn.fitting.plan import build_manifold, build_network

    geometry, profile, kappa, harmonics, steps, exact = job
    n = 128 if geometry == "ring" else (32, 32)
    start, cpu = time.perf_counter(), time.process_time()
    cfg = FitConfig(geometry=geometry, n=n, profile=profile, kappa=kappa, bandwidth=harmonics,
                    steps=steps, seed=0)
    if exact:
        net = build_network(cfg, build_manifold(cfg))
        with torch.no_grad():
            net.energy_fn.template.copy_(kappa * net.manifold.u0)
            net.energy_fn.leak.fill_(kappa - 1)
    else:
        net = fit(cfg, progress=False).network
    fit_s, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    rep = attraction_report(net, kappa, tol=0.05)
    ns = rep.normal_spectrum
    decay = rep.decay
    kinds = ("white", "smooth", "odd")
    decay_worst = max(abs(r - kappa) / kappa for d in (decay.early, decay.late)
                      for k, r in d.items() if k in kinds)
    out = {"geometry": geometry, "profile": profile, "kappa": kappa, "exact": exact,
           "harmonics": net.energy_fn.harmonics, "leak": float(net.energy_fn.leak),
           "spectrum_worst_relative": ns.worst_relative, "n_zero": ns.n_zero,
           "tangent": list(ns.tangent),
           "fixed_point_residual": fixed_point_residual(net),
           "field_error_max": rep.field_error_max,
           "decay_worst_relative_white_smooth_odd": decay_worst,
           "decay_worst_relative_all": rep.decay_worst_relative,
           "energy_ok": all(decay.energy_ok.values()),
           "rate_correlation": resting_correlation(net),
           "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu,
           "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
           "load_average": os.getloadavg()[0]}
    dim = 1 if geometry == "ring" else 2
    out["accepted"] = bool(out["spectrum_worst_relative"] <= 0.05
                           and out["fixed_point_residual"] <= 1e-4
                           and out["field_error_max"] <= 0.10 and decay_worst <= 0.15
                           and out["n_zero"] == dim and out["rate_correlation"] >= 0.999
                           and out["energy_ok"])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="JSON file of the rows")
    p.add_argument("--geometry", choices=("ring", "torus", "both"), default="both")
    p.add_argument("--profiles", default="von-mises:5,flat-top:0.6,asymmetric:0.5")
    p.add_argument("--kappas", default="0.5,2,4")
    p.add_argument("--harmonics", type=int, default=None, help="template capacity (default all)")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--exact", action="store_true",
                   help="the closed-form template instead of a fit")
    args = p.parse_args(argv)
    geoms = ("ring", "torus") if args.geometry == "both" else (args.geometry,)
    jobs = [(g, prof, float(k), args.harmonics, args.steps, args.exact) for g in geoms
            for prof in args.profiles.split(",") for k in args.kappas.split(",")]
    rows = []
    with ProcessPoolExecutor(args.workers) as pool:
        for row in pool.map(cell, jobs):
            rows.append(row)
            print(f"{row['geometry']:5s} {row['profile']:15s} kappa={row['kappa']:<4g} "
                  f"K={row['harmonics']:<3d} spec={row['spectrum_worst_relative']:.1e} "
                  f"zero={row['n_zero']} tangent={max(abs(t) for t in row['tangent']):.1e} "
                  f"fp={row['fixed_point_residual']:.1e} field={row['field_error_max']:.1e} "
                  f"decay={row['decay_worst_relative_white_smooth_odd']:.1e} "
                  f"corr={row['rate_correlation']:.6f} ok={row['accepted']} "
                  f"(fit {row['fit_seconds']:.0f} s, {row['fit_cpu_seconds']:.0f} s CPU; "
                  f"all {row['seconds']:.0f} s, {row['cpu_seconds']:.0f} s CPU; "
                  f"load {row['load_average']:.1f})", flush=True)
            with open(args.out, "w") as f:
                json.dump(rows, f, indent=1)
    print(f"{sum(r['accepted'] for r in rows)} of {len(rows)} cells meet every criterion")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
