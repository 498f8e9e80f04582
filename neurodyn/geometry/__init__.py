"""Populations of neurons on a ring or a torus: preferred phases, Fourier transforms, shifts.

- :mod:`.base` -- :class:`~.base.Geometry`, the interface and its transforms;
- :mod:`.populations` -- :class:`~.populations.Ring`, :class:`~.populations.Torus` (hex or
  square lattice) and :func:`~.populations.make_geometry`.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "base": ("Geometry", "wrap_angle", "MIN_NEURONS"),
    "populations": ("Ring", "Torus", "make_geometry", "LATTICES", "sheet_corners"),
})
