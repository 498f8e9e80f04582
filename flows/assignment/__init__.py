"""flows.assignment."""
