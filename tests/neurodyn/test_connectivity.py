"""Connectivity as it is: the state-dependent effective connectivity (rank, spectrum) and the best
fixed circulant network (profile, errors), with closed forms and controls."""

import math

import pytest
import torch

from neurodyn.analysis.connectivity import (
    diagonal_average,
    effective_connectivity,
    fit_circulant,
    shell_spread,
)
from neurodyn.analysis.diagnostics import connectivity_profile
from neurodyn.experiments.seal import fourier_construction_network
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.fitting.plan import build_manifold
from neurodyn.geometry.populations import Torus


@pytest.fixture(scope="module")
def ring_nets():
    return {k: fit(FitConfig(geometry="ring", n=64, seed=0, kappa=k)).network for k in (1.0, 2.0)}


def test_effective_connectivity_is_rank_one_at_kappa_1_and_diagonal_dominated_at_2(ring_nets):
    # H_F = (kappa - 1) D^-1 - kappa e e^T / (e^T D e): rank one at kappa = 1
    one = effective_connectivity(ring_nets[1.0])
    assert one.rank == 1 and one.top_share > 1 - 1e-9
    assert one.singular_values[1] < 1e-5 * one.singular_values[0]
    assert one.circulant_error > 0.5  # far from any fixed translation-invariant W
    two = effective_connectivity(ring_nets[2.0])
    assert two.rank == 64 and two.diagonal_share > 0.9


def test_fixed_circulant_is_a_cosine_on_the_manifold_and_shows_the_profile_off_it(ring_nets):
    net = ring_nets[1.0]
    # on the manifold alone, u* = a + c cos: the best W reproduces every fixed point and has
    # only modes 0 and 1 (closed form)
    exact = fit_circulant(net, count=16, strength=0.0)
    assert exact.relative_error < 1e-9 and math.isnan(exact.field_error)
    k = exact.profile.kernel
    th = 2 * math.pi * torch.arange(64, dtype=torch.float64) / 64
    basis = torch.stack([torch.ones_like(th), torch.cos(th)], 1)
    coef = torch.linalg.lstsq(basis, k[:, None]).solution
    assert float((basis @ coef)[:, 0].sub(k).abs().max()) < 1e-9 * float(k.abs().max())
    near = fit_circulant(net, count=32, strength=0.3)
    assert near.w0 > 0 and near.min_far < 0
    assert len([z for z in near.zero_crossings if 0 < z < math.pi]) == 1
    # a fixed W misses much of the learned restoring field, and says so
    assert 0.2 < near.field_error < 1.0 and near.relative_error < 0.2


def test_circulant_network_is_recovered_exactly():
    # control: for a network that IS a fixed circulant, W_eff is that circulant and the fit
    # recovers its kernel
    m = build_manifold(FitConfig(geometry="ring", n=64))
    net = fourier_construction_network(m)
    eff = effective_connectivity(net)
    assert eff.circulant_error < 1e-10
    fixed = fit_circulant(net, count=16, strength=0.3)
    truth = diagonal_average(eff.matrix, net.geometry)
    assert torch.allclose(fixed.profile.kernel, truth, atol=1e-8 * float(truth.abs().max()))
    assert fixed.relative_error < 1e-8 and fixed.field_error < 1e-7


class _SixtyDegrees(Torus):
    """The sheet drawn with its axes at 60 degrees (the convention the DFT triad does not use)."""

    def metric(self, dtype=torch.float64):
        return torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=dtype)


def test_hex_connectivity_shells_agree_on_the_sheet_geometry():
    m = build_manifold(FitConfig(geometry="torus", n=(16, 16), lattice="hex"))
    net = fourier_construction_network(m)
    kernel = connectivity_profile(net).kernel
    assert shell_spread(kernel, net.geometry) <= 1e-9
    # control: the symmetries of a sheet with axes at 60 degrees do not leave the kernel alone
    assert shell_spread(kernel, _SixtyDegrees(16, 16, "hex")) > 1e-2
    fixed = fit_circulant(net, count=8, strength=0.3)
    assert shell_spread(fixed.profile.kernel, net.geometry) <= 1e-9
