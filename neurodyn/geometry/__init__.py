"""neurodyn.geometry."""
