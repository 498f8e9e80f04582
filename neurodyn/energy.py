"""Interaction energies (the families live in :mod:`neurodyn.energies`, one per module)."""

from .energies import *  # noqa: F403
from .energies import __all__  # noqa: F401
