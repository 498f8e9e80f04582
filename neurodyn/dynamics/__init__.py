"""Dynamics of a network ``tau du/dt = -u - grad F(r) + b (+ inputs)``: integrating it and what
drives it.

- :mod:`.simulation` -- :func:`~.simulation.simulate` (fixed-step, adaptive ``method=``, noise,
  ``device=``, ``progress=``) and its :class:`~.simulation.SimulationResult`;
- :mod:`.fastpath` -- the compiled fixed-step path :func:`~.simulation.simulate` takes on the CPU;
- :mod:`.perturbations` -- perturbed manifold states;
- :mod:`.inputs` -- velocity inputs (constant, sine, steps, Ornstein-Uhlenbeck, arrays);
- :mod:`.heterogeneity` -- per-neuron disorder of a fitted network;
- :mod:`.device` -- devices and moving networks between them.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "simulation": ("simulate", "METHODS"),
    "perturbations": ("PERTURBATIONS", "perturb", "perturbed_states"),
    "inputs": ("Constant", "Sine", "OrnsteinUhlenbeck", "ArrayVelocity", "parse_velocity"),
    "heterogeneity": ("Heterogeneity", "heterogeneous"),
})
