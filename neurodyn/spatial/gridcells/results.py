"""Results of a grid-cell run: per-module path integration, rate maps, scores; summary metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

from ..agent import Trajectory
from ..gridnull import GridClassification
from ..gridscores import GridScores, fraction_above
from ..ratemaps import RateMaps

__all__ = ["ModuleResult", "GridCellsResult", "GRIDNESS_THRESHOLD", "NULL_MIN_SHIFT",
           "null_shift", "run_metrics"]

#: Fixed classic gridness at or above which a cell counts as a grid cell when no shuffled null
#: is computed (``shuffles=0``), and the ``fraction_grid_fixed`` of every run: a convention kept
#: for continuity; the field's criterion is the 95th percentile of a shuffled null
#: (:func:`neurodyn.spatial.gridnull.shuffled_gridness`), the default classification of a run.
GRIDNESS_THRESHOLD = 0.8
#: Smallest time shift (s) of the shuffled null of a run long enough for it.
NULL_MIN_SHIFT = 20.0


def null_shift(trajectory: Trajectory, min_shift: float | None = None) -> float:
    """The smallest time shift (s) of a run's shuffled null, checked against the run's length.

    Default ``min(NULL_MIN_SHIFT, duration / 4)``: 20 s for a run of 80 s or more
    (``duration = t[-1] - t[0]``).

    Raises
    ------
    BadInput
        ``min_shift`` not a number > 0, or the run shorter than twice the shift.

    Examples
    --------
    >>> from neurodyn.spatial.agent import generate_trajectory
    >>> null_shift(generate_trajectory(200.0)), null_shift(generate_trajectory(8.0), 1.0)
    (20.0, 1.0)
    """
    duration = float(trajectory.t[-1] - trajectory.t[0])
    if min_shift is None:
        shift = min(NULL_MIN_SHIFT, duration / 4)
    elif isinstance(min_shift, bool) or not isinstance(min_shift, (int, float)) or \
            not (math.isfinite(min_shift) and min_shift > 0):
        raise BadInput(f"min_shift={min_shift!r}: must be a finite number of seconds > 0",
                       param="min_shift")
    else:
        shift = float(min_shift)
    lo = int(np.ceil(shift / trajectory.dt))
    if trajectory.steps - lo <= lo:
        raise BadInput(f"min_shift={shift:g}: the run ({duration:g} s, {trajectory.steps} "
                       "samples) must last more than twice the smallest shift of the "
                       "shuffled null; give a shorter min_shift, or shuffles=0", param="min_shift")
    return shift


@dataclass
class ModuleResult(Result):
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
    classification : the panel's gridness against the shuffled null, or None (``shuffles=0``).
    """

    spacing: float
    phases: np.ndarray
    decoded: np.ndarray
    error: np.ndarray
    maps: RateMaps
    scores: GridScores
    all_maps: RateMaps | None = None
    rates: np.ndarray | None = None
    classification: GridClassification | None = None

    @property
    def fraction_grid(self) -> float:
        """Fraction of grid cells in the panel: above the shuffled threshold, or (without a
        null) with classic gridness ``>= GRIDNESS_THRESHOLD``."""
        if self.classification is not None:
            return self.classification.fraction
        return self.fraction_grid_fixed

    @property
    def fraction_grid_fixed(self) -> float:
        """Fraction of the panel whose unsmoothed classic gridness is ``>= 0.8``."""
        return fraction_above(self.scores.classic, GRIDNESS_THRESHOLD)

    @property
    def gridness_threshold(self) -> tuple[float, str]:
        """The threshold ``fraction_grid`` uses and where it comes from."""
        c = self.classification
        if c is None:
            return GRIDNESS_THRESHOLD, (f"fixed: classic gridness >= {GRIDNESS_THRESHOLD:g} of "
                                        "the unsmoothed maps (no shuffled null)")
        return c.threshold, (f"shuffled null: {c.percentile:g}th percentile of the classic "
                             f"gridness of {c.null.shape[0]} time-shifted maps per cell "
                             f"(shifts >= {c.min_shift:g} s), pooled over the "
                             f"{c.scores.size} cells; maps smoothed by a Gaussian of "
                             f"{c.smoothing:g} bin")

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
class GridCellsResult(Result):
    """Outcome of :func:`run_grid_cells`.

    Attributes
    ----------
    trajectory : the agent's trajectory (``t`` (steps,) s, ``position`` (steps, 2) m).
    modules : one :class:`ModuleResult` per module; the first is the primary one.
    cells : array (cells, 2), sheet indices ``(i, j)`` of the panel of cells.
    lattice : the network's lattice.
    orientation : grid orientation (angle of ``k1``) in radians.
    connectivity : array (n1, n2), the weights onto neuron 0 of the best fixed circulant network
        (:func:`neurodyn.analysis.connectivity.fit_circulant`).
    wall_time : seconds spent integrating the network.
    config : the parameters of the run (JSON-serialisable).
    metrics : summary numbers (JSON-serialisable); see :func:`run_grid_cells`.
    joint : the modules decoded together without the start position
        (:class:`~neurodyn.spatial.gridcells.joint.JointTrack`), or None for one module.
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
    joint: object = None

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
    threshold, source = mod.gridness_threshold
    null = mod.classification
    return {
        "spacing_m": mod.spacing,
        "final_error_m": float(mod.error[-1]),
        "final_error_fraction": float(mod.error[-1] / mod.spacing),
        "mean_error_m": float(mod.error.mean()),
        "max_error_m": float(mod.error.max()),
        "fraction_grid": mod.fraction_grid,
        "gridness_threshold": threshold,
        "gridness_threshold_source": source,
        "gridness_null": None if null is None else null.summary(),
        "fraction_grid_fixed": mod.fraction_grid_fixed,
        "fixed_gridness_threshold": GRIDNESS_THRESHOLD,
        "gridness_median": float(np.median(s.classic[fin])) if fin.any() else math.nan,
        "gridness_mean_form_median": float(np.nanmedian(s.mean)) if fin.any() else math.nan,
        "score_90_median": float(np.nanmedian(s.score_90)) if fin.any() else math.nan,
        "measured_spacing_m": mod.measured_spacing,
        "measured_orientation_deg": math.degrees(mod.measured_orientation),
    }


def run_metrics(result: GridCellsResult, nfe: int, dt_net: float) -> dict:
    """Summary numbers of a run: the primary module's at the top level, every module's under
    ``modules``, and the run's cost (``nfe``, ``wall_time_s``, ``dt_network_tau``)."""
    per = [_module_metrics(m) for m in result.modules]
    duration = result.config["duration_s"]
    out = dict(per[0])
    out.update({
        "lattice": result.lattice,
        "duration_s": duration,
        "wall_time_s": result.wall_time,
        "realtime_factor": duration / result.wall_time if result.wall_time > 0 else math.nan,
        "dt_network_tau": dt_net,
        "nfe": nfe,
        "cells": int(result.cells.shape[0]),
        "n_modules": len(per),
        "modules": per,
    })
    if result.joint is not None:
        out["joint"] = joint_metrics(result.joint, result.position, duration)
    return out


def joint_metrics(joint, position: np.ndarray, duration: float) -> dict:
    """The error of the jointly decoded track (median, 95th percentile, maximum, final, in m)
    against the true ``position`` ``(T, 2)``, and its tracking counts."""
    err = np.linalg.norm(joint.position - position, axis=1)
    return {"median_error_m": float(np.median(err)), "p95_error_m": float(np.percentile(err, 95)),
            "max_error_m": float(err.max()), "final_error_m": float(err[-1]),
            "lost_samples": int(joint.lost), "relocks": int(joint.relocks),
            "resolution_m": float(joint.resolution),
            "method": "modules decoded together without the start position: the summed von "
                      "Mises likelihood over a grid covering the arena, then tracked "
                      "(neurodyn.spatial.gridcells.joint)"}
