"""flows.plotting."""
