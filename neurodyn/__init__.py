"""SEAL: learned Hopfield-compatible attractor energies on ring and torus populations.

>>> import neurodyn as nd
>>> net = nd.fit(nd.FitConfig(n=32, steps=5)).network
>>> u0 = nd.perturbed_states(net.manifold, count=2, kind="noise", strength=0.2, seed=0)
>>> run = nd.simulate(net, u0, duration=5.0, dt=0.1)
>>> bool(run.distance[-1].max() < run.distance[0].min())
True

The top level holds what a study of one network uses: populations (:class:`Ring`,
:class:`Torus`), the target manifold and the network, fitting, simulation, the standard
measurements, grid cells in a box, and model files. Everything else lives under its concept,
each subpackage's docstring listing its names (all resolved on first use, so ``import
neurodyn`` imports neither torch nor matplotlib):

- :mod:`neurodyn.geometry` (populations), :mod:`neurodyn.activation` (rate functions),
  :mod:`neurodyn.energies` (interaction energies), :mod:`neurodyn.manifold` (the target bump
  manifold and the fit's geometric primitives), :mod:`neurodyn.network` (the network);
- :mod:`neurodyn.fitting` (SEAL fits), :mod:`neurodyn.dynamics` (simulation, perturbations,
  velocity inputs, devices, heterogeneity);
- :mod:`neurodyn.analysis` (diagnostics, reports, motion along the manifold, drift, activity,
  landscape, embeddings, topology, attraction);
- :mod:`neurodyn.spatial` (agents, positions, grid cells, rate maps, gridness, decoding, cues,
  head direction);
- :mod:`neurodyn.experiments` (SEAL experiments and sweeps), :mod:`neurodyn.plotting`
  (figures), :mod:`neurodyn.runs` (run directories), :mod:`neurodyn.io` (files),
  :mod:`neurodyn.interop` (RatInABox, NWB) and :mod:`neurodyn.cli` (the command line).
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__version__ = "0.1.0"

#: module (relative to the package) -> the public names of the top level it defines
_MODULES = {
    "geometry.populations": ("Ring", "Torus"),
    "manifold": ("TargetManifold",),
    "network": ("HopfieldNetwork",),
    "fitting.config": ("FitConfig",),
    "fitting.core": ("fit",),
    "dynamics.simulation": ("simulate",),
    "dynamics.perturbations": ("perturbed_states",),
    "dynamics.inputs": ("parse_velocity",),
    "analysis.diagnostics": ("jacobian_spectrum", "connectivity_profile", "energy_audit"),
    "analysis.connectivity": ("effective_connectivity", "fit_circulant"),
    "analysis.recovery": ("network_report", "restoration"),
    "analysis.bump_motion": ("path_integration", "diffusion"),
    "analysis.drift": ("diffusion_estimate",),
    "analysis.landscape": ("energy_landscape",),
    "analysis.survey": ("survey_manifold",),
    "analysis.topology": ("persistent_homology",),
    "inference.core": ("fit_activity",),
    "spatial.agent": ("Box", "generate_trajectory"),
    "spatial.positions": ("load_positions",),
    "spatial.gridcells.run": ("run_grid_cells",),
    "spatial.ratemaps": ("rate_maps",),
    "spatial.gridscores": ("grid_scores",),
    "io": ("save_model", "load_model"),
}

__getattr__, __dir__, __all__ = lazy_names(__name__, _MODULES)
__all__ = [*__all__, "__version__"]
