"""neurodyn.spatial.gridcells."""
