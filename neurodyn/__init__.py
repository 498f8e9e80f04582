"""SEAL: learned Hopfield-compatible attractor energies on ring and torus populations.

>>> import neurodyn as nd
>>> net = nd.fit(nd.FitConfig(n=32, steps=5)).network
>>> u0 = nd.perturbed_states(net.manifold, count=2, kind="noise", strength=0.2, seed=0)
>>> run = nd.simulate(net, u0, duration=5.0, dt=0.1)
>>> bool(run.distance[-1].max() < run.distance[0].min())
True

The names below are the public API; each is imported from its module on first use, so
``import neurodyn`` stays cheap. Modules by purpose:

- populations and dynamics: :mod:`~neurodyn.geometry` (Ring, Torus; the transforms in
  :mod:`~neurodyn.geometry_base`), :mod:`~neurodyn.activation`,
  :mod:`~neurodyn.energy`, :mod:`~neurodyn.manifold` (the target bump manifold),
  :mod:`~neurodyn.network` (HopfieldNetwork, Transport), :mod:`~neurodyn.fitting`,
  :mod:`~neurodyn.simulation`, :mod:`~neurodyn.perturbations`, :mod:`~neurodyn.inputs` (velocities);
- measurements: :mod:`~neurodyn.diagnostics`, :mod:`~neurodyn.experiments` (typed results;
  path integration and diffusion in :mod:`~neurodyn.bump_motion`),
  :mod:`~neurodyn.activity`, :mod:`~neurodyn.landscape`, :mod:`~neurodyn.embedding`,
  :mod:`~neurodyn.topology`, :mod:`~neurodyn.survey`;
- grid cells: :mod:`~neurodyn.agent`, :mod:`~neurodyn.gridcells`, :mod:`~neurodyn.ratemaps`;
- figures: :mod:`neurodyn.plotting` and its submodules; run directories: :mod:`~neurodyn.runs`;
  files: :mod:`~neurodyn.io`; the command line: :mod:`neurodyn.cli`.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name -> module that defines it
_NAMES: dict[str, str] = {}
for _module, _names in {
    "geometry": ("Geometry", "Ring", "Torus", "make_geometry", "LATTICES", "wrap_angle"),
    "activation": ("Activation", "Logistic", "Tanh", "make_activation", "ACTIVATIONS"),
    "energy": ("InteractionEnergy", "QuadraticEnergy", "FourierQuadraticEnergy",
               "LearnedFourierEnergy", "ModuleEnergy", "MLPEnergy", "make_energy"),
    "manifold": ("TargetManifold", "bump_profile"),
    "network": ("HopfieldNetwork", "Transport"),
    "fitting": ("FitConfig", "FitResult", "fit"),
    "simulation": ("simulate", "SimulationResult", "NonFiniteStateError", "METHODS"),
    "perturbations": ("perturb", "perturbed_states", "random_strengths", "PERTURBATIONS"),
    "inputs": ("Velocity", "Constant", "Sine", "Steps", "OrnsteinUhlenbeck", "ArrayVelocity",
               "parse_velocity"),
    "diagnostics": ("fixed_point_residual", "jacobian_spectrum", "summarize_spectrum",
                    "connectivity_profile", "energy_audit", "path_integration_error",
                    "diffusion_coefficient", "diffusion_theory"),
    "experiments": ("network_report", "NetworkReport", "restoration", "RestorationResult"),
    "bump_motion": ("path_integration", "PathIntegrationResult", "diffusion",
                    "DiffusionResult"),
    "activity": ("manifold_activity", "ManifoldActivity", "path_on_manifold"),
    "landscape": ("energy_landscape", "EnergyLandscape"),
    "embedding": ("pca", "isomap", "Embedding"),
    "topology": ("persistent_homology", "betti_numbers", "Homology"),
    "survey": ("survey_manifold", "ManifoldSurvey"),
    "agent": ("Box", "generate_trajectory", "load_positions"),
    "gridcells": ("run_grid_cells", "GridCellsResult"),
    "ratemaps": ("rate_maps", "grid_scores", "gridness"),
    "runs": ("manifold_report",),
    "io": ("save_model", "load_model", "LoadedModel", "load_states"),
}.items():
    for _name in _names:
        _NAMES[_name] = _module
del _module, _names, _name

#: submodules reachable as attributes (``nd.plotting``) without importing them eagerly
_SUBMODULES = ("plotting", "cli", "runs", "io", "diagnostics", "experiments", "geometry",
               "energy", "gridcells", "agent", "ratemaps", "topology", "embedding")

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
