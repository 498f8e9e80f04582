"""flows.training."""
