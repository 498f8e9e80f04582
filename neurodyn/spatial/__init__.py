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
    "positions": ("check_positions", "load_positions", "ratinabox_arrays"),
    "gridcells.run": ("run_grid_cells",),
    "gridcells.results": ("GridCellsResult", "ModuleResult"),
    "phases": ("wave_vectors", "position_to_phase", "phase_velocity", "phase_to_position_delta",
        "phase_track_to_positions", "grid_pattern"),
    "decoding": ("module_wave_vectors", "module_phases", "log_likelihood", "DecodedPositions",
        "decode_position", "code_error"),
    "ratemaps": ("RateMaps", "rate_maps", "autocorrelogram"),
    "gridscores": ("GridScore", "GridScores", "gridness", "grid_scores", "fraction_above",
        "ROTATIONS"),
    "gridnull": ("SMOOTHING_BINS", "GridClassification", "shuffled_gridness", "shifted_null"),
    "cues": ("Landmark", "cue_profile", "cue_current", "pull_rate"),
    "anchoring": ("AnchoringResult", "landmark_anchoring", "ConflictResult", "cue_conflict",
        "followed_fraction_theory"),
    "head_direction": ("TuningCurves", "tuning_curves", "mean_vector", "HDClassification",
        "classify_head_direction"),
})
