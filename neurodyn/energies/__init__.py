"""Interaction energies ``F(r)`` of Hopfield-compatible networks, one family per module.

- :mod:`.base` -- the interface (value, gradient, Hessian-vector product, config).
- :mod:`.quadratic` -- classic Hopfield ``-1/2 r^T W r`` and the Fourier construction.
- :mod:`.spectral` -- SEAL's per-mode functions of the power spectrum (O(N log N) gradient).
- :mod:`.amplitude` -- the same on the Fourier amplitudes ``|z_k|`` (SEAL's default).
- :mod:`.pointwise` -- ``sum_i h(r_i)``, the diagonal of the Hessian.
- :mod:`.coupling` -- phase-locking terms between modes.
- :mod:`.seal` -- the full SEAL family and the derivation of what it must supply.
- :mod:`.neural` -- general energies given by torch modules and MLPs (autograd gradient).
- :mod:`.registry` -- one registry of the families and :func:`make_energy`.

For every family the autonomous dynamics ``tau du/dt = -u - grad F(r) + b`` descend the energy
``E = F(r) - b.r + sum_i G(r_i)``.
"""

from .amplitude import AmplitudeFourierEnergy
from .base import InteractionEnergy
from .coupling import PhaseLockEnergy, default_terms
from .neural import MLPEnergy, ModuleEnergy
from .pointwise import PointwiseEnergy, rate_range
from .quadratic import FourierQuadraticEnergy, QuadraticEnergy
from .registry import ENERGIES, ENERGY_FAMILIES, Registry, make_energy
from .seal import SealEnergy
from .spectral import LearnedFourierEnergy

__all__ = [
    "InteractionEnergy", "QuadraticEnergy", "FourierQuadraticEnergy", "LearnedFourierEnergy",
    "AmplitudeFourierEnergy",
    "PointwiseEnergy", "PhaseLockEnergy", "SealEnergy", "ModuleEnergy", "MLPEnergy",
    "ENERGIES", "ENERGY_FAMILIES", "Registry", "make_energy", "default_terms", "rate_range",
]
