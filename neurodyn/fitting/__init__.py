"""neurodyn.fitting."""
