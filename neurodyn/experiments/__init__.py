"""Experiments built on fits and measurements.

- :mod:`.seal` -- SEAL's experiments (kappa and capacity sweeps, ablation, controls), with their
  typed results in :mod:`.seal_results`;
- :mod:`.sweeps` -- the grid cells of ``neurodyn sweep`` (kappa, diffusion, drift);
- :mod:`.speed` -- speed physics of a velocity coupling (speed gain, maximum tracked speed).

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "seal": ("measure", "kappa_sweep", "capacity_sweep", "ablation", "classic_cann",
        "fourier_construction_network", "mlp_sweep", "variable_control"),
    "speed": ("speed_gain",),
    "sweeps": ("SWEEPS",),
})
