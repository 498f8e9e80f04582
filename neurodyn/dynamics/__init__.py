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
    "simulation": ("SimulationResult", "simulate", "NonFiniteStateError", "METHODS"),
    "fastpath": ("AVAILABLE", "GAIN_RTOL", "Plan", "plan_for", "run_plan", "velocity_table"),
    "perturbations": ("PERTURBATIONS", "perturb", "perturbation_direction", "perturbed_states",
        "random_strengths"),
    "inputs": ("Velocity", "Constant", "Sine", "Steps", "OrnsteinUhlenbeck", "ArrayVelocity",
        "parse_velocity", "VELOCITY_KINDS", "reference_phase"),
    "heterogeneity": ("Heterogeneity", "PerNeuronGain", "PerturbedEnergy", "heterogeneous"),
    "device": ("DEVICES", "check_device", "on_device", "module_tensors"),
})
