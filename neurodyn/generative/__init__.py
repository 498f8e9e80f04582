"""Generative models of population activity, and whether they keep the data's attractor.

:mod:`.states` samples noisy population states of a fitted network (the data), :mod:`.sources`
states driven by a trajectory or recorded counts put on a fitted model's neurons; :mod:`.methods`
generates new states three ways (ambient flow matching on the states; Riemannian flow matching on
the decoded coordinate mapped through the manifold with a learned normal variability; ambient
flow matching followed by relaxation under the network's own dynamics); :mod:`.metrics` judges
generated states against held-out data (normal distance against the data's noise floor, Betti
numbers, intrinsic W2 of the decoded coordinate against its i.i.d. floor, tuning curves,
pairwise correlations, memorization); :mod:`.compare` runs all three side by side;
:mod:`.verdict` says whether the generated activity is an attractor population: the data's own
verdict is true and (a)'s samples as generated match the held-out data ((b) and (c) are shaped
by the network's manifold and are reported beside it).
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "states": ("population_states", "shuffled_states"),
    "methods": ("generate_ambient", "generate_riemannian", "relax_states"),
    "metrics": ("judge_states", "state_homology"),
    "compare": ("compare_generators", "equal_time"),
    "sources": ("driven_states", "recorded_states"),
    "verdict": ("data_verdict", "fitted_verdict"),
})
