"""--device for simulations: cpu, cuda (CUDA tests skipped on machines without one)."""

import pytest
import torch

from neurodyn.activation import Logistic
from neurodyn.device import check_device, on_device
from neurodyn.energy import LearnedFourierEnergy
from neurodyn.geometry import Ring
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork
from neurodyn.simulation import simulate

no_cuda = not torch.cuda.is_available()


def _net():
    g = Ring(32)
    m = TargetManifold.bump(g, Logistic())
    p = g.power(m.r_star(torch.zeros(1, 1, dtype=torch.float64)))[0]
    e = LearnedFourierEnergy(g, bandwidth=3, scale=p.clamp(min=1e-3))
    e.anchor(p, m.fourier_construction())
    return HopfieldNetwork(g, Logistic(), e, 0.0, 1.0, None, m)


def test_cpu_device_and_refusals():
    net = _net()
    assert check_device("cpu") == torch.device("cpu") and on_device(net, torch.device("cpu")) is net
    with pytest.raises(ValueError, match="unsupported"):
        check_device("meta")
    with pytest.raises(ValueError, match="not a device"):
        check_device("gpu7")
    u0 = net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64)) + 0.1
    assert simulate(net, u0, 1.0, 0.1, device="cpu").u.device.type == "cpu"


@pytest.mark.skipif(not no_cuda, reason="this machine has CUDA: the refusal cannot be tested")
def test_cuda_refused_without_a_device():
    with pytest.raises(ValueError, match="no CUDA device"):
        simulate(_net(), torch.zeros(1, 32, dtype=torch.float64), 1.0, 0.1, device="cuda")


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
def test_cuda_run_matches_cpu():
    net = _net()
    u0 = net.manifold.u_star(torch.zeros(2, 1, dtype=torch.float64)) + 0.1
    a = simulate(net, u0, 5.0, 0.1, device="cuda")
    b = simulate(net, u0, 5.0, 0.1, device="cpu")
    assert a.u.device.type == "cuda" and a.backend == "torch"
    assert float((a.u.cpu() - b.u).abs().max()) < 1e-10
