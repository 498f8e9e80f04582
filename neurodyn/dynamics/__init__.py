"""neurodyn.dynamics."""
