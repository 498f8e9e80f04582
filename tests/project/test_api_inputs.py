"""The Python API refuses what it would otherwise silently mangle: complex states and velocities
of the wrong shape."""

from __future__ import annotations

import pytest
import torch

import flows
from neurodyn import FitConfig, fit, simulate


def test_simulate_refuses_a_complex_start():
    net = fit(FitConfig(n=16, steps=1, batch=2, check_kappa=False), progress=False).network
    u0 = net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    assert simulate(net, u0, 0.2, 0.1, progress=False).u.shape[1] == 1  # the real state runs
    with pytest.raises(TypeError, match="complex"):
        simulate(net, u0.to(torch.complex128), 0.2, 0.1, progress=False)


@pytest.mark.parametrize("field", [lambda x, t: torch.ones(x.shape[0], 1),  # broadcast (N, 1)
                                   lambda x, t: x.sum()], ids=["column", "scalar"])
def test_integrate_refuses_a_velocity_of_another_shape(field):
    with pytest.raises(flows.FlowsError, match=r"same shape \(N, d\)"):
        flows.integrate(field, torch.zeros(5, 2), steps=2)


def test_integrate_still_solves_a_linear_field():
    x = flows.integrate(lambda x, t: -x, torch.ones(3, 2), method="rk4", steps=50).x
    assert torch.allclose(x, torch.full((3, 2), torch.e ** -1), atol=1e-6)


@pytest.mark.parametrize("metric", ["w2", "w1"])
def test_distances_refuse_complex_points_and_a_zero_iteration_budget(metric):
    f = getattr(flows, metric)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(20, 2, generator=g), torch.randn(20, 2, generator=g)
    assert f(x, y) > 0  # real points are measured
    with pytest.raises(flows.FlowsError, match="real points"):
        f(x.to(torch.complex64), y)
    with pytest.raises(flows.FlowsError, match="real points"):
        f(x, y.numpy() + 1j)
    with pytest.raises(flows.FlowsError, match="num_itermax=0"):
        f(x, y, num_itermax=0)
