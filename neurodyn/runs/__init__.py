"""Run directories: each ``neurodyn`` command as one function that checks its whole input (and
the memory it needs) before it claims ``out``, then writes ``config.json``, ``metrics.json``,
its figures and its arrays there, on the shared run contract of :mod:`_runkit`.

One module per command family: :mod:`~neurodyn.runs.fit` (``neurodyn fit``),
:mod:`~neurodyn.runs.simulate` (``simulate``, ``manifold``), :mod:`~neurodyn.runs.experiments`
(``restore``, ``path-integrate``, ``speed-gain``, ``diffuse``), :mod:`~neurodyn.runs.gridcells`
(``grid-cells``), :mod:`~neurodyn.runs.activity` (``fit-activity``, ``decode``),
:mod:`~neurodyn.runs.generate` (``generate``), :mod:`~neurodyn.runs.sweep` (``sweep``). Each
takes a typed config; the command line parses the arguments into it and calls these functions,
and a script can call them the same way. Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "fit": ("fit_run", "write_network_report"),
    "gridcells": ("grid_cells_run", "GridCellsRunConfig"),
    "activity": ("fit_activity_run", "decode_run", "FitActivityConfig", "DecodeConfig"),
    "generate": ("generate_run", "GenerateConfig"),
    "sweep": ("sweep_run", "SweepConfig"),
    "simulate": ("simulate_run", "SimulateConfig", "manifold_run", "ManifoldConfig",
                 "simulate_into", "manifold_report"),
    "experiments": ("experiment_run", "RestoreConfig", "PathIntegrateConfig", "SpeedGainConfig",
                    "DiffuseConfig", "restore_run", "path_integrate_run", "speed_gain_run",
                    "speed_gain_network", "diffuse_run"),
})
