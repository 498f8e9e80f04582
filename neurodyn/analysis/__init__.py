"""neurodyn.analysis."""
