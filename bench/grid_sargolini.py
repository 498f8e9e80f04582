"""Grid cells on Sargolini's real 600 s session (1 x 1 m): the decoding error and the gridness of
every sampled cell against its own shuffled null, on a hex torus and on the square-lattice control.

Three runs, each timed by CPU time (``time.process_time``: the measure that survives a loaded
machine) beside the wall time:

- ``hex``: one module (0.4 m), no noise: the path-integration error, and each of the 16 sampled
  cells' smoothed-map gridness against the 95th percentile of its own 20 time-shifted maps (and
  against the pooled threshold);
- ``square``: the same on a square-lattice torus (the control: no cell should pass);
- ``noisy``: three modules (0.4, 0.56, 0.784 m) whose noise gives each module's position error
  a diffusion of ``D`` cm^2/s (default 1), with the wall cue within 5 cm of a wall, decoded
  together without the start position (:mod:`neurodyn.spatial.gridcells.joint`).

    python bench/grid_sargolini.py HEX_MODEL_DIR SQUARE_MODEL_DIR [OUT.json] [D]
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

from neurodyn.io import load_model
from neurodyn.spatial.gridcells.calibration import noise_for_diffusion
from neurodyn.spatial.gridcells.recorded import ARENAS, recorded_trajectory
from neurodyn.spatial.gridcells.run import run_grid_cells


def _cells(cls) -> dict:
    real, own = cls.scores, cls.cell_thresholds
    above_own = np.where(np.isfinite(real), real, -np.inf) > own
    return {"cells": int(real.size), "above_own_threshold": int(above_own.sum()),
            "above_pooled_threshold": int(cls.is_grid.sum()),
            "pooled_threshold": float(cls.threshold),
            "gridness": [round(float(x), 3) for x in real],
            "own_thresholds": [round(float(x), 3) for x in own]}


def _run(net, traj, **kw) -> tuple:
    cpu, wall = time.process_time(), time.perf_counter()
    res = run_grid_cells(net, traj, cells=16, shuffles=20, seed=0, progress=False, **kw)
    return res, {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def main(hex_dir: str, square_dir: str, diffusion: float = 1.0) -> dict:
    traj, report = recorded_trajectory("sargolini", 0.02)
    out = {"tracking": report.to_dict()}
    for name, model in (("hex", hex_dir), ("square", square_dir)):
        net, _ = load_model(f"{model}/model.pt")
        res, cost = _run(net, traj, spacing=0.4)
        err = res.modules[0].error
        out[name] = {"lattice": net.geometry.lattice, **cost,
                     "median_error_m": float(np.median(err)), "max_error_m": float(err.max()),
                     "final_error_m": float(err[-1]),
                     **_cells(res.modules[0].classification)}
    net, _ = load_model(f"{hex_dir}/model.pt")
    spacings = [0.4, 0.56, 0.784]
    sigma = noise_for_diffusion(net, spacings, 1e-4 * diffusion)
    res, cost = _run(net, traj, modules=spacings, method="euler", noise=sigma,
                     boundary_cue=(1.0, 0.05), arena=ARENAS["sargolini"])
    out["noisy"] = {"diffusion_cm2_per_s": diffusion, "sigma": sigma, **cost,
                    "joint": res.metrics["joint"],
                    "module_median_error_m": [float(np.median(m.error)) for m in res.modules],
                    "fraction_grid": [float(m.classification.fraction) for m in res.modules]}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


if __name__ == "__main__":
    result = main(sys.argv[1], sys.argv[2], float(sys.argv[4]) if len(sys.argv) > 4 else 1.0)
    text = json.dumps(result, indent=1)
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as fh:
            fh.write(text)
    print(text)
