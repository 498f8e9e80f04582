"""neurodyn.experiments."""
