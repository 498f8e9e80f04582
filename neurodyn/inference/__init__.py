"""SEAL from recorded activity: cells, decoding, relaxation rates, diffusion and the verdict.

- :mod:`.core` -- :func:`fit_activity`, the whole fit and its verdict;
- :mod:`.cells` (ring) and :mod:`.torus` (grid module) -- each cell's preferred angle or phase,
  gain and baseline, and the shared bump profile;
- :mod:`.coordinate` -- a ring coordinate from the activity alone;
- :mod:`.decode` -- maximum-likelihood decoding of the bump under Poisson counts;
- :mod:`.relaxation` -- normal relaxation rates per mode from the residual's autocorrelation;
- :mod:`.verdict` -- the attractor verdict: each test's evidence, the rule combining them, and
  the tests (the activity's Betti numbers, coherent bump-frame fluctuations beyond a shared gain,
  sleep's persistence);
- :mod:`.energy` -- the SEAL energy learned from the fit;
- :mod:`.recordings` -- recordings in (npz, spike times, NWB, pynapple), checked;
- :mod:`.files` -- the model folder ``neurodyn fit-activity`` writes, and decoding with it.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "core": ("fit_activity",),
    "cells": ("place_ring_cells", "profile_values"),
    "torus": ("place_torus_cells",),
    "coordinate": ("smoothed_activity",),
    "relaxation": ("relaxation_rates",),
    "energy": ("learn_energy",),
    "files": ("save_cells", "load_cells", "decode_file", "decode_counts"),
    "recordings": ("read_activity", "from_pynapple", "bin_spikes"),
    "verdict": ("sleep_decoding",),
})
