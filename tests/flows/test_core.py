"""Closed forms and invariants of the flows building blocks."""

import math

import numpy as np
import pytest
import torch

from _runkit import BadInput, Diverged
from flows import (
    EmpiricalOptimalField,
    FieldSpec,
    FlowsError,
    TwoLayerReLUField,
    get_path,
    integrate,
    kernel_h,
    lambda_0,
    log_likelihood,
    memorization,
    sliced_w,
    w1,
    w2,
)
from flows.coupling import ot_permutation, sinkhorn_pairing, squared_distances
from flows.data import load_array, load_dataset, make_splits, moons, source_for
from flows.evaluation.distances import evaluate, path_energy
from flows.optimal import gaussian_optimal_velocity
from flows.training.loop import TrainConfig


@pytest.mark.parametrize("regime", ["theory", "practice"])
@pytest.mark.parametrize("normalize,fourier", [(False, 0), (True, 2)])
@pytest.mark.parametrize("dim", [3, 8])  # activation-pattern products (d p <= 32), chain rule
def test_direct_gradients_equal_autograd(regime, normalize, fourier, dim):
    f = TwoLayerReLUField(FieldSpec(dim, 257, regime, normalize, fourier), seed=1)
    g = torch.Generator().manual_seed(2)
    x, t = torch.randn(64, dim, generator=g), torch.rand(64, generator=g)
    u = torch.randn(64, dim, generator=g)
    loss, gw, ga = f.loss_and_grads(f.features(x, t), u, grad_a=True)
    ref = (f(x, t) - u).square().sum(1).mean()
    ref.backward()
    assert torch.allclose(loss, ref, rtol=1e-5)
    assert torch.allclose(gw, f.W.grad, rtol=1e-4, atol=1e-6)
    if regime == "practice":
        assert torch.allclose(ga, f.A.grad, rtol=1e-4, atol=1e-6)
    else:
        assert f.A.grad is None and set(f.A.unique().tolist()) == {-1.0, 1.0}


def test_field_initialisation_is_seeded():
    a = TwoLayerReLUField(FieldSpec(2, 16), seed=3)
    b = TwoLayerReLUField(FieldSpec(2, 16), seed=3)
    c = TwoLayerReLUField(FieldSpec(2, 16), seed=4)
    assert torch.equal(a.W, b.W) and not torch.equal(a.W, c.W)


@pytest.mark.parametrize("name", ["linear", "vp", "target"])
def test_path_velocity_is_time_derivative(name):
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(50, 2, generator=g).double(), torch.randn(50, 2, generator=g).double()
    t = torch.rand(50, 1, generator=g).double() * 0.9 + 0.05
    path, h = get_path(name, 0.0 if name != "target" else 0.01), 1e-6
    ps = path.sample(x0, x1, t)
    fd = (path.sample(x0, x1, t + h).x_t - path.sample(x0, x1, t - h).x_t) / (2 * h)
    assert torch.allclose(ps.dx_t, fd, atol=1e-6)
    assert torch.allclose(path.sample(x0, x1, torch.zeros_like(t)).x_t, x0)


def test_linear_path_closed_form_and_sigma_min_noise():
    x0, x1, t = torch.zeros(4, 2), torch.ones(4, 2), torch.full((4, 1), 0.25)
    ps = get_path("linear").sample(x0, x1, t)
    assert torch.allclose(ps.x_t, torch.full((4, 2), 0.25)) and torch.allclose(ps.dx_t, x1 - x0)
    noisy = get_path("linear", 0.1).sample(torch.zeros(20000, 1), torch.zeros(20000, 1),
                                           torch.zeros(20000, 1), seed=0)
    assert abs(float(noisy.x_t.std()) - 0.1) < 0.005
    with pytest.raises(FlowsError, match="sigma_min"):
        get_path("linear", 1.5)
    with pytest.raises(BadInput, match="path='curvy'"):
        get_path("curvy")


def test_empirical_optimal_velocity_matches_gaussian_closed_form():
    mean, std = torch.tensor([1.0, -0.5], dtype=torch.float64), 0.7
    g = torch.Generator().manual_seed(0)
    data = mean + std * torch.randn(200_000, 2, generator=g, dtype=torch.float64)
    field = EmpiricalOptimalField(data, chunk=64)
    x = torch.randn(64, 2, generator=g, dtype=torch.float64)
    for t in (0.2, 0.5):
        exact = gaussian_optimal_velocity(x, t, mean, std)
        err = (field(x, t) - exact).abs()
        assert err.mean() < 0.01 and err.max() < 0.15


def test_gaussian_flow_samples_and_exact_likelihood():
    mean, std = torch.tensor([1.0, -2.0]), 0.5
    f = lambda x, t: gaussian_optimal_velocity(x, t, mean, std)  # noqa: E731
    x = integrate(f, torch.randn(20000, 2, generator=torch.Generator().manual_seed(0)),
                  "rk4", 20).x
    assert torch.allclose(x.mean(0), mean, atol=0.02)
    assert torch.allclose(x.std(0), torch.full((2,), std), atol=0.02)
    pts = torch.randn(8, 2, generator=torch.Generator().manual_seed(1))
    ref = torch.distributions.Normal(mean, std).log_prob(pts).sum(1)
    for method in ("exact", "hutchinson"):
        res = log_likelihood(f, pts, "rk4", 40, divergence=method, seed=0)
        assert res.divergence == method and res.nfe == 160
        assert torch.allclose(res.logp, ref, atol=1e-3)


@pytest.mark.parametrize("solver,per_step", [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_nfe_counts_and_accuracy(solver, per_step):
    res = integrate(lambda x, t: -x, torch.ones(3, 1), method=solver, steps=50)
    assert res.nfe == 50 * per_step
    assert abs(float(res.x[0, 0]) - math.exp(-1)) < 0.01


def test_adaptive_solver_and_nonfinite_velocity():
    res = integrate(lambda x, t: -x, torch.ones(3, 1), method="dopri5")
    assert res.nfe > 0 and abs(float(res.x[0, 0]) - math.exp(-1)) < 1e-4
    with pytest.raises(Diverged, match=r"non-finite at t=0.5 \(step 2 of 2") as info:
        integrate(lambda x, t: x / (0.5 - t), torch.ones(2, 1), "euler", 2)
    assert info.value.step == 2 and info.value.parameter == "steps"
    assert "raise steps (now 2)" in str(info.value)
    with pytest.raises(Diverged, match="lower rtol") as info:
        integrate(lambda x, t: x / (0.5 - t), torch.ones(2, 1), "dopri5", max_nfe=None)
    assert info.value.parameter == "rtol"
    import pickle

    again = pickle.loads(pickle.dumps(info.value))  # as sweep workers send it
    assert str(again) == str(info.value) and again.parameter == "rtol"
    # the log-likelihood integrates back from t = 1: t = 0.5 is step 3 of 4
    with pytest.raises(Diverged, match=r"at t=0.5 \(step 3 of 4"):
        log_likelihood(lambda x, t: x / (0.5 - t), torch.ones(2, 1), "euler", steps=4)
    with pytest.raises(BadInput, match="method='leapfrog'.*euler, midpoint, rk4, dopri5"):
        integrate(lambda x, t: x, torch.ones(2, 1), "leapfrog")


def test_empirical_optimal_field_memorizes():
    g = torch.Generator().manual_seed(0)
    train, held = moons(200, g), moons(200, g)
    x = integrate(EmpiricalOptimalField(train), torch.randn(300, 2, generator=g), "midpoint",
                  100).x
    mem = memorization(x, train)
    assert mem.median_ratio < 0.1 and mem.fraction > 0.9
    fresh = memorization(held, train)
    assert fresh.median_ratio > 0.5 and fresh.fraction <= 0.05


def test_kernel_h_hand_computed():
    c60 = math.cos(math.pi / 3)
    z = torch.tensor([[1.0, 0.0], [0.0, 2.0], [c60, math.sin(math.pi / 3)], [-3.0, 0.0]],
                     dtype=torch.float64)
    h = kernel_h(z)
    assert torch.allclose(torch.diag(h), torch.full((4,), 0.5, dtype=torch.float64))
    assert abs(float(h[0, 1])) < 1e-12  # orthogonal
    assert abs(float(h[0, 2]) - 0.5 * (math.pi - math.pi / 3) / (2 * math.pi)) < 1e-12
    assert abs(float(h[0, 3])) < 1e-12  # opposite
    assert torch.allclose(h, h.T)


def test_kernel_h_is_expected_gram_and_lambda0_positive():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(6, 4, generator=g, dtype=torch.float64)
    z = z / z.norm(dim=1, keepdim=True)
    w = torch.randn(400_000, 4, generator=g, dtype=torch.float64)
    act = (w @ z.T > 0).double()
    mc = (z @ z.T) * (act.T @ act) / w.shape[0]
    assert (kernel_h(z) - mc).abs().max() < 5e-3
    assert lambda_0(z) > 0
    assert lambda_0(torch.cat([z, z[:1]])) < 1e-10  # a repeated point makes H singular


def test_ot_permutation_is_true_permutation_and_optimal():
    from scipy.optimize import linear_sum_assignment

    g = torch.Generator().manual_seed(0)
    for b in (2, 17, 256):
        x0, x1 = torch.randn(b, 2, generator=g), moons(b, g)
        c = squared_distances(x0, x1)
        r, col = linear_sum_assignment(c)
        for solver in ("emd", "lsa"):
            sigma = ot_permutation(x0, x1, solver)
            assert sorted(sigma.tolist()) == list(range(b))
            cost = c[np.arange(b), sigma.numpy()].sum()
            assert cost <= np.trace(c) + 1e-9
            assert abs(cost - c[r, col].sum()) < 1e-6 * max(1.0, cost)
    with pytest.raises(FlowsError, match="x1 has shape"):
        ot_permutation(torch.zeros(3, 2), torch.zeros(4, 2))


def test_sinkhorn_pairing_seeded_and_lowers_cost():
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(128, 2, generator=g), moons(128, g)
    j1, j2 = sinkhorn_pairing(x0, x1, 5), sinkhorn_pairing(x0, x1, 5)
    assert torch.equal(j1, j2) and j1.min() >= 0 and j1.max() < 128
    c = squared_distances(x0, x1)
    assert c[np.arange(128), j1.numpy()].sum() < 0.5 * np.trace(c)


def test_wasserstein_closed_forms_and_solver_check():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 2, generator=g)
    shift = torch.tensor([3.0, 4.0])
    assert w2(x, x) < 1e-6
    assert abs(w2(x, x + shift) - 5.0) < 1e-6  # translation: W2 = |shift|
    assert abs(w1(x, x + shift) - 5.0) < 1e-6
    with pytest.raises(RuntimeError, match="num_itermax"):
        w2(x, torch.randn(300, 2, generator=g), num_itermax=3)
    y = torch.randn(300, 2, generator=g)
    assert sliced_w(x, y, seed=1) == sliced_w(x, y, seed=1)
    assert 0 <= sliced_w(x, y, seed=1) <= w2(x, y) + 1e-9
    res = evaluate(x + shift, y, "w2", floor_reference=torch.randn(300, 2, generator=g))
    assert res.floor < 0.5 < 4.0 < res.value
    with pytest.raises(FlowsError, match="dimension"):
        w2(x, torch.zeros(5, 3))


def test_path_energy_of_straight_flow_is_zero():
    shift = torch.tensor([2.0, 0.0])
    pe = path_energy(lambda x, t: shift.expand_as(x), torch.randn(200, 2), "euler", 10)
    assert abs(pe.energy - 4.0) < 1e-5 and pe.normalized < 1e-5


def test_moons_lie_on_make_moons_arcs_at_uniform_positions():
    from scipy.stats import kstest

    m = (moons(4000, 0, noise=0.0).double() + 1) / 2  # back to make_moons' coordinates
    outer = (m.norm(dim=1) - 1).abs() < 1e-5
    inner = ((m - torch.tensor([1.0, 0.5], dtype=torch.float64)).norm(dim=1) - 1).abs() < 1e-5
    assert bool((outer | inner).all()) and abs(float(outer.double().mean()) - 0.5) < 0.04
    s = torch.atan2(m[outer, 1], m[outer, 0]).numpy() / math.pi  # arc position / pi
    assert s.min() >= 0 and s.max() <= 1 and kstest(s, "uniform").pvalue > 1e-3
    noisy = moons(20000, 1).double()
    assert abs(float(noisy.mean(0)[1]) + 0.5) < 0.02  # 2 * 0.25 - 1


@pytest.mark.parametrize("name", ["moons", "8gaussians", "circles", "checkerboard", "pinwheel",
                                  "swissroll", "spirals", "gmm5", "digits"])
def test_datasets_are_seeded_and_finite(name):
    ds = load_dataset(name)
    a, b, c = ds.sample(500, 1), ds.sample(500, 1), ds.sample(500, 2)
    assert a.shape == (500, ds.dim) and torch.isfinite(a).all()
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_digits_split_and_range():
    ds = load_dataset("digits")
    assert ds.pool.shape == (1797, 64) and ds.pool.min() == -1 and ds.pool.max() == 1
    sp = make_splits(ds, 10_000, 1000, seed=0)
    assert sp.heldout.shape == sp.floor.shape == (359, 64)
    assert sp.train.shape[0] + sp.heldout.shape[0] == 1797


def test_user_arrays_are_validated(tmp_path):
    good = np.random.default_rng(0).normal(size=(20, 3))
    np.save(tmp_path / "a.npy", good)
    np.savetxt(tmp_path / "h.csv", good, delimiter=",", header="a,b,c", comments="")
    assert torch.allclose(load_array(tmp_path / "a.npy"), load_array(tmp_path / "h.csv"),
                          atol=1e-6)
    bad = good.copy()
    bad[4, 1] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    with pytest.raises(FlowsError, match="non-finite.*row 4"):
        load_array(tmp_path / "nan.npy")
    np.save(tmp_path / "flat.npy", good[:, 0])
    with pytest.raises(FlowsError, match="2-D"):
        load_array(tmp_path / "flat.npy")
    np.save(tmp_path / "empty.npy", np.zeros((0, 3)))
    with pytest.raises(FlowsError, match="at least one row"):
        load_array(tmp_path / "empty.npy")
    with pytest.raises(FlowsError, match="data='blobs' is not a known dataset"):
        load_dataset("blobs")
    with pytest.raises(FlowsError, match="source='digits' has dimension 64"):
        source_for("digits", 2)


def test_config_contracts():
    with pytest.raises(FlowsError, match=r"\['widht'\] are unknown"):
        TrainConfig.from_dict({"widht": 3})
    with pytest.raises(BadInput, match="coupling='hungarian'"):
        TrainConfig(coupling="hungarian")
    with pytest.raises(FlowsError, match="width=0"):
        TrainConfig(width=0)
    with pytest.raises(FlowsError, match="theory regime"):
        TrainConfig(regime="theory", coupling="ot")
    with pytest.raises(FlowsError, match="seed=None"):
        moons(10, None)
    with pytest.raises(FlowsError, match="n=0"):
        moons(0, 1)
    cfg = TrainConfig(regime="theory").resolved()
    assert (cfg.lr, cfg.n_train, cfg.normalize, cfg.fourier) == (2.0, 256, True, 0)
    cfg = TrainConfig().resolved()
    assert (cfg.lr, cfg.n_train, cfg.normalize, cfg.fourier) == (0.1, 20_000, False, 1)
