"""SEAL on a real recording: 19 head-direction cells of the mouse anterodorsal thalamus.

The session of Peyrache et al. (2015, Nat. Neurosci. 18: 569), spike counts in 10 ms bins:
36 min awake with the heading, 145 min of slow-wave sleep (``../shared/data/
adn_hd_wake_sws.npz`` beside the repository, or ``$NEURODYN_ADN``). The first 75% of wake fits
the cells (:func:`neurodyn.inference.fit_activity`), the last 25% is decoded held out, the SWS
is decoded with the wake fit as evidence that the ring persists without its input, and the
verdict is given three times: without sleep, with the SWS, and with the SWS with every cell
rolled in time (the control whose co-firing is gone). ``--quick`` uses 20 minutes of SWS.

Figures: tuning curves with the fitted profile, held-out decoding against the heading, the
activity's cloud in wake and sleep, sleep's decoded trajectory beside the rolled control, and
the verdict.

Usage: python demos/real_recording.py [--out DIR] [--quick] [--seed S]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from _models import demo_parser, written

from _runkit.timing import Stopwatch
from neurodyn.inference import fit_activity
from neurodyn.inference.verdict.sleep import rolled, sleep_decoding
from neurodyn.io import write_json
from neurodyn.plotting import save_figure
from neurodyn.plotting.recordings import (
    plot_decoded,
    plot_embedding,
    plot_sleep,
    plot_tuning,
    plot_verdict,
)

HERE = Path(__file__).resolve().parent

DATA = Path(os.environ.get("NEURODYN_ADN", HERE.parents[1] / "shared" / "data" /
                           "adn_hd_wake_sws.npz"))


def _fits(args, wake, heading, sws, dt):
    if args.quick:
        sws = sws[: int(20 * 60 / dt)]
    control = rolled(sws, args.seed + 1, int(10 / dt))
    fit = fit_activity(wake, dt, "ring", heading, sleep=[sws], hold_out=0.25, seed=args.seed)
    wake_only = fit_activity(wake, dt, "ring", heading, hold_out=0.25, seed=args.seed)
    fitted = wake[: fit.reference.shape[0]]
    control_sleep = sleep_decoding(fit.cells, "ring", fitted, [control], dt, seed=args.seed)
    return fit, wake_only, control_sleep, sws


def _figures(out, fit, control_sleep, wake, sws, dt):
    fitted = wake[: fit.reference.shape[0]]
    per = int(round(fit.sleep.window_s / dt))
    figures = {"tuning.png": plot_tuning(fit),
               "decoded.png": plot_decoded(fit.held_out_decoded, fit.held_out_reference, dt),
               "embedding.png": plot_embedding(fitted, dt, fit.reference, sws,
                                               np.repeat(fit.sleep.decoded[0], per)),
               "sleep.png": plot_sleep(fit.sleep),
               "verdict.png": plot_verdict(fit.verdict)}
    for name, fig in figures.items():
        save_figure(fig, out / name)
    return list(figures)


def _tests(fit):
    return {k: {"status": t.status, "statistic": t.statistic, "p_value": t.p_value,
                "interval": t.interval} for k, t in fit.tests.items()}


def main(argv=None):
    p = demo_parser(__doc__, "real_recording", cache=False)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not DATA.is_file():
        metrics = {"skipped": f"no recording at {DATA} (set NEURODYN_ADN)"}
        write_json(metrics, out / "metrics.json")
        _section(out, metrics, [], argv)
        print(written(out))
        return metrics
    clock = Stopwatch()
    d = np.load(DATA)
    wake, heading, sws, dt = (d["wake_counts"].astype(float), d["wake_heading"],
                              d["sws_counts"].astype(float), float(d["dt"]))
    fit, wake_only, control_sleep, sws = _fits(args, wake, heading, sws, dt)
    figures = _figures(out, fit, control_sleep, wake, sws, dt)
    save_figure(plot_sleep(control_sleep), out / "sleep_rolled.png")
    figures.append("sleep_rolled.png")
    metrics = {"cells": int(wake.shape[1]), "wake_s": wake.shape[0] * dt,
               "sws_s": sws.shape[0] * dt, "held_out": fit.held_out,
               "drift": _tests(fit)["drift"], "verdict": {
                   "with SWS": {"attractor": fit.attractor, "reason": fit.verdict.reason,
                                "tests": _tests(fit)},
                   "without sleep": {"attractor": wake_only.attractor,
                                     "reason": wake_only.verdict.reason},
                   "rolled SWS": {e.name: {"status": e.status, "statistic": e.statistic,
                                           "p_value": e.p_value}
                                  for e in control_sleep.evidence}},
               "sleep_steps_deg": {"SWS": fit.sleep.step_deg,
                                   "rolled": fit.sleep.rolled_step_deg},
               "cpu_seconds": clock.cpu_s}
    write_json(metrics, out / "metrics.json")
    _section(out, metrics, figures, argv)
    print(written(out))
    return metrics


def _section(out, m, figures, argv):
    from page import Section, write_section

    command = "python demos/real_recording.py " + " ".join(argv if argv is not None
                                                           else sys.argv[1:])
    if "skipped" in m:
        write_section(out, Section("SEAL on a real recording (ADn, 19 cells)", m["skipped"],
                                   command=command))
        return
    v = m["verdict"]
    drift = m["drift"]
    write_section(out, Section(
        title="SEAL on a real recording: 19 head-direction cells of the anterodorsal thalamus",
        description=("Peyrache et al. 2015: the first 75% of wake fits the cells, the last 25% "
                     "is decoded held out; the slow-wave sleep, decoded with the wake fit, is "
                     "the evidence that the ring persists without its input, against the same "
                     "sleep with every cell rolled in time."),
        figures=figures,
        metrics={"held-out decoding (deg, 50 ms)": m["held_out"]["median_error_deg"],
                 "D about the heading [95%] (rad^2/s)": [drift["statistic"], *drift["interval"]],
                 "attractor without sleep": str(v["without sleep"]["attractor"]),
                 "attractor with SWS": str(v["with SWS"]["attractor"]),
                 "sleep co-firing r (SWS)": v["with SWS"]["tests"]["sleep co-firing"][
                     "statistic"],
                 "sleep co-firing r (rolled SWS)": v["rolled SWS"]["sleep co-firing"][
                     "statistic"],
                 "sleep step (deg): SWS / rolled": [m["sleep_steps_deg"]["SWS"],
                                                    m["sleep_steps_deg"]["rolled"]],
                 "cpu seconds": m["cpu_seconds"]},
        command=command))


if __name__ == "__main__":
    main()
