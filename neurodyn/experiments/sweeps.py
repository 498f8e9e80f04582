"""Parameter sweeps of the ring network: grids of independent cells for :mod:`_runkit.sweep`.

Each cell fits its own ring (its grid coordinates set the fit) and measures one experiment:

- ``kappa``: prescribed normal attraction ``kappa`` x ``n`` -> the Jacobian at the manifold
  (slowest normal rate, neutral modes) and the fixed-point residual;
- ``diffusion``: noise ``sigma`` x ``n`` -> the bump diffusion coefficient against the
  one-neuron-noise theory;
- ``drift``: constant input speed ``v`` x ``n`` -> path-integration error and the bump's mean
  drift rate relative to the input.

A cell's seed (:func:`_runkit.sweep.cell_seed` of its coordinates) seeds its fit and its
simulation, so the table does not depend on how many workers ran it. An optional ``device``
parameter (``cpu``, ``cuda``; default ``cpu``) is where the experiments simulate. The cells
import the library when they run, so that ``neurodyn sweep --help`` reads :data:`SWEEPS`
without importing torch.

Examples
--------
>>> sorted(SWEEPS)
['diffusion', 'drift', 'kappa']
>>> SWEEPS["diffusion"].axes
('noise', 'n')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SWEEPS", "SweepKind", "kappa_cell", "diffusion_cell", "drift_cell"]


def _fit(p: dict, **extra):
    from ..fitting.core import FitConfig, fit

    cfg = FitConfig(n=int(p["n"]), steps=int(p["fit_steps"]), seed=int(p["seed"]), **extra)
    return fit(cfg, progress=False).network


def kappa_cell(p: dict) -> dict:
    """Fit at ``kappa``, ``n``; the spectrum at the manifold (``params``: kappa, n, fit_steps,
    seed)."""
    from ..analysis.recovery import network_report

    net = _fit(p, kappa=float(p["kappa"]))
    rep = network_report(net).to_dict()
    return {"slowest_normal_rate": -float(rep["jacobian"]["slowest_nonzero"]),
            "n_zero": int(rep["jacobian"]["n_zero"]),
            "fixed_point_residual": float(rep["fixed_point_residual"])}


def diffusion_cell(p: dict) -> dict:
    """Diffusion of the bump under noise ``noise`` (``params``: noise, n, fit_steps, runs,
    duration, dt, seed)."""
    from ..analysis.bump_motion import diffusion

    net = _fit(p)
    m = diffusion(net, float(p["noise"]), int(p["runs"]), float(p["duration"]),
                  float(p["dt"]), int(p["seed"]), device=p.get("device", "cpu")).to_dict()
    # D per manifold axis (one on the ring): the mean over axes
    return {"D": float(np.mean(m["D"])), "D_theory": float(m["D_theory"]),
            "ratio": float(np.mean(m["ratio"]))}


def drift_cell(p: dict) -> dict:
    """Path integration of a constant speed ``v`` (``params``: v, n, fit_steps, runs,
    duration, dt, seed)."""
    from ..analysis.bump_motion import path_integration

    net = _fit(p)
    res = path_integration(net, f"constant:{float(p['v'])}", int(p["runs"]),
                           float(p["duration"]), float(p["dt"]), int(p["seed"]),
                           device=p.get("device", "cpu"))
    m, tr = res.to_dict(), res.trajectory.cpu()
    travelled = float(tr.reference[-1, :, 0].mean() - tr.reference[0, :, 0].mean())
    err = tr.path_error()[-1, :, 0]
    return {"rms_final": float(m["rms_final"]), "max_final": float(m["max_final"]),
            "drift_rate": float(err.mean()) / float(tr.t[-1]),
            "relative_drift": float(err.mean()) / travelled if travelled else float("nan")}


@dataclass(frozen=True)
class SweepKind:
    """A sweep: its cell function, grid axes (x, series), defaults and the plotted result."""

    cell: Any
    axes: tuple[str, str]
    defaults: dict
    fixed: dict
    y: str


SWEEPS = {
    "kappa": SweepKind(kappa_cell, ("kappa", "n"), {"kappa": [0.5, 1.0, 2.0], "n": [64, 128]},
                       {"fit_steps": 300}, "slowest_normal_rate"),
    "diffusion": SweepKind(diffusion_cell, ("noise", "n"),
                           {"noise": [0.02, 0.05, 0.1], "n": [64, 128]},
                           {"fit_steps": 300, "runs": 64, "duration": 100.0, "dt": 0.05}, "D"),
    "drift": SweepKind(drift_cell, ("v", "n"), {"v": [0.05, 0.2, 0.5], "n": [64, 128]},
                       {"fit_steps": 300, "runs": 8, "duration": 100.0, "dt": 0.1},
                       "rms_final"),
}
