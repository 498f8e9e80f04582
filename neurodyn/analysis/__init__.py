"""Measurements of a network and its runs, each a plain function returning a typed result.

- :mod:`.diagnostics` -- fixed points, the Jacobian spectrum, connectivity, the energy audit and
  the path-integration error of one run;
- :mod:`.connectivity` -- the effective connectivity as it is (rank, singular spectrum) and the
  best fixed circulant network that reproduces the dynamics;
- :mod:`.restoration` -- the network report and restoration after perturbations;
- :mod:`.bump_motion` -- path integration and diffusion of the bump against their predictions;
- :mod:`.drift` -- the one home of bump diffusion: its estimate with an interval
  (:func:`~.drift.diffusion_estimate`) and its theory (:func:`~.drift.diffusion_tensor_theory`),
  error growth and integration horizons;
- :mod:`.attraction` -- normal attraction measured against a prescribed rate kappa;
- :mod:`.activity`, :mod:`.landscape`, :mod:`.embedding`, :mod:`.topology` -- activity near the
  manifold, the energy landscape, PCA / Isomap embeddings, persistent homology;
- :mod:`.survey` -- all of these for one network.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "diagnostics": ("fixed_point_residual", "jacobian_spectrum", "SpectrumSummary",
        "summarize_spectrum", "ConnectivityProfile", "connectivity_profile", "energy_audit",
        "EnergyAudit", "InputEnergyAudit", "path_integration_error", "PathErrorStats"),
    "connectivity": ("EffectiveConnectivity", "effective_connectivity", "CirculantFit",
        "fit_circulant", "shell_spread"),
    "restoration": ("NetworkReport", "network_report", "RestorationStats", "RestorationResult",
        "restoration"),
    "bump_motion": ("PathIntegrationResult", "path_integration", "DiffusionResult", "diffusion",
        "from_manifold"),
    "drift": ("DiffusionEstimate", "unwrap_track", "diffusion_estimate",
        "diffusion_tensor_theory", "ErrorGrowth", "error_growth", "IntegrationHorizon",
        "integration_horizon"),
    "attraction": ("NormalSpectrum", "normal_spectrum", "FieldEnergyError", "field_energy_error",
        "DecayRates", "decay_rates", "AttractionReport", "attraction_report"),
    "activity": ("ManifoldActivity", "manifold_activity", "path_on_manifold"),
    "landscape": ("EnergyLandscape", "energy_landscape"),
    "embedding": ("Embedding", "pca", "isomap", "subsample"),
    "topology": ("Homology", "TopologyDependencyError", "persistent_homology", "betti_numbers",
        "long_bar_thresholds", "ATTRACTOR_BETTI"),
    "survey": ("ManifoldSurvey", "survey_manifold", "MIN_SURVEY_SAMPLES"),
})
