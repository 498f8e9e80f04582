"""Flow matching on the flat circle and torus: geodesics, target velocities, intrinsic W2."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest
import torch

from flows.riemannian import (
    geodesic,
    intrinsic_floor,
    intrinsic_w2,
    log_map,
    sample_torus_flow,
    train_torus_flow,
    wrap,
)

G = torch.Generator().manual_seed(0)


def _pairs(k: int, n: int = 500):
    x0 = 2 * math.pi * torch.rand(n, k, generator=G, dtype=torch.float64)
    x1 = 2 * math.pi * torch.rand(n, k, generator=G, dtype=torch.float64)
    return x0, x1


@pytest.mark.parametrize("k", [1, 2])
def test_geodesics_stay_on_the_torus_and_join_their_ends(k):
    x0, x1 = _pairs(k)
    for t in np.linspace(0, 1, 11):
        x = geodesic(x0, x1, float(t))
        assert float(x.min()) >= 0 and float(x.max()) < 2 * math.pi  # on [0, 2 pi)^k
    assert torch.allclose(geodesic(x0, x1, 0.0), x0, atol=1e-12)
    end = log_map(geodesic(x0, x1, 1.0), x1).abs().max()
    assert float(end) < 1e-12
    # the geodesic is the shortest way: each coordinate moves at most pi
    assert float(log_map(x0, x1).abs().max()) <= math.pi


@pytest.mark.parametrize("k", [1, 2])
def test_target_velocity_matches_finite_differences(k):
    x0, x1 = _pairs(k)
    t = torch.rand(len(x0), 1, generator=G, dtype=torch.float64) * 0.98 + 0.01
    h = 1e-6
    fd = log_map(geodesic(x0, x1, t - h), geodesic(x0, x1, t + h)) / (2 * h)
    assert float((fd - log_map(x0, x1)).abs().max()) < 1e-6


def test_intrinsic_w2_matches_pot_on_the_circle_and_a_closed_form():
    a = torch.rand(200, generator=G, dtype=torch.float64) * 2 * math.pi
    b = (torch.randn(200, generator=G, dtype=torch.float64) * 0.7 + 1.0) % (2 * math.pi)
    # POT's own circle solver, on [0, 1) coordinates (lengths scaled by 2 pi)
    loss = ot.wasserstein_circle(a.numpy() / (2 * math.pi), b.numpy() / (2 * math.pi), p=2)
    ref = 2 * math.pi * math.sqrt(float(np.ravel(loss)[0]))  # POT returns W_2^2 on [0, 1)
    assert abs(intrinsic_w2(a, b) - ref) < 1e-6 * ref
    grid = 2 * math.pi * np.arange(64) / 64  # a rotation shorter than half the spacing
    assert abs(intrinsic_w2(grid, grid + 0.04) - 0.04) < 1e-12
    # across 0: the wrapped distance, not the 2 pi - 0.04 of the real line
    assert abs(intrinsic_w2([0.02], [2 * math.pi - 0.02]) - 0.04) < 1e-12


def test_a_torus_flow_learns_a_bimodal_circle_distribution():
    g = torch.Generator().manual_seed(1)

    def draw(n):  # n points of each mode, shuffled
        x = torch.cat([torch.randn(n, 1, generator=g) * 0.3 + 1.0,
                       torch.randn(n, 1, generator=g) * 0.3 + 4.0])
        return wrap(x[torch.randperm(2 * n, generator=g)])

    flow = train_torus_flow(draw(600), steps=300, batch=128, width=64, seed=2)
    x, nfe = sample_torus_flow(flow, 300, steps=5, seed=3)
    assert nfe == 10 and x.shape == (300, 1)
    held = draw(600)
    floor, spread = intrinsic_floor(held, 300)
    uniform = intrinsic_w2(2 * math.pi * torch.rand(300, 1, generator=g), held[:300])
    w2 = intrinsic_w2(x, held[:300])
    assert w2 < floor + 4 * spread and w2 < uniform / 3  # control: the source itself is far
