"""Interaction energies ``F(r)`` of Hopfield-compatible networks, one family per module.

- :mod:`.base` -- the interface (value, gradient, Hessian-vector product, config).
- :mod:`.quadratic` -- classic Hopfield ``-1/2 r^T W r`` and the Fourier construction.
- :mod:`.spectral` -- SEAL's per-mode functions of the power spectrum (O(N log N) gradient).
- :mod:`.amplitude` -- the same on the Fourier amplitudes ``|z_k|`` (SEAL's default).
- :mod:`.pointwise` -- ``sum_i h(r_i)``, the diagonal of the Hessian.
- :mod:`.coupling` -- phase-locking terms between modes.
- :mod:`.seal` -- the full SEAL family and the derivation of what it must supply.
- :mod:`.template` -- a learned template, ``-max_psi <r, w(psi)>``: any bump shape.
- :mod:`.neural` -- general energies given by torch modules and MLPs (autograd gradient).
- :mod:`.registry` -- one registry of the families and :func:`make_energy`.

For every family the autonomous dynamics ``tau du/dt = -u - grad F(r) + b`` descend the energy
``E = F(r) - b.r + sum_i G(r_i)``. The names below are resolved on first use: importing one
module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "base": ("InteractionEnergy",),
    "quadratic": ("QuadraticEnergy", "FourierQuadraticEnergy"),
    "spectral": ("LearnedFourierEnergy",),
    "amplitude": ("AmplitudeFourierEnergy",),
    "pointwise": ("PointwiseEnergy",),
    "coupling": ("PhaseLockEnergy",),
    "seal": ("SealEnergy",),
    "template": ("TemplateEnergy",),
    "neural": ("ModuleEnergy", "MLPEnergy"),
    "registry": ("ENERGIES", "make_energy"),
})
