"""Writing a grid-cell run: arrays (``track.npz``, ``ratemaps.npz``), config, metrics, figures.

Every file is written atomically (a temporary name in ``out``, then ``os.replace``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _runkit.files import atomic_save_figure, atomic_savez

from ...plotting.gridcells import run_figures
from .results import GridCellsResult

__all__ = ["write_grid_cells"]


def write_grid_cells(result: GridCellsResult, out_dir: str | Path,
                     extra_config: dict | None = None) -> dict:
    """Write the arrays, figures, config and metrics of a grid-cell run.

    Files in ``out_dir``:

    - ``track.npz``: ``t`` (steps,) s; ``position``, ``decoded`` (steps, 2) m (primary module);
      also ``error`` (steps,) m, ``phases`` (modules, steps, 2) rad, ``decoded_modules``
      (modules, steps, 2) m, ``spacing`` (modules,) m.
    - ``ratemaps.npz``: ``maps`` (cells, bins, bins) (primary module, NaN where unvisited),
      ``x_edges``, ``y_edges`` (bins + 1,) m, ``occupancy`` (bins, bins) samples, ``cells``
      (cells, 2) sheet indices, ``module_maps`` (modules, cells, bins, bins), the scores
      ``classic``, ``mean``, ``score_90``, ``spacing`` (m), ``orientation`` (rad), each
      (modules, cells); ``all_maps`` (modules, N, bins, bins) when every cell was binned.
    - ``metrics.json``, ``config.json``.
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
    dict : the metrics.
    """
    from ...io import write_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mods = result.modules
    atomic_savez(
        out / "track.npz", t=result.t, position=result.position, decoded=result.decoded,
        error=result.error, phases=np.stack([m.phases for m in mods]),
        decoded_modules=np.stack([m.decoded for m in mods]),
        spacing=np.array([m.spacing for m in mods]))
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
    write_json(result.metrics, out / "metrics.json")

    for name, fig in run_figures(result):
        atomic_save_figure(fig, out / name, dpi=110)
    return result.metrics
