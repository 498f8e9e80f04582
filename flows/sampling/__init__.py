"""flows.sampling."""
