"""Writing a grid-cell run: arrays (``track.npz``, ``ratemaps.npz``), config, metrics, figures.

Every file is written atomically (a temporary name in ``out``, then ``os.replace``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _runkit.files import atomic_save_figure, atomic_savez

from ...plotting.gridcells import run_figures
from .results import GridCellsResult

__all__ = ["write_grid_cells", "TIMING_KEYS"]

#: the metrics a run writes to ``timing.json`` instead of ``metrics.json`` (wall clock)
TIMING_KEYS = ("wall_time_s", "realtime_factor")


def write_grid_cells(result: GridCellsResult, out_dir: str | Path,
                     extra_config: dict | None = None) -> dict:
    """Write the arrays, figures, config and metrics of a grid-cell run.

    Files in ``out_dir``:

    - ``track.npz``: ``t`` (steps,) s; ``position``, ``decoded`` (steps, 2) m (primary module);
      also ``error`` (steps,) m, ``phases`` (modules, steps, 2) rad, ``decoded_modules``
      (modules, steps, 2) m, ``spacing`` (modules,) m, and ``decoded_joint`` (steps, 2) m
      with several modules (decoded together without the start position).
    - ``ratemaps.npz``: ``maps`` (cells, bins, bins) (primary module, NaN where unvisited),
      ``x_edges``, ``y_edges`` (bins + 1,) m, ``occupancy`` (bins, bins) samples, ``cells``
      (cells, 2) sheet indices, ``module_maps`` (modules, cells, bins, bins), the scores
      ``classic``, ``mean``, ``score_90``, ``spacing`` (m), ``orientation`` (rad), each
      (modules, cells); ``all_maps`` (modules, N, bins, bins) when every cell was binned.
    - ``metrics.json``, ``config.json``, and ``timing.json``: the wall-clock entries of the
      metrics (:data:`TIMING_KEYS`), which differ between runs of one seed.
    - figures: ``ratemaps.png``, ``autocorrelograms.png``, ``trajectory.png``, ``error.png``,
      ``connectivity.png`` and, with several modules, ``modules.png``.

    Parameters
    ----------
    result : GridCellsResult
        A :class:`GridCellsResult`.
    out_dir : str or Path
        Output directory (created).
    extra_config : dict or None
        Merged into ``config.json`` (e.g. the command line).

    Returns
    -------
    dict : the metrics (with the wall-clock entries).
    """
    from ...io import write_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mods = result.modules
    atomic_savez(
        out / "track.npz", t=result.t, position=result.position, decoded=result.decoded,
        error=result.error, phases=np.stack([m.phases for m in mods]),
        decoded_modules=np.stack([m.decoded for m in mods]),
        spacing=np.array([m.spacing for m in mods]),
        **({} if result.joint is None else {"decoded_joint": result.joint.position}))
    arrays = {
        "maps": result.maps.maps, "x_edges": result.maps.x_edges,
        "y_edges": result.maps.y_edges, "occupancy": result.maps.occupancy,
        "cells": result.cells, "module_maps": np.stack([m.maps.maps for m in mods]),
    }
    for key in ("classic", "mean", "score_90", "spacing", "orientation"):
        arrays[key] = np.stack([getattr(m.scores, key) for m in mods])
    if mods[0].all_maps is not None:
        arrays["all_maps"] = np.stack([m.all_maps.maps for m in mods])
    atomic_savez(out / "ratemaps.npz", **arrays)
    write_json({**result.config, **(extra_config or {})}, out / "config.json")
    # wall times differ between runs of one seed: timing.json, not metrics.json
    write_json({k: v for k, v in result.metrics.items() if k not in TIMING_KEYS},
               out / "metrics.json")
    write_json({k: result.metrics[k] for k in TIMING_KEYS if k in result.metrics},
               out / "timing.json")

    for name, fig in run_figures(result):
        atomic_save_figure(fig, out / name, dpi=110)
    return result.metrics
