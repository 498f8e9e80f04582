"""Heterogeneous head-direction rings: disorder pins the bump and stalls slow path integration.

A ring (N = 64, or 32 with --quick) gets random per-neuron gains, thresholds and a random
symmetric interaction of the same size ``sd``
(:func:`neurodyn.dynamics.heterogeneity.heterogeneous`, seeded), for several ``sd``. Two
measurements, no noise:

1. Resting drift: bumps started at 16 evenly spaced phases relax for 200 tau (20 with --quick).
   On the homogeneous ring every phase is a fixed point and nothing moves; with disorder the
   bumps drift towards the few phases the disorder favours. Reported: RMS drift, the number of
   distinct end phases (within 0.05 rad), and the energy audit (the disorder keeps the energy
   form, so the energy must still never increase).
2. Slow path integration: a constant angular velocity of 0.01 rad / tau for the same time; the
   decoded displacement over the integrated input, from each start (1 from every start on the
   homogeneous ring). With disorder it depends on where the bump is: it stalls or runs back
   where the disorder's slope opposes the input and runs ahead where it helps.

Usage: python demos/heterogeneity.py [--out DIR] [--quick] [--cache DIR]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch
from _models import cache_dir, demo_parser, fitted, written
from matplotlib.figure import Figure

from _runkit.files import atomic_save_figure
from _runkit.timing import Stopwatch
from neurodyn.analysis.diagnostics import energy_audit
from neurodyn.analysis.drift import unwrap_track
from neurodyn.dynamics.heterogeneity import Heterogeneity, heterogeneous
from neurodyn.dynamics.inputs import Constant
from neurodyn.dynamics.simulation import simulate
from neurodyn.fitting.core import FitConfig
from neurodyn.io import write_json

HERE = Path(__file__).resolve().parent

STARTS = 16
VELOCITY = 0.01  # rad per tau
DT = 0.25  # rk4 step (tau); the drifts agree with those of a 0.1 tau step to 1e-9 rad


def _distinct(phases: np.ndarray, tol: float = 0.05) -> int:
    """Number of clusters of phases on the circle (neighbours closer than ``tol`` merge)."""
    p = np.sort(np.mod(phases, 2 * math.pi))
    gaps = np.diff(np.r_[p, p[0] + 2 * math.pi])
    return max(1, int((gaps > tol).sum()))


def measure(net, sd: float, duration: float, seed: int) -> tuple[dict, np.ndarray, np.ndarray]:
    """Resting drift and slow path integration of the ring with disorder ``sd``."""
    het = heterogeneous(net, Heterogeneity(gain_sd=sd, threshold_sd=sd, weight_sd=sd, seed=seed))
    psi0 = torch.linspace(0, 2 * math.pi, STARTS + 1, dtype=torch.float64)[:-1, None]
    u0 = net.manifold.u_star(psi0)
    rest = simulate(het, u0, duration, DT, method="rk4", save_every=8, diagnostics=False)
    track = unwrap_track(rest.decoded.numpy())[:, :, 0]
    drift = track - psi0.numpy()[None, :, 0]
    moving = simulate(het, u0, duration, DT, method="rk4", velocity=Constant(VELOCITY),
                      save_every=8, diagnostics=False)
    moved = unwrap_track(moving.decoded.numpy())[:, :, 0] - psi0.numpy()[None, :, 0]
    audit = energy_audit(rest)
    ratio = moved[-1] / (VELOCITY * duration)
    row = {"sd": sd, "rms_drift_rad": float(np.sqrt(np.mean(drift[-1] ** 2))),
           "max_drift_rad": float(np.abs(drift[-1]).max()),
           "end_phases": _distinct(track[-1]), "energy_non_increasing": audit.ok,
           "energy_max_increase": audit.max_increase,
           "speed_ratio_median": float(np.median(ratio)), "speed_ratio_min": float(ratio.min()),
           "speed_ratio_max": float(ratio.max()),
           "speed_ratio_worst_error": float(np.abs(ratio - 1).max())}
    return row, rest.t.numpy(), drift


def _figures(rows, t, drifts, out: Path) -> list[str]:
    fig = Figure(figsize=(3.2 * len(rows), 3.0), layout="constrained")
    axes = fig.subplots(1, len(rows), sharey=True)
    for ax, row, drift in zip(np.atleast_1d(axes), rows, drifts, strict=True):
        ax.plot(t, drift, lw=0.8)
        ax.set_title(f"sd = {row['sd']:g}: {row['end_phases']} end phases")
        ax.set_xlabel("time (tau)")
    np.atleast_1d(axes)[0].set_ylabel("drift from the start phase (rad)")
    fig.suptitle(f"resting bumps from {STARTS} start phases, no input, no noise")
    atomic_save_figure(fig, out / "resting_drift.png", dpi=110)

    fig = Figure(figsize=(5.6, 3.6), layout="constrained")
    ax = fig.subplots()
    sds = [r["sd"] for r in rows]
    ax.plot(sds, [r["rms_drift_rad"] for r in rows], "o-", label="RMS resting drift (rad)")
    ax.plot(sds, [r["speed_ratio_worst_error"] for r in rows], "s-",
            label=f"worst |moved / integrated - 1| at {VELOCITY} rad/tau")
    ax.set_xscale("symlog", linthresh=min(s for s in sds if s > 0))
    ax.set_xlabel("disorder sd (gain, threshold and interaction)")
    ax.legend(fontsize=8)
    ax.set_title("disorder pins the bump")
    atomic_save_figure(fig, out / "disorder_summary.png", dpi=110)
    return ["resting_drift.png", "disorder_summary.png"]


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics."""
    p = demo_parser(__doc__, "heterogeneity")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    q = args.quick
    cfg = FitConfig(geometry="ring", n=32 if q else 64, seed=0)
    net, _ = fitted(cfg, cache_dir(args.cache, out))
    sds = (0.0, 0.1) if q else (0.0, 0.01, 0.03, 0.1)
    duration = 20.0 if q else 200.0
    rows, drifts = [], []
    for sd in sds:
        row, t, drift = measure(net, sd, duration, args.seed)
        rows.append(row)
        drifts.append(drift)
    metrics = {"n": cfg.n, "duration_tau": duration, "starts": STARTS,
               "velocity_rad_per_tau": VELOCITY, "levels": rows}
    figures = _figures(rows, t, drifts, out)
    metrics["seconds"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    print(written(out))
    _section(out, metrics, figures, argv)
    return metrics


def _section(out: Path, m: dict, figures: list[str], argv) -> None:
    from page import Section, write_section

    rows = m["levels"]
    write_section(out, Section(
        title="Heterogeneous rings: disorder pins the bump",
        description=(f"A ring of N = {m['n']} with random per-neuron gains, thresholds and a "
                     "random symmetric interaction of size sd (seeded). Bumps started at "
                     f"{m['starts']} phases rest for {m['duration_tau']:g} tau without input or "
                     "noise: with disorder they drift to a few phases (the energy still never "
                     f"increases). A constant {m['velocity_rad_per_tau']} rad/tau input: "
                     "the decoded displacement over the integrated input, from each start."),
        figures=figures,
        metrics={"RMS resting drift by sd (rad)": {r["sd"]: round(r["rms_drift_rad"], 4)
                                                    for r in rows},
                 "distinct end phases by sd": {r["sd"]: r["end_phases"] for r in rows},
                 "moved / integrated by sd (min, max)":
                     {r["sd"]: [round(r["speed_ratio_min"], 3), round(r["speed_ratio_max"], 3)]
                      for r in rows},
                 "energy never increases (every sd)": all(r["energy_non_increasing"]
                                                          for r in rows),
                 "seconds": round(m["seconds"], 1)},
        command="python demos/heterogeneity.py " + " ".join(argv if argv is not None
                                                            else sys.argv[1:])))


if __name__ == "__main__":
    main()
