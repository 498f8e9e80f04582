"""Flow matching on the flat circle and torus ``T^k = [0, 2 pi)^k``.

:mod:`.torus` holds the geometry (wrapping, logarithm and exponential maps, geodesic paths and
their velocities, the intrinsic W2 distance with its i.i.d. floor); :mod:`.flow` the periodic
two-layer ReLU field, its training by Riemannian conditional flow matching (geodesic paths from
a uniform source, optionally paired by exact OT under the wrapped cost) and its sampling.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "torus": ("wrap", "log_map", "exp_map", "geodesic", "intrinsic_w2", "intrinsic_floor"),
    "flow": ("PeriodicField", "TorusFlow", "train_torus_flow", "sample_torus_flow"),
})
