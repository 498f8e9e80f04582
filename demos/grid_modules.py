"""Grid cells under noise: joint decoding of three modules, noisy rate maps, shuffled thresholds.

1. Joint decoding: three modules (spacings 0.4, 0.56, 0.784 m; ratio 1.4) run side by side on a
   learned hex torus while an agent explores a 2 m box; position is decoded at every sample from
   the three modules' phases alone (likelihood over a 1 cm grid of positions, Newton refinement;
   no start position), for noise sigma on u in {0, 0.01, 0.03, 0.1}. The code's own range: the
   same decoder on ideal phases with Gaussian phase noise.
2. Noisy rate maps: one module (0.5 m) in a 1 m box with sigma in {0, 0.25, 0.5, 1, 2}; the
   panel's maps smoothed with a Gaussian of 1 bin (5 cm), gridness against a time-shift null
   (95th percentile, pooled); the square-lattice torus as the control that must fail.
3. The integration horizon: time until the path-integration error (from the known start) first
   reaches 5 cm, per noise level. An NWB file of the noise-free run is written when pynwb is
   installed.

Usage: python demos/grid_modules.py [--out DIR] [--quick] [--models DIR]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import torch
from _models import cache_dir, demo_parser, fitted, written

from _runkit.files import atomic_save_figure
from _runkit.timing import Stopwatch
from neurodyn.analysis.drift import integration_horizon
from neurodyn.fitting.core import FitConfig
from neurodyn.io import write_json
from neurodyn.plotting.ratemaps import plot_rate_maps
from neurodyn.plotting.spatial import plot_against_noise, plot_null
from neurodyn.spatial.agent import Box, generate_trajectory
from neurodyn.spatial.decoding import code_error, decode_position
from neurodyn.spatial.gridcells.run import run_grid_cells
from neurodyn.spatial.gridnull import SMOOTHING_BINS, shuffled_gridness
from neurodyn.spatial.ratemaps import rate_maps

HERE = Path(__file__).resolve().parent

SPACINGS = (0.4, 0.56, 0.784)


def _run(net, traj, modules, noise, cells, seed):
    return run_grid_cells(net, traj, modules=list(modules), cells=cells, seed=seed,
                          method="euler", noise=noise, keep_rates=True)


def joint_decoding(net, q: bool, seed: int, out: Path) -> dict:
    traj = generate_trajectory(20.0 if q else 120.0, 0.02, Box(2.0), seed=seed + 3)
    noises = (0.0, 0.03) if q else (0.0, 0.01, 0.03, 0.1)
    rows = []
    for noise in noises:
        res = _run(net, traj, SPACINGS, noise, 4, seed)
        ph = np.stack([m.phases for m in res.modules], axis=1)
        err = np.linalg.norm(decode_position(ph, SPACINGS, box=Box(2.0), resolution=0.01)
                             .position - traj.position, axis=1)
        rows.append({"noise": noise, "median_error_m": float(np.median(err)),
                     "p95_error_m": float(np.quantile(err, 0.95)),
                     "final_error_m": float(err[-1]),
                     "catastrophic_fraction": float(np.mean(err > SPACINGS[0] / 2)),
                     "path_integration_final_error_m": [float(m.error[-1])
                                                        for m in res.modules]})
        if noise == 0 and importlib.util.find_spec("pynwb") is not None:
            from neurodyn.interop import read_nwb, write_nwb

            m0 = res.modules[0]
            path = write_nwb(out / "joint_noise0.nwb", traj.t, traj.position, m0.rates,
                             m0.maps.maps, m0.maps.x_edges, "three grid modules, 2 m box")
            back = read_nwb(path)
            rows[-1]["nwb_round_trip_equal"] = bool(
                np.array_equal(back["position"], traj.position)
                and np.array_equal(back["rates"], m0.rates)
                and np.array_equal(back["rate_maps"], m0.maps.maps, equal_nan=True))
    code = [code_error(SPACINGS, box=Box(2.0), phase_noise=s, samples=300 if q else 2000,
                       seed=seed) for s in ((0.0, 0.1, 0.3) if q else
                                            (0.0, 0.05, 0.1, 0.2, 0.3, 0.4))]
    fig = plot_against_noise([r["noise"] for r in rows],
                             {"median": [100 * r["median_error_m"] for r in rows],
                              "95th percentile": [100 * r["p95_error_m"] for r in rows]},
                             "decoding error (cm)", "3 modules, 2 m box, no start position")
    atomic_save_figure(fig, out / "joint_decoding.png", dpi=110)
    fig = plot_against_noise([c["phase_noise"] for c in code],
                             {"median (cm)": [100 * c["median_error_m"] for c in code],
                              "catastrophic (%)": [100 * c["catastrophic_fraction"]
                                                   for c in code]},
                             "median error (cm); catastrophic errors (% of positions)",
                             "the code alone: ideal phases + phase noise")
    fig.axes[0].set_xlabel("phase noise s.d. (rad)")
    atomic_save_figure(fig, out / "code_range.png", dpi=110)
    return {"network": rows, "code": code}


def noisy_maps(hexnet, sqnet, q: bool, seed: int, out: Path) -> dict:
    dt = 0.02
    traj = generate_trajectory(30.0 if q else 180.0, dt, Box(1.0), seed=seed)
    noises = (0.0, 0.2) if q else (0.0, 0.25, 0.5, 1.0, 2.0)
    cells = 8 if q else 32
    shuffles = 3 if q else 10
    shift = 5.0 if q else 20.0
    rows, classes = [], {}
    for noise in noises:
        res = _run(hexnet, traj, (0.5,), noise, cells, seed)
        m = res.modules[0]
        c = shuffled_gridness(traj.position, m.rates, dt, Box(1.0), smoothing=SMOOTHING_BINS,
                              shuffles=shuffles, min_shift=shift, seed=seed)
        hz = integration_horizon(m.error[:, None], traj.t, 0.05)
        rows.append({"noise": noise, **c.summary(), "final_error_m": float(m.error[-1]),
                     "time_to_5cm_s": float(hz.median_time)})
        classes[noise] = c
        maps = rate_maps(traj.position, m.rates, Box(1.0), 20, smoothing=SMOOTHING_BINS)
        fig = plot_rate_maps(maps, cells=np.arange(min(8, cells)), ncols=8)
        fig.suptitle(f"smoothed rate maps, noise sigma = {noise:g}")
        atomic_save_figure(fig, out / f"ratemaps_noise_{noise:g}.png", dpi=90)
    res = _run(sqnet, traj, (0.5,), 0.0, cells, seed)
    sq = shuffled_gridness(traj.position, res.modules[0].rates, dt, Box(1.0),
                           shuffles=shuffles, min_shift=shift, seed=seed)
    fig = plot_against_noise([r["noise"] for r in rows],
                             {"median gridness": [r["gridness_median"] for r in rows],
                              "shuffled 95th percentile": [r["threshold"] for r in rows],
                              "fraction above it": [r["fraction_grid"] for r in rows]},
                             "gridness / fraction", "hex torus, 1 m box: gridness vs noise")
    atomic_save_figure(fig, out / "gridness_vs_noise.png", dpi=110)
    atomic_save_figure(plot_null(classes[noises[0]], label="hex, no noise"), out / "null_hex.png",
                       dpi=110)
    atomic_save_figure(plot_null(sq, label="square control"), out / "null_square.png", dpi=110)
    return {"hex": rows, "square_control": sq.summary()}


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns its metrics."""
    p = demo_parser(__doc__, "grid_modules")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = cache_dir(args.cache, out)
    steps = 60 if args.quick else 400
    n = (12, 12) if args.quick else (16, 16)
    hexnet, _ = fitted(FitConfig(geometry="torus", lattice="hex", n=n, steps=steps, seed=0),
                       cache)
    sqnet, _ = fitted(FitConfig(geometry="torus", lattice="square", n=n, steps=steps, seed=0),
                      cache)
    metrics = {"joint": joint_decoding(hexnet, args.quick, args.seed, out),
               "maps": noisy_maps(hexnet, sqnet, args.quick, args.seed, out)}
    metrics["seconds"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    print(written(out))
    _section(out, metrics, argv)
    return metrics


def _section(out: Path, m: dict, argv) -> None:
    from page import Section, write_section

    net = m["joint"]["network"]
    hexr = m["maps"]["hex"]
    figures = ["joint_decoding.png", "code_range.png", "gridness_vs_noise.png", "null_hex.png",
               "null_square.png"] + sorted(p.name for p in out.glob("ratemaps_noise_*.png"))
    write_section(out, Section(
        title="Grid modules under noise: joint decoding, noisy rate maps, shuffled thresholds",
        description=("Position decoded from three modules' phases alone (2 m box, no start "
                     "position) as noise on u rises, and the code's own range; gridness of "
                     "smoothed rate maps (Gaussian, 1 bin = 5 cm) against a time-shift null "
                     "(95th percentile) as noise rises, with the square torus as the control."),
        figures=[f for f in figures if (out / f).exists()],
        metrics={"median decoding error, no noise (cm)": 100 * net[0]["median_error_m"],
                 "median decoding error by noise (cm)":
                     {r["noise"]: round(100 * r["median_error_m"], 3) for r in net},
                 "median gridness by noise": {r["noise"]: r["gridness_median"] for r in hexr},
                 "fraction above shuffled threshold by noise":
                     {r["noise"]: r["fraction_grid"] for r in hexr},
                 "shuffled threshold (no noise)": hexr[0]["threshold"],
                 "square control: fraction above threshold":
                     m["maps"]["square_control"]["fraction_grid"],
                 "time to 5 cm error by noise (s)": {r["noise"]: r["time_to_5cm_s"]
                                                     for r in hexr},
                 "seconds": round(m["seconds"], 1)},
        command="python demos/grid_modules.py " + " ".join(argv if argv is not None
                                                           else sys.argv[1:])))


if __name__ == "__main__":
    main()
