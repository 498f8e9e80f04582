"""Results of a grid-cell run: per-module path integration, rate maps, scores; summary metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .agent import Trajectory
from .ratemaps import GridScores, RateMaps, fraction_above

__all__ = ["ModuleResult", "GridCellsResult", "GRIDNESS_THRESHOLD", "run_metrics"]

#: Classic gridness at or above which a cell counts as a grid cell in the summary metrics
#: (a fixed convention kept for continuity; the field's criterion is a shuffled null's 95th
#: percentile, :func:`neurodyn.gridnull.shuffled_gridness`).
GRIDNESS_THRESHOLD = 0.8


@dataclass
class ModuleResult:
    """Path integration and rate maps of one grid module.

    Attributes
    ----------
    spacing : grid spacing in metres.
    phases : array (steps, 2), decoded torus phases in ``[0, 2 pi)``.
    decoded : array (steps, 2), the network's position estimate in metres.
    error : array (steps,), ``|decoded - position|`` in metres.
    maps : RateMaps of the panel of cells, ``maps.maps`` (cells, bins, bins).
    scores : GridScores of the panel, each (cells,).
    all_maps : RateMaps of every neuron of the sheet (N, bins, bins), or None.
    rates : array (steps, cells), the panel's rates over time (``keep_rates=True``), or None.
    """

    spacing: float
    phases: np.ndarray
    decoded: np.ndarray
    error: np.ndarray
    maps: RateMaps
    scores: GridScores
    all_maps: RateMaps | None = None
    rates: np.ndarray | None = None

    @property
    def fraction_grid(self) -> float:
        """Fraction of the panel with classic gridness ``>= GRIDNESS_THRESHOLD``."""
        return fraction_above(self.scores.classic, GRIDNESS_THRESHOLD)

    @property
    def measured_spacing(self) -> float:
        """Median spacing of the autocorrelograms' nearest peaks over the panel (m)."""
        s = self.scores.spacing[np.isfinite(self.scores.spacing)]
        return float(np.median(s)) if s.size else math.nan

    @property
    def measured_orientation(self) -> float:
        """Circular mean (period 60 deg) of the panel's peak orientations, radians in
        ``[0, pi/3)``."""
        o = self.scores.orientation[np.isfinite(self.scores.orientation)]
        if not o.size:
            return math.nan
        return float(np.angle(np.exp(6j * o).sum()) / 6.0) % (math.pi / 3.0)


@dataclass
class GridCellsResult:
    """Outcome of :func:`run_grid_cells`.

    Attributes
    ----------
    trajectory : the agent's trajectory (``t`` (steps,) s, ``position`` (steps, 2) m).
    modules : one :class:`ModuleResult` per module; the first is the primary one.
    cells : array (cells, 2), sheet indices ``(i, j)`` of the panel of cells.
    lattice : the network's lattice.
    orientation : grid orientation (angle of ``k1``) in radians.
    connectivity : array (n1, n2), ``-d^2 F / dr_0 dr_j`` at the bump centred on neuron 0.
    wall_time : seconds spent integrating the network.
    config : the parameters of the run (JSON-serialisable).
    metrics : summary numbers (JSON-serialisable); see :func:`run_grid_cells`.
    """

    trajectory: Trajectory
    modules: list[ModuleResult]
    cells: np.ndarray
    lattice: str
    orientation: float
    connectivity: np.ndarray
    wall_time: float
    config: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)

    @property
    def t(self) -> np.ndarray:
        """Sample times (steps,) in seconds."""
        return self.trajectory.t

    @property
    def position(self) -> np.ndarray:
        """True positions (steps, 2) in metres."""
        return self.trajectory.position

    @property
    def decoded(self) -> np.ndarray:
        """Decoded positions (steps, 2) in metres, primary module."""
        return self.modules[0].decoded

    @property
    def error(self) -> np.ndarray:
        """Decoding error (steps,) in metres, primary module."""
        return self.modules[0].error

    @property
    def maps(self) -> RateMaps:
        """Rate maps of the panel, primary module."""
        return self.modules[0].maps

    @property
    def scores(self) -> GridScores:
        """Grid scores of the panel, primary module."""
        return self.modules[0].scores


def _module_metrics(mod: ModuleResult) -> dict:
    s = mod.scores
    fin = np.isfinite(s.classic)
    return {
        "spacing_m": mod.spacing,
        "final_error_m": float(mod.error[-1]),
        "final_error_fraction": float(mod.error[-1] / mod.spacing),
        "mean_error_m": float(mod.error.mean()),
        "max_error_m": float(mod.error.max()),
        "fraction_grid": mod.fraction_grid,
        "gridness_median": float(np.median(s.classic[fin])) if fin.any() else math.nan,
        "gridness_mean_form_median": float(np.nanmedian(s.mean)) if fin.any() else math.nan,
        "score_90_median": float(np.nanmedian(s.score_90)) if fin.any() else math.nan,
        "measured_spacing_m": mod.measured_spacing,
        "measured_orientation_deg": math.degrees(mod.measured_orientation),
    }


def run_metrics(result: GridCellsResult, nfe: int, dt_net: float) -> dict:
    per = [_module_metrics(m) for m in result.modules]
    duration = result.config["duration_s"]
    out = dict(per[0])
    out.update({
        "lattice": result.lattice,
        "gridness_threshold": GRIDNESS_THRESHOLD,
        "duration_s": duration,
        "wall_time_s": result.wall_time,
        "realtime_factor": duration / result.wall_time if result.wall_time > 0 else math.nan,
        "dt_network_tau": dt_net,
        "nfe": nfe,
        "cells": int(result.cells.shape[0]),
        "n_modules": len(per),
        "modules": per,
    })
    return out
