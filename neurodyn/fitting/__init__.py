"""Fitting SEAL energies to a target manifold (the "L" in SEAL).

- :mod:`.config` -- :class:`~.config.FitConfig`, everything that defines a fit (torch-free);
- :mod:`.plan` -- what a fit builds before its first step (geometry, target manifold, network),
  checked and built once by :func:`~.plan.prepare` before a run writes anything;
- :mod:`.core` -- :func:`~.core.fit` by least squares on sampled batches;
- :mod:`.neural` -- the Adam fit of a neural (``mlp``) energy;
- :mod:`.checkpoint` -- the resumable checkpoint both fits write.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "config": ("FitConfig", "FAMILIES"),
    "core": ("FitResult", "FitFailed", "FitInterrupted", "fit", "TERMS"),
    "plan": ("FitPlan", "prepare", "build_geometry", "build_manifold", "build_network"),
})
