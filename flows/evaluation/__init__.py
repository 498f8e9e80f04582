"""flows.evaluation."""
