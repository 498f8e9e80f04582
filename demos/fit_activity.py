"""SEAL from recorded activity: a head-direction ring found, measured and judged from spikes.

Ground truth (:mod:`neurodyn.datasets`): a ring attractor driven by the head direction of the
real Sargolini trajectory (RatInABox's wheel; 600 s, 180 s with --quick), 71 of 100 cells with
their own gains and baselines, Poisson counts in 20 ms bins; its normal modes relax at the
classic CANN's rates 0.625 / 1 / 1.315 per tau (tau = 0.1 s) and its bump diffuses about the
heading with D = 0.001 rad^2/s. :func:`neurodyn.inference.core.fit_activity` places the cells,
decodes the bump, measures the rates and D and gives the verdict; the same data without the
heading; the controls (cells shifted in time, identities shuffled, and feed-forward tuning with
the same curves and no recurrence). Figures: tuning curves, the ring in the activity's leading
principal components, fitted against true rates and D, decoding error over time, the controls.

Usage: python demos/fit_activity.py [--out DIR] [--quick] [--seed S]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from _models import demo_parser, written
from matplotlib.figure import Figure

from _runkit.files import atomic_save_figure
from _runkit.timing import Stopwatch
from neurodyn.datasets import identity_shuffled, ring_activity, time_shifted
from neurodyn.datasets.trajectories import rat_trajectory
from neurodyn.inference import fit_activity, profile_values, smoothed_activity
from neurodyn.inference.decode import wrapped
from neurodyn.io import write_json

HERE = Path(__file__).resolve().parent


def _fits(args):
    # --quick keeps every cell: with 40 cells for 120 s the residual's lag-1 autocovariance
    # is about two standard errors above zero, too few to call its fluctuations measured
    tr = rat_trajectory("sargolini", dt=0.02, duration=180.0 if args.quick else None)
    kw = {}
    d = ring_activity(trajectory=tr, seed=args.seed, **kw)
    ff = ring_activity(trajectory=tr, seed=args.seed, recurrent=False, **kw)
    fits = {"data": fit_activity(d.counts, d.dt, "ring", d.heading, seed=args.seed),
            "no covariate": fit_activity(d.counts, d.dt, "ring", None, seed=args.seed)}
    for name, control in (("time-shifted", time_shifted), ("identity-shuffled",
                                                             identity_shuffled)):
        fits[name] = fit_activity(control(d.counts, seed=args.seed), d.dt, "ring", d.heading,
                                  seed=args.seed)
    fits["feed-forward"] = fit_activity(ff.counts, ff.dt, "ring", ff.heading, seed=args.seed)
    return tr, d, fits


def _tuning_figure(d, fit):
    fig = Figure(figsize=(9, 3.4))
    ax, bx = fig.subplots(1, 2)
    c = fit.cells
    order = np.argsort(c.preferred)[:: max(1, c.preferred.size // 6)]
    grid = np.linspace(0, 2 * np.pi, 200)
    for i in order:
        line = ax.plot(c.centres, c.curves[i], ".", ms=3)[0]
        ax.plot(grid, c.baseline[i] + c.gain[i] * profile_values(c.profile, grid - c.preferred[i]),
                color=line.get_color(), lw=1)
    ax.set(xlabel="heading (rad)", ylabel="rate (Hz)", title="tuning curves and the fit")
    phi = np.linspace(-np.pi, np.pi, 200)
    bx.plot(phi, profile_values(c.profile, phi), label="fitted profile")
    bx.plot(phi, d.truth.profile(phi), "--", label="true bump")
    bx.set(xlabel="angle from the preferred (rad)", title="shared profile")
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _embedding_figure(d, fits):
    x = smoothed_activity(d.counts, d.dt, 0.1)
    idx = np.linspace(0, x.shape[0] - 1, 3000).astype(int)
    xc = x[idx] - x[idx].mean(0)
    y = xc @ np.linalg.svd(xc, full_matrices=False)[2][:2].T
    fig = Figure(figsize=(9, 3.6))
    ax, bx = fig.subplots(1, 2)
    ax.scatter(y[:, 0], y[:, 1], c=d.heading[idx], cmap="hsv", s=3)
    ax.set(xlabel="PC 1", ylabel="PC 2", title=f"activity, Betti {fits['data'].betti}")
    nc = fits["no covariate"].coordinate[idx]
    bx.plot(d.heading[idx], nc, ".", ms=2)
    bx.set(xlabel="true heading (rad)", ylabel="decoded without heading (rad)",
           title="ring found from the activity alone")
    fig.tight_layout()
    return fig


def _rates_figure(d, fit, ff):
    fig = Figure(figsize=(9, 3.4))
    ax, bx = fig.subplots(1, 2)
    true = list(d.truth.mode_rates)
    k = np.arange(len(true))
    r = fit.rates
    ax.errorbar(k - 0.1, r.rate[: k.size], yerr=[r.rate[: k.size] - r.low[: k.size],
                                                 r.high[: k.size] - r.rate[: k.size]],
                fmt="o", label="fitted (95%)")
    ax.plot(k + 0.1, true, "s", label="ground truth")
    ffr = np.where(ff.rates.significant, ff.rates.rate, np.nan)[: k.size]
    ax.plot(k, ffr, "x", label=f"feed-forward control ({int(np.isfinite(ffr).sum())} modes "
            "measurable)")
    ax.set(xticks=k, xticklabels=r.names[: k.size], ylabel="normal relaxation rate (1/s)",
           title="relaxation rate per mode")
    ax.legend(fontsize=8)
    D = fit.diffusion
    bx.errorbar([0], [D.D], yerr=[[D.D - D.low], [D.high - D.D]], fmt="o", label="fitted (95%)")
    bx.axhline(d.truth.diffusion, ls="--", color="k", label="ground truth")
    bx.set(xticks=[], ylabel="D (rad^2/s)", title="diffusion about the heading")
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _error_figure(tr, d, fit):
    fig = Figure(figsize=(9, 3.4))
    ax, bx = fig.subplots(1, 2)
    err = np.degrees(fit.errors)
    w = int(10 / d.dt)
    roll = np.array([np.nanmedian(err[i:i + w]) for i in range(0, err.size - w, w)])
    ax.plot(np.arange(roll.size) * 10, roll)
    ax.set(xlabel="time (s)", ylabel="held-out error (deg), 10 s medians",
           title=f"median {math.degrees(fit.cv_error):.1f} deg")
    n = int(30 / d.dt)
    bx.plot(tr.t[:n], d.heading[:n], ".", ms=2, label="heading")
    bx.plot(tr.t[:n], fit.coordinate[:n], ".", ms=2, label="decoded")
    bx.set(xlabel="time (s)", ylabel="rad", title="first 30 s")
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _controls_figure(fits):
    names = ["data", "time-shifted", "identity-shuffled", "feed-forward"]
    fig = Figure(figsize=(9, 3.2))
    ax, bx = fig.subplots(1, 2)
    ax.bar(names, [float(fits[n].tests["fluctuations"].statistic) for n in names])
    ax.axhline(3.0, ls="--", color="k")
    ax.set(ylabel="coherent excess (standard errors)",
           title="fluctuations test (> 3: coherent beyond a gain)")
    bx.bar(names, [math.degrees(fits[n].cv_error) for n in names])
    bx.axhline(30, ls="--", color="k")
    bx.set(ylabel="held-out error (deg)", title="decoding test (< 30 deg)")
    for a in (ax, bx):
        a.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.tight_layout()
    return fig


def _metrics(tr, d, fits, energy):
    fit = fits["data"]
    err = wrapped(fit.cells.preferred - d.truth.preferred)
    err = np.abs(wrapped(err - np.angle(np.mean(np.exp(1j * err)))))
    nc = wrapped(fits["no covariate"].coordinate - d.heading)
    nc_r = wrapped(-fits["no covariate"].coordinate - d.heading)
    align = min(np.median(np.abs(wrapped(a - np.angle(np.mean(np.exp(1j * a))))))
                for a in (nc, nc_r))
    return {"trajectory": tr.source, "cells": int(d.counts.shape[1]),
            "seconds_of_data": float(tr.t[-1] + d.dt),
            "preferred_angle_error_rad": float(np.median(err)),
            "cv_decoding_error_deg": math.degrees(fit.cv_error),
            "no_covariate_error_deg": math.degrees(float(align)),
            "rates": fit.rates.to_dict(), "true_rates": list(d.truth.mode_rates),
            "D": fit.diffusion.to_dict(), "true_D": d.truth.diffusion,
            "verdicts": {n: {"attractor": f.attractor, "tuned": f.tuned, "failed": f.failed,
                             "betti": list(f.betti), "reason": f.verdict.reason}
                         for n, f in fits.items()},
            "energy": energy}


def main(argv=None):
    args = demo_parser(__doc__, "fit_activity", cache=False).parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    clock = Stopwatch()
    tr, d, fits = _fits(args)
    energy = None
    if not args.quick:
        from neurodyn.inference.energy import learn_energy

        _, info = learn_energy(fits["data"], n=64, seed=args.seed)
        energy = {k: v for k, v in info.items() if k != "config"}
    figures = {"tuning_curves.png": _tuning_figure(d, fits["data"]),
               "embedding.png": _embedding_figure(d, fits),
               "rates.png": _rates_figure(d, fits["data"], fits["feed-forward"]),
               "decoding_error.png": _error_figure(tr, d, fits["data"]),
               "controls.png": _controls_figure(fits)}
    for name, fig in figures.items():
        atomic_save_figure(fig, out / name, dpi=110)
    metrics = _metrics(tr, d, fits, energy)
    metrics["seconds"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    _section(out, metrics, list(figures), argv)
    print(written(out))
    return metrics


def _section(out, m, figures, argv):
    from page import Section, write_section

    rates = m["rates"]["modes"]
    write_section(out, Section(
        title="SEAL from recorded activity: a head-direction ring from spikes",
        description=("A ring attractor (normal rates 0.625 / 1 / 1.315 per tau, D about the "
                     f"heading) driven by {m['trajectory']}, {m['cells']} cells, Poisson counts; "
                     "cells placed, bump decoded, rates and D measured and judged against the "
                     "ground truth; controls: time-shifted, identity-shuffled, feed-forward."),
        figures=figures,
        metrics={"preferred angles: median error (rad)": m["preferred_angle_error_rad"],
                 "held-out decoding (deg)": m["cv_decoding_error_deg"],
                 "without heading, after alignment (deg)": m["no_covariate_error_deg"],
                 "rates fitted (1/s)": [round(v["rate"], 2) for v in rates.values()][:3],
                 "rates true (1/s)": [round(v, 2) for v in m["true_rates"]],
                 "D fitted [95%]": [round(m["D"][k], 5) for k in ("D", "low", "high")],
                 "D true": m["true_D"],
                 "attractor: data / shifted / shuffled / feed-forward":
                     [str(m["verdicts"][n]["attractor"]) for n in
                      ("data", "time-shifted", "identity-shuffled", "feed-forward")],
                 "seconds": round(m["seconds"], 1)},
        command="python demos/fit_activity.py " + " ".join(argv if argv is not None
                                                           else sys.argv[1:])))


if __name__ == "__main__":
    main()
