"""The input-aware energy audit: E - I.r for a static cue, the power balance
dE/dt = -tau sum phi'(u) udot^2 + sum phi'(u) udot I for a time-varying input, and a network
whose field is not the gradient of its energy failing both."""

import copy

import pytest
import torch

from neurodyn.analysis.diagnostics import EnergyAudit, InputEnergyAudit, energy_audit
from neurodyn.dynamics.inputs import Sine
from neurodyn.dynamics.perturbations import perturbed_states
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies.base import InteractionEnergy
from neurodyn.fitting.core import FitConfig, fit


class _Skewed(InteractionEnergy):
    """``F`` as given, with an antisymmetric coupling added to its gradient only."""

    def __init__(self, inner: InteractionEnergy, eps: float):
        super().__init__(inner.geometry)
        self.inner, self.eps = inner, eps

    def forward(self, r):
        return self.inner(r)

    def grad(self, r):
        return self.inner.grad(r) + self.eps * (torch.roll(r, 1, -1) - torch.roll(r, -1, -1))


@pytest.fixture(scope="module")
def nets():
    net = fit(FitConfig(geometry="ring", n=32, seed=0)).network
    bad = copy.deepcopy(net)
    bad.energy_fn = _Skewed(net.energy_fn, 0.2)
    return net, bad


def _cue(net):
    bump = net.manifold.u_star(torch.tensor([[1.0]], dtype=torch.float64))[0]
    return 0.5 * (bump - bump.mean())


def test_static_cue_passes_the_input_aware_audit_and_a_wrong_gradient_fails(nets):
    net, bad = nets
    u0 = perturbed_states(net.manifold, 3, "noise", 0.3, seed=1)
    cue = _cue(net)
    run = simulate(net, u0, 10.0, 0.1, save_every=1, current=lambda t: cue)
    audit = energy_audit(run)
    assert isinstance(audit, InputEnergyAudit) and audit.kind == "static" and audit.ok
    # control: the same states audited as if autonomous show the cue's work as rises
    blind = copy.copy(run)
    blind.current = None
    assert isinstance(energy_audit(blind), EnergyAudit) and not energy_audit(blind).ok
    wrong = simulate(bad, u0, 10.0, 0.1, save_every=1, current=lambda t: cue, backend="torch")
    audit = energy_audit(wrong)
    assert audit.kind == "static" and not audit.ok and audit.max_increase > 1e-6


def test_sine_velocity_passes_the_power_balance_and_a_wrong_gradient_fails(nets):
    net, bad = nets
    u0 = perturbed_states(net.manifold, 3, "noise", 0.3, seed=1)
    run = simulate(net, u0, 10.0, 0.1, save_every=1, velocity=Sine(0.5, 0.05))
    with pytest.raises(ValueError, match="network"):
        energy_audit(run)  # the autonomous audit of a driven run is refused
    audit = energy_audit(run, network=net)
    assert audit.kind == "power" and audit.ok and audit.tolerance == 1e-6
    assert audit.max_increase <= 1e-6
    wrong = simulate(bad, u0, 10.0, 0.1, save_every=1, velocity=Sine(0.5, 0.05),
                     backend="torch")
    audit = energy_audit(wrong, network=bad)
    assert not audit.ok and audit.max_increase > 1e-4
