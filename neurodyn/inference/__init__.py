"""SEAL from recorded activity: cells, decoding, relaxation rates, diffusion and the verdict.

- :mod:`.core` -- :func:`fit_activity`, the whole fit and its verdict;
- :mod:`.cells` (ring) and :mod:`.torus` (grid module) -- each cell's preferred angle or phase,
  gain and baseline, and the shared bump profile;
- :mod:`.coordinate` -- the manifold from the activity alone: Betti numbers, a ring coordinate;
- :mod:`.decode` -- maximum-likelihood decoding of the bump under Poisson counts;
- :mod:`.relaxation` -- normal relaxation rates per mode from the residual's autocorrelation;
- :mod:`.energy` -- the SEAL energy learned from the fit;
- :mod:`.files` -- the data files of ``neurodyn fit-activity`` and the model folder it writes.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "core": ("ActivityFit", "fit_activity", "GEOMETRIES", "EXPECTED_BETTI"),
    "cells": ("RingCells", "place_ring_cells", "binned_curves", "profile_values"),
    "torus": ("TorusCells", "place_torus_cells", "estimate_lattice"),
    "coordinate": ("activity_betti", "ring_coordinate", "smoothed_activity"),
    "decode": ("decode_ml", "windowed", "wrapped", "bump_frame"),
    "relaxation": ("ModeRates", "mode_amplitudes", "relaxation_rates"),
    "energy": ("learn_energy", "resting_profile_correlation", "profile_supported"),
    "files": ("read_activity", "save_cells", "load_cells", "decode_file"),
})
