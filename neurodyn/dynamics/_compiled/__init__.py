"""neurodyn.dynamics._compiled."""
