"""The theory's claims as numbers that can fail: the NTK loss curve, the irreducible part of the
objective and the excess risk, the Groenwall W2 bound."""

import math

import numpy as np
import pytest
import torch

from flows.data import Dataset, eight_gaussians, load_dataset
from flows.errors import derive_seed
from flows.field import FieldSpec, TwoLayerReLUField
from flows.theory.excess import (
    Estimate,
    excess_risk,
    objective,
    optimal_velocity,
    path_draws,
    population_minimum,
    target_mixture,
)
from flows.theory.kernel import kernel_h
from flows.theory.ntk import curve_gap, kernel_drift, ntk_comparison, ntk_loss_curve
from flows.theory.wbound import groenwall_factor, jacobian, w2_bound
from flows.training.loop import TrainConfig, fixed_objective, prepare_data, train


def _theory(**kw):
    base = dict(data="moons", regime="theory", n_train=16, k_draws=2, width=16384, steps=60,
                lr=0.2, seed=0)
    return TrainConfig(**(base | kw))


def test_ntk_curve_constant_is_two_on_a_very_wide_network():
    cfg = _theory().resolved()
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    z, u = fixed_objective(splits.train[:16], source, 2, "linear", 0.0, res.field.spec,
                           derive_seed(0, "objective"))
    start = TwoLayerReLUField(res.field.spec, seed=derive_seed(0, "init"))
    with torch.no_grad():
        r0 = start.forward_z(z).double() - u.double()
    h = kernel_h(z)
    obs = res.losses.numpy()
    gaps = {c: curve_gap(obs, ntk_loss_curve(h, r0, 0.2, obs.size, c)) for c in (1, 2, 4)}
    assert gaps[2] < 0.005 and gaps[2] < 0.1 * min(gaps[1], gaps[4])


def test_empirical_kernel_approaches_the_limit_with_width():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(24, 4, generator=g)
    z = z / z.norm(dim=1, keepdim=True)
    dev = []
    for m in (64, 16384):
        f = TwoLayerReLUField(FieldSpec(2, m, "theory", True), seed=1)
        dev.append(kernel_drift(f.W, f.W, f.A, z).start_vs_limit)
    assert dev[1] < 0.25 * dev[0] and dev[1] < 0.05  # ~ m^{-1/2}: 16x fewer at 256x width


def test_ntk_check_fails_outside_the_kernel_regime():
    far = ntk_comparison(_theory(n_train=32, k_draws=4, width=2048, steps=300, lr=2.0))
    near = ntk_comparison(_theory(n_train=32, k_draws=4, width=2048, steps=100, lr=0.05))
    assert not far.within and far.gap > far.tolerance
    assert near.within and near.gap < 0.1 * far.gap
    assert far.drift.flipped > near.drift.flipped > 0
    assert far.requirements.width > 1e12 * 2048  # the theorem's width, far beyond any run


def test_optimal_velocity_reaches_the_population_minimum():
    ds = load_dataset("moons")
    mix = target_mixture("moons")
    lstar = population_minimum(ds, n_mc=8000, seed=0)
    x_t, t, u = path_draws(ds.sample(8000, 3), 4)
    loss = (optimal_velocity(mix, x_t, t) - u).square().sum(1)
    obj = Estimate(float(loss.mean()), float(loss.std()) / math.sqrt(8000))
    assert abs(obj.value - lstar.value) < 3 * math.hypot(obj.se, lstar.se)
    assert 3.6 < lstar.value < 3.9


def test_excess_risk_is_objective_minus_minimum():
    ds = load_dataset("8gaussians")
    zero = lambda x, t: torch.zeros_like(x)  # noqa: E731
    ex = excess_risk(zero, ds, n_test=20_000, seed=1)
    obj = objective(zero, ds.sample(40_000, 2), 3)
    lstar = population_minimum(ds, n_mc=20_000, seed=4)
    se = math.sqrt(ex.se**2 + obj.se**2 + lstar.se**2)
    assert abs(obj.value - lstar.value - ex.value) < 3 * se
    mix = target_mixture("8gaussians")
    assert excess_risk(lambda x, t: optimal_velocity(mix, x, t).float(), ds, 2000).value < 1e-8


def test_gaussian_velocity_matches_mixture_of_one():
    from flows.optimal import gaussian_optimal_velocity

    mix = target_mixture("normal")
    x, t = torch.randn(50, 2, dtype=torch.float64), torch.rand(50, 1, dtype=torch.float64)
    ref = gaussian_optimal_velocity(x, t, torch.zeros(2, dtype=torch.float64), 1.0)
    assert torch.allclose(optimal_velocity(mix, x, t), ref)


@pytest.mark.slow
def test_empirical_minimum_near_the_closed_form():
    ds = Dataset("pool", 2, pool=eight_gaussians(4000, 7))
    est = population_minimum(ds, n_mc=20_000)
    exact = population_minimum(load_dataset("8gaussians"), n_mc=40_000)
    assert abs(est.value - exact.value) < est.error + 3 * math.hypot(est.se, exact.se)


def test_jacobian_of_a_linear_field():
    a = torch.tensor([[1.0, 2.0], [-3.0, 0.5]])
    j = jacobian(lambda x, t: x @ a.T, torch.randn(4, 2), 0.3)
    assert torch.allclose(j, a.double().expand(4, 2, 2))


def test_groenwall_factor_matches_constant_rate():
    mu = 0.7
    assert abs(groenwall_factor(np.full(100, mu), 0.01)
               - math.sqrt(math.expm1(2 * mu) / (2 * mu))) < 1e-9


def test_w2_bound_holds_and_vanishes_for_the_exact_field():
    ds = load_dataset("moons")
    mix = target_mixture("moons")
    cfg = TrainConfig(data="moons", regime="theory", n_train=32, k_draws=4, width=256,
                      steps=100, seed=0)
    res = train(cfg, progress=False)
    x0 = torch.randn(100, 2, generator=torch.Generator().manual_seed(5))
    b = w2_bound(res.field, mix, x0, excess_risk(res.field, ds, 5000), steps=10, pairs=100)
    assert b.bound >= b.coupling > 0
    exact = lambda x, t: optimal_velocity(mix, x, t).float()  # noqa: E731
    b0 = w2_bound(exact, mix, x0, excess_risk(exact, ds, 2000), steps=10, pairs=50)
    assert b0.excess < 1e-8 and b0.coupling < 1e-4  # the exact field: both flows coincide


def test_objective_draws_are_those_of_the_training_objective():
    from flows.field import FieldSpec, features
    from flows.theory.sweeps import objective_draws
    from flows.training.loop import fixed_objective, prepare_data

    cfg = TrainConfig(data="moons", regime="theory", n_train=32, k_draws=3, width=8).resolved()
    splits, source = prepare_data(cfg)
    spec = FieldSpec(2, 8, "theory", True, cfg.fourier)
    z, u = fixed_objective(splits.train[:32], source, 3, cfg.path, cfg.sigma_min, spec, 11)
    x_t, t, uu = objective_draws(splits.train[:32], source, 3, cfg.path, cfg.sigma_min, 11)
    assert torch.equal(features(x_t.float(), t.float(), spec.fourier, spec.normalize), z)
    assert torch.equal(uu.float(), u)
    # control: another seed gives other draws
    assert not torch.equal(objective_draws(splits.train[:32], source, 3, cfg.path,
                                           cfg.sigma_min, 12)[2].float(), u)


def test_gap_floor_is_taken_on_the_draws_of_the_run():
    from flows.runs.measure import _gap_floor
    from flows.theory.excess import target_mixture
    from flows.theory.sweeps import objective_draws
    from flows.training.loop import theory_test_loss

    cfg = TrainConfig(data="moons", regime="theory", n_train=16, k_draws=2, width=8,
                      n_eval=64).resolved()
    splits, source = prepare_data(cfg)
    field = TwoLayerReLUField(FieldSpec(2, 8, "theory", True, cfg.fourier), seed=3)

    def loss(v, x1, tag):
        x_t, t, u = objective_draws(x1, source, 2, cfg.path, cfg.sigma_min,
                                    derive_seed(cfg.seed, tag))
        with torch.no_grad():
            return float((v(x_t, t).double() - u).square().sum(1).mean())

    # the rebuilt test draws are those of the run's own test loss (and of its training loss)
    net = lambda x, t: field(x.float(), t.float())  # noqa: E731
    assert loss(net, splits.heldout[:16], "test-objective") == pytest.approx(
        theory_test_loss(cfg, splits, source, field), rel=1e-5)
    z, u = fixed_objective(splits.train[:16], source, 2, cfg.path, cfg.sigma_min, field.spec,
                           derive_seed(cfg.seed, "objective"))
    with torch.no_grad():
        train_loss = float((field.forward_z(z) - u).square().sum(1).mean())
    assert loss(net, splits.train[:16], "objective") == pytest.approx(train_loss, rel=1e-5)
    # so the floor is the raw gap of u* at these sizes: far from 0 for 16 points x 2 draws
    floor = _gap_floor(cfg, target_mixture("moons"))
    assert abs(floor) > 0.05


@pytest.mark.slow
def test_ntk_gap_depends_on_the_horizon_not_on_the_step():
    def gap(lr, steps):
        return ntk_comparison(TrainConfig(data="moons", regime="theory", n_train=16, k_draws=4,
                                          steps=steps, lr=lr, seed=0, width=256)).gap

    same_horizon = gap(0.5, 400), gap(2.0, 100)  # lr x steps = 200 both
    assert abs(same_horizon[0] - same_horizon[1]) < 0.05 * same_horizon[0]
    # control: the same step for four times as long leaves the kernel's curve much further
    assert gap(2.0, 400) > 1.5 * max(same_horizon)
