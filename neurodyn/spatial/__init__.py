"""neurodyn.spatial."""
