"""SEAL: learned Hopfield-compatible attractor energies on ring and torus populations.

>>> import neurodyn as nd
>>> net = nd.fit(nd.FitConfig(n=32, steps=5)).network
>>> u0 = nd.perturbed_states(net.manifold, count=2, kind="noise", strength=0.2, seed=0)
>>> run = nd.simulate(net, u0, duration=5.0, dt=0.1)
>>> bool(run.distance[-1].max() < run.distance[0].min())
True

The names below are the public API; each is imported from its module on first use, so
``import neurodyn`` stays cheap. Modules by purpose:

- populations and dynamics: :mod:`~neurodyn.geometry.populations` (Ring, Torus; the transforms in
  :mod:`~neurodyn.geometry.base`), :mod:`~neurodyn.activation`,
  :mod:`~neurodyn.energies`, :mod:`~neurodyn.manifold` (the target bump manifold),
  :mod:`~neurodyn.network` (HopfieldNetwork, Transport), :mod:`~neurodyn.fitting.core`,
  :mod:`~neurodyn.dynamics.simulation`, :mod:`~neurodyn.dynamics.perturbations`, :mod:`~neurodyn.dynamics.inputs` (velocities);
- measurements: :mod:`~neurodyn.analysis.diagnostics`, :mod:`~neurodyn.analysis.report` (typed results;
  path integration and diffusion in :mod:`~neurodyn.analysis.bump_motion`),
  :mod:`~neurodyn.analysis.activity`, :mod:`~neurodyn.analysis.landscape`, :mod:`~neurodyn.analysis.embedding`,
  :mod:`~neurodyn.analysis.topology`, :mod:`~neurodyn.analysis.survey`;
- grid cells: :mod:`~neurodyn.spatial.agent`, :mod:`~neurodyn.spatial.gridcells.run`, :mod:`~neurodyn.spatial.ratemaps`;
- figures: :mod:`neurodyn.plotting` and its submodules; run directories: :mod:`~neurodyn.runs`;
  files: :mod:`~neurodyn.io`; the command line: :mod:`neurodyn.cli`.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name -> module that defines it
_NAMES: dict[str, str] = {}
for _module, _names in {
    'geometry.populations': ('Geometry', 'Ring', 'Torus', 'make_geometry', 'LATTICES', 'wrap_angle'),
    'activation': ('Activation', 'Logistic', 'Tanh', 'make_activation', 'ACTIVATIONS'),
    'energies': ('InteractionEnergy', 'QuadraticEnergy', 'FourierQuadraticEnergy', 'LearnedFourierEnergy', 'ModuleEnergy', 'MLPEnergy', 'make_energy'),
    'manifold': ('TargetManifold', 'bump_profile'),
    'network': ('HopfieldNetwork', 'Transport'),
    'fitting.core': ('FitConfig', 'FitResult', 'fit'),
    'dynamics.simulation': ('simulate', 'SimulationResult', 'NonFiniteStateError', 'METHODS'),
    'dynamics.perturbations': ('perturb', 'perturbed_states', 'random_strengths', 'PERTURBATIONS'),
    'dynamics.inputs': ('Velocity', 'Constant', 'Sine', 'Steps', 'OrnsteinUhlenbeck', 'ArrayVelocity', 'parse_velocity'),
    'analysis.diagnostics': ('fixed_point_residual', 'jacobian_spectrum', 'summarize_spectrum', 'connectivity_profile', 'energy_audit', 'path_integration_error', 'diffusion_coefficient', 'diffusion_theory'),
    'analysis.report': ('network_report', 'NetworkReport', 'restoration', 'RestorationResult'),
    'analysis.bump_motion': ('path_integration', 'PathIntegrationResult', 'diffusion', 'DiffusionResult'),
    'analysis.activity': ('manifold_activity', 'ManifoldActivity', 'path_on_manifold'),
    'analysis.landscape': ('energy_landscape', 'EnergyLandscape'),
    'analysis.embedding': ('pca', 'isomap', 'Embedding'),
    'analysis.topology': ('persistent_homology', 'betti_numbers', 'Homology'),
    'analysis.survey': ('survey_manifold', 'ManifoldSurvey'),
    'spatial.agent': ('Box', 'generate_trajectory'),
    'spatial.positions': ('load_positions',),
    'spatial.gridcells.run': ('run_grid_cells', 'GridCellsResult'),
    'spatial.ratemaps': ('rate_maps',),
    'spatial.gridscores': ('grid_scores', 'gridness'),
    'runs': ('manifold_report',),
    'io': ('save_model', 'load_model', 'LoadedModel', 'load_states'),
}.items():
    for _name in _names:
        _NAMES[_name] = _module
del _module, _names, _name

#: subpackages reachable as attributes (``nd.plotting``) without importing them eagerly
_SUBMODULES = ("plotting", "cli", "runs", "io", "geometry", "energies", "fitting", "dynamics",
               "analysis", "spatial", "experiments", "interop")

__all__ = sorted(_NAMES) + ["__version__"]


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'neurodyn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES) | set(_SUBMODULES))
