"""Space: an agent in a box, its positions, and the grid and head-direction cells a torus or ring
model makes of them.

- :mod:`.agent` -- the box and generated exploration; :mod:`.positions` -- user and RatInABox
  positions as trajectories;
- :mod:`.gridcells` -- path integration in a box by a torus model (:func:`run_grid_cells`);
- :mod:`.phases` -- positions and grid phases; :mod:`.decoding` -- positions from module phases;
- :mod:`.ratemaps`, :mod:`.gridscores`, :mod:`.gridnull` -- rate maps, gridness and its null;
- :mod:`.cues`, :mod:`.anchoring` -- landmark cues and the anchoring they give;
- :mod:`.head_direction` -- tuning curves and classification of head-direction cells.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "agent": ("Box", "Trajectory", "generate_trajectory"),
    "positions": ("load_positions",),
    "gridcells.run": ("run_grid_cells",),
    "decoding": ("decode_position",),
    "ratemaps": ("rate_maps",),
    "gridscores": ("gridness", "grid_scores"),
    "cues": ("Landmark",),
    "anchoring": ("landmark_anchoring", "cue_conflict"),
    "head_direction": ("tuning_curves", "classify_head_direction"),
})
