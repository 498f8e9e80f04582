"""Recorded-like activity with its ground truth: rat trajectories and populations driven by them.

- :mod:`.trajectories` -- the real rat trajectories that ship in RatInABox's wheel (Sargolini,
  600 s in a 1 m box; Tanni, about 2 h in a 2.5 x 3.5 m box; the optional extra ``data``), with the
  head direction of their movement, or a synthetic trajectory (and a field saying so) without it;
- :mod:`.ground_truth` -- head-direction and grid-cell populations driven by a trajectory: a bump
  on a ring or a torus whose normal fluctuations relax at known rates per mode and whose position
  diffuses about the true heading or position, subsampled cells with their own gains and
  baselines, Poisson counts; the feed-forward control (the same tuning, no recurrence);
- :mod:`.controls` -- data with the attractor destroyed: cells shifted in time independently, or
  cells' identities shuffled at every bin.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "trajectories": ("RatTrajectory", "rat_trajectory", "heading_of", "TRAJECTORIES"),
    "ground_truth": ("GroundTruth", "ActivityData", "ring_activity", "torus_activity"),
    "controls": ("time_shifted", "identity_shuffled", "CONTROLS"),
})
