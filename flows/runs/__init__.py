"""flows.runs."""
