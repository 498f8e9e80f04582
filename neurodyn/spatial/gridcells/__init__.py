"""Grid cells: path integration of an agent's trajectory in a box by a fitted torus model.

- :mod:`.run` -- :func:`~.run.run_grid_cells`; :mod:`.results` -- its typed results and
  metrics; :mod:`.files` -- writing them into a run directory;
- :mod:`.network` -- the network's step and its stable step size; :mod:`.segments`,
  :mod:`.checks` -- the run's pieces and input checks.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "run": ("run_grid_cells", "GridCellsConfig", "prepare_grid_cells", "run_grid_cells_prepared",
        "GridCellsPlan"),
    "results": ("ModuleResult", "GridCellsResult", "GRIDNESS_THRESHOLD", "NULL_MIN_SHIFT",
        "null_shift", "run_metrics"),
    "files": ("write_grid_cells",),
    "network": ("connectivity_row", "network_step"),
})
