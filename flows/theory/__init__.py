"""flows.theory."""
