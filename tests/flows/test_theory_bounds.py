"""Theory checks that fail where they should and bounds that say when they are vacuous: the NTK
end-ratio check, the computed generalization bound, the Groenwall factor along trajectories."""

import math

import numpy as np
import pytest
import torch

from flows.data import load_dataset
from flows.errors import derive_seed
from flows.field import FieldSpec, TwoLayerReLUField
from flows.theory.excess import (
    Estimate,
    excess_risk,
    optimal_velocity,
    path_draws,
    target_mixture,
)
from flows.theory.genbound import DELTA, RADIUS_GRID, generalization_bound, grid_radius
from flows.theory.ntk import END_RATIO, end_ratio_passes, ntk_comparison
from flows.theory.ntk_gap import gap_sweep
from flows.theory.sweeps import risk_point
from flows.theory.wbound import w2_bound
from flows.training.loop import TrainConfig, train


def _ntk(data="moons", n=64, k=4, width=16, steps=125):
    return ntk_comparison(TrainConfig(data=data, regime="theory", n_train=n, k_draws=k,
                                      width=width, steps=steps, lr=2.0, seed=1, n_eval=1))


def test_ntk_end_ratio_check_fails_where_the_old_rule_passed():
    small, wide = _ntk(width=16), _ntk(width=4096)
    digits = _ntk("digits", n=16, k=2, width=256, steps=500)
    # the old rule (gap <= 4 / sqrt(m)) passed both runs far from the kernel regime
    assert small.within and digits.within
    assert not small.passes and small.end_ratio > END_RATIO
    assert not digits.passes and digits.end_ratio > 10
    # control: a wide network over the same horizon ends where the kernel says
    assert wide.passes and abs(math.log(wide.end_ratio)) < math.log(END_RATIO)
    assert wide.drift.flipped < 0.5 * small.drift.flipped


def test_end_ratio_is_two_sided():
    assert end_ratio_passes([1.0, 0.8], [1.0, 1.0]) == (0.8, False)
    assert end_ratio_passes([1.0, 1.0], [1.0, 0.0])[1] is False  # the kernel reaches 0


def test_generalization_deviation_matches_the_closed_form_for_a_fixed_field():
    """At W = W_0 (radius ~ 0) the Efron-Stein term is exact for a mean of i.i.d. groups:
    deviation = (len(grid) Var(G0) / (n delta))^{1/2}, G0 the group mean of the excess loss."""
    ds, mix = load_dataset("moons"), target_mixture("moons")
    field = TwoLayerReLUField(FieldSpec(2, 64, "theory", True), seed=3)
    n, k = 16, 4
    b = generalization_bound(field, field.W.detach().clone(), ds, mix, n, k, 3.75,
                             groups=3000, seed=1)
    assert b.radius == 0 and b.radius_grid == grid_radius(0.0) == RADIUS_GRID[0]
    g = torch.Generator().manual_seed(99)  # independent draws
    x_t, t, u = path_draws(ds.sample(6000, g).double().repeat_interleave(k, 0), g)
    with torch.no_grad():
        v0 = field(x_t.float(), t.float()).double()
    g0 = ((v0 - u).square().sum(1)
          - (optimal_velocity(mix, x_t, t) - u).square().sum(1)).reshape(-1, k).mean(1)
    expected = math.sqrt(RADIUS_GRID.size * float(g0.var()) / (n * DELTA))
    assert abs(b.deviation / expected - 1) < 0.1
    assert b.rademacher < 0.01 * b.deviation  # ~ the grid's smallest radius
    # control: the same field with its W moved by 1 per neuron has a larger, radius-led bound
    moved = TwoLayerReLUField(FieldSpec(2, 64, "theory", True), seed=3)
    with torch.no_grad():
        moved.W.add_(torch.nn.functional.normalize(torch.randn(64, 4, generator=g), dim=1))
    far = generalization_bound(moved, field.W.detach().clone(), ds, mix, n, k, 3.75,
                               groups=500, seed=1)
    assert abs(far.radius - 8.0) < 1e-4 and far.radius_grid >= far.radius
    assert far.bound > 10 * b.bound


def test_generalization_bound_holds_and_says_it_is_vacuous():
    cfg = TrainConfig(data="moons", regime="theory", n_train=16, k_draws=2, width=64,
                      steps=40, seed=2, n_eval=1)
    p = risk_point(cfg, Estimate(3.744, 0.0), n_test=2000, samples=False, gen_groups=500)
    assert p.gen_bound_holds and p.gen_bound >= p.excess_gap
    assert p.gen_bound == p.gen_rademacher + p.gen_deviation
    assert p.gen_bound_ratio == p.gen_bound / 3.744 and p.gen_bound_vacuous
    assert p.gen_radius >= p.gen_distance / math.sqrt(64)  # sqrt(m) max row >= ||dW||_F/...


def test_trajectory_factor_is_the_closed_form_for_a_linear_field():
    """v(x, t) = a x: mu = a for every pair, so G_traj = G = ((e^{2a} - 1) / (2a))^{1/2}."""
    mix = target_mixture("normal")
    x0 = torch.randn(20, 2, generator=torch.Generator().manual_seed(0))
    a = 0.6
    field = lambda x, t: a * x  # noqa: E731
    ex = excess_risk(field, load_dataset("normal"), 2000, seed=1)
    b = w2_bound(field, mix, x0, ex, steps=20, pairs=20)
    closed = math.sqrt(math.expm1(2 * a) / (2 * a))
    assert abs(b.factor - closed) < 1e-4 and abs(b.factor_trajectory - closed) < 1e-4


def test_trajectory_factor_is_tighter_and_still_bounds_the_coupling():
    ds, mix = load_dataset("moons"), target_mixture("moons")
    cfg = TrainConfig(data="moons", regime="theory", n_train=32, k_draws=4, width=256,
                      steps=100, seed=0)
    res = train(cfg, progress=False)
    x0 = torch.randn(100, 2, generator=torch.Generator().manual_seed(derive_seed(0, "x0")))
    b = w2_bound(res.field, mix, x0, excess_risk(res.field, ds, 5000), steps=10, pairs=100)
    assert b.factor_trajectory < 0.8 * b.factor  # the global factor's slack is real
    assert b.bound_trajectory >= b.coupling > 0
    assert np.isclose(b.bound_trajectory / b.bound, b.factor_trajectory / b.factor)


@pytest.mark.slow
def test_ntk_check_over_seeds_fails_small_passes_wide_with_a_slope_interval():
    cfg = TrainConfig(data="moons", regime="theory", n_train=64, k_draws=4, steps=125, lr=2.0,
                      n_eval=1)
    s = gap_sweep([16, 256, 4096], cfg, list(range(1, 9)))
    assert s.passes[0] == 0.0 and s.passes[-1] == 1.0 and s.end_ratio_threshold == END_RATIO
    assert len(s.gap_slopes) == 8 and s.gap_slope + s.gap_slope_ci95 < 0  # falls with m
    assert s.gap_slope - s.gap_slope_ci95 > -0.5  # slower than m^-1/2 at this horizon
