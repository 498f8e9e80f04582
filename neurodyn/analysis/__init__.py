"""Measurements of a network and its runs, each a plain function returning a typed result.

- :mod:`.diagnostics` -- fixed points, the Jacobian spectrum, connectivity, the energy audit and
  the path-integration error of one run;
- :mod:`.connectivity` -- the effective connectivity as it is (rank, singular spectrum) and the
  best fixed circulant network that reproduces the dynamics;
- :mod:`.recovery` -- the network report and the restoration after perturbations;
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
    "diagnostics": ("fixed_point_residual", "jacobian_spectrum", "summarize_spectrum",
        "energy_audit"),
    "connectivity": ("effective_connectivity", "fit_circulant"),
    "recovery": ("network_report", "restoration"),
    "bump_motion": ("path_integration", "diffusion"),
    "drift": ("diffusion_estimate",),
    "attraction": ("attraction_report",),
    "topology": ("persistent_homology",),
    "survey": ("survey_manifold",),
})
