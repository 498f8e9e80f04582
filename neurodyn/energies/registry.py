"""One registry of the energy families, and :func:`make_energy` that rebuilds any of them from
its :meth:`~neurodyn.energies.base.InteractionEnergy.config` and state dict."""

from __future__ import annotations

from _runkit import BadInput, Registry

from ..geometry.populations import Geometry
from .amplitude import AmplitudeFourierEnergy
from .base import InteractionEnergy
from .coupling import PhaseLockEnergy
from .neural import MLPEnergy
from .pointwise import PointwiseEnergy
from .quadratic import FourierQuadraticEnergy, QuadraticEnergy
from .seal import SealEnergy
from .spectral import LearnedFourierEnergy
from .template import TemplateEnergy

__all__ = ["Registry", "ENERGIES", "ENERGY_FAMILIES", "make_energy"]


def _needs_state(name):
    def build(config, geometry, state):
        if state is None:
            raise BadInput(f"{name} energy: needs its state dict to be rebuilt")
        key = "weights" if name == "quadratic" else "spectrum"
        cls = QuadraticEnergy if name == "quadratic" else FourierQuadraticEnergy
        if config:
            raise BadInput(f"{name} energy: unknown keys {sorted(config)}; allowed: []")
        return cls(geometry, state[key])
    return build


def _keyed(cls, allowed):
    def build(config, geometry, state):
        if set(config) - set(allowed):
            extra = sorted(set(config) - set(allowed))
            raise BadInput(f"{cls.family} energy: unknown keys {extra}; "
                             f"allowed: {sorted(allowed)}")
        return cls(geometry, **config)
    return build


ENERGIES = Registry("energy family")
ENERGIES.add("quadratic", _needs_state("quadratic"))
ENERGIES.add("fourier", _needs_state("fourier"))
ENERGIES.add("learned", _keyed(LearnedFourierEnergy,
                               ("bandwidth", "degree", "cross_hidden", "seed")))
ENERGIES.add("amplitude", _keyed(AmplitudeFourierEnergy, ("bandwidth", "degree", "eps")))
ENERGIES.add("mlp", _keyed(MLPEnergy, ("hidden", "scale", "seed", "symmetric")))
ENERGIES.add("pointwise", lambda c, g, s: PointwiseEnergy.from_config(c, g))
ENERGIES.add("phaselock", lambda c, g, s: PhaseLockEnergy.from_config(c, g))
ENERGIES.add("seal", lambda c, g, s: SealEnergy.from_config(c, g))
ENERGIES.add("template", lambda c, g, s: TemplateEnergy.from_config(c, g))

ENERGY_FAMILIES = tuple(ENERGIES.names())


def make_energy(config: dict, geometry: Geometry, state: dict | None = None) -> InteractionEnergy:
    """Rebuild an energy from :meth:`InteractionEnergy.config` and an optional state dict.

    Parameters
    ----------
    config : dict
        ``{"family": name, **hyper-parameters}``; unknown families and keys raise ``BadInput``
        naming the valid ones.
    geometry : Geometry
        The population geometry.
    state : dict or None
        The energy's ``state_dict()`` (required by the quadratic families).
    """
    config = dict(config)
    family = config.pop("family", None)
    energy = ENERGIES.get(family)(config, geometry, state)
    if state is not None:
        energy.load_state_dict(state)
    return energy
