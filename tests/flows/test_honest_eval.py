"""Evaluation that cannot flatter: i.i.d. data, floors with spread, stable Sinkhorn, memorization
against the whole training set."""

import math

import numpy as np
import ot
import pytest
import torch

from flows.data import DATASETS, Dataset, load_dataset, moons
from flows.errors import FlowsError
from flows.evaluation.distances import w2
from flows.evaluation.entropic import entropic_ot, sinkhorn_divergence
from flows.evaluation.floors import noise_floor
from flows.evaluation.nearest import memorization, two_nearest

GENERATED = [k for k, v in DATASETS.items() if v is not None]


def _grid_moons(n, g):
    """The old, evenly spaced moons: a control the i.i.d. checks must reject."""
    s1 = torch.linspace(0, math.pi, n // 2, dtype=torch.float64)
    s2 = torch.linspace(0, math.pi, n - n // 2, dtype=torch.float64)
    x = torch.cat([torch.stack([torch.cos(s1), torch.sin(s1)], 1),
                   torch.stack([1 - torch.cos(s2), 0.5 - torch.sin(s2)], 1)])
    x = x[torch.randperm(n, generator=g)] + 0.05 * torch.randn(n, 2, generator=g,
                                                                dtype=torch.float64)
    return (2 * x - 1).float()


def _iid_checks(ds: Dataset, n: int = 200) -> tuple[bool, bool]:
    """(single draws match a block, halves of one block match two independent blocks)."""
    floor = noise_floor(ds, w2, n, pairs=8, seed=1)
    hi = floor.mean + 4 * floor.std
    singles = torch.cat([ds.sample(1, 100 + i) for i in range(n)])
    ref = ds.sample(n, 7)
    block = ds.sample(2 * n, 8)
    return w2(singles, ref) < hi, abs(w2(block[:n], block[n:]) - floor.mean) < 4 * floor.std


@pytest.mark.parametrize("name", GENERATED)
def test_every_generator_draws_iid(name):
    assert _iid_checks(load_dataset(name)) == (True, True)


def test_iid_checks_reject_evenly_spaced_moons():
    assert _iid_checks(Dataset("grid", 2, sampler=_grid_moons)) == (False, False)


def test_moons_floor_matches_an_independent_computation():
    ds = load_dataset("moons")
    fl = noise_floor(ds, w2, 500, pairs=5, seed=0)
    rng = np.random.default_rng(123)
    ref_vals = []
    for i in range(12):  # POT directly, on draws from other seeds
        a = moons(500, 1000 + 2 * i).double().numpy()
        b = moons(500, 1001 + 2 * i).double().numpy()
        w = np.full(500, 1 / 500)
        ref_vals.append(math.sqrt(ot.emd2(w, w, ot.dist(a, b), numItermax=10**7)))
    indep = float(np.mean(ref_vals))
    assert abs(fl.mean - indep) / indep < 0.25  # 5 against 12 pairs; the CLI test is tighter
    assert fl.std > 0 and len(fl.values) == 5 and fl.method == "independent draws"
    sample = ds.sample(500, int(rng.integers(1 << 30)))
    value = w2(sample, ds.sample(500, 99))
    assert abs(value - fl.mean) < 3 * fl.std + 0.02  # an i.i.d. sample scores at its floor


def test_finite_floor_uses_disjoint_subsets():
    ds = load_dataset("digits")
    fl = noise_floor(ds, lambda x, y: float(torch.cdist(x, y).min()), 1000, pairs=2, seed=0)
    assert fl.method == "disjoint subsets"
    assert (fl.n_samples, fl.n_reference) == (1797 - 898, 898)
    ds2 = Dataset("tiny", 1, pool=torch.arange(10.0)[:, None])
    fl2 = noise_floor(ds2, lambda x, y: float(torch.cdist(x, y).min()), 5, pairs=3, seed=0)
    assert min(fl2.values) > 0  # disjoint: no row is in both halves


def test_entropic_ot_equals_primal_with_entropy():
    g = torch.Generator().manual_seed(0)
    a, b = moons(150, g).double().numpy(), moons(170, g).double().numpy()
    eps = 0.1
    wa, wb = np.full(150, 1 / 150), np.full(170, 1 / 170)
    m = ot.dist(a, b)
    p = ot.sinkhorn(wa, wb, m, eps, method="sinkhorn_log", numItermax=100000, stopThr=1e-12)
    primal = (p * m).sum() + eps * (p * np.log(p / np.outer(wa, wb))).sum()
    assert abs(entropic_ot(a, b, eps).value - primal) < 1e-5


def test_sinkhorn_far_clouds_and_noise_against_digits():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(300, 2, generator=g), torch.randn(300, 2, generator=g)
    far = sinkhorn_divergence(x + torch.tensor([10.0, 0.0]), y)
    assert 50 < far < 110  # W2^2 = 100 between the distributions
    assert abs(sinkhorn_divergence(x, x)) < 1e-6
    digits = load_dataset("digits")
    fl = noise_floor(digits, sinkhorn_divergence, 300, pairs=2, seed=0)
    noise = sinkhorn_divergence(torch.randn(300, 64, generator=g), digits.pool[:300])
    assert noise > fl.mean + 10 * max(fl.std, 0.1 * fl.mean)


def test_sinkhorn_failure_is_an_error_not_a_number():
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(100, 2, generator=g), torch.randn(100, 2, generator=g) + 5
    with pytest.raises(RuntimeError, match="did not converge"):
        entropic_ot(x, y, eps=1e-3, max_iter=3)


def test_two_nearest_matches_brute_force():
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(50, 3, generator=g), torch.randn(300, 3, generator=g)
    d1, d2 = two_nearest(x, y, chunk=7)
    ref = torch.cdist(x.double(), y.double()).sort(1).values
    assert torch.allclose(d1, ref[:, 0]) and torch.allclose(d2, ref[:, 1])


@pytest.mark.parametrize("n_train", [50, 2000, 20_000])
@pytest.mark.parametrize("data", ["moons", "spirals"])
def test_memorization_whatever_n_train(data, n_train):
    ds, g = load_dataset(data), torch.Generator().manual_seed(4)
    train = ds.sample(n_train, g)
    copies = train[torch.randint(0, n_train, (300,), generator=g)]
    assert memorization(copies, train).fraction >= 0.9
    fresh = memorization(ds.sample(1500, g), train, seed=5)
    assert fresh.fraction <= 0.05  # calibrated to a 2% null rate
    # the control: the fixed ratio 1/3 flags about 3^-2 = 1/9 of the same fresh 2-D points
    assert fresh.fraction_fixed > 0.08
    assert 1.5 < fresh.null_dimension < 2.6 and fresh.criterion < 1 / 3
    # the leave-one-out baseline is the same null, measured on training points
    se = math.sqrt(0.02 * 0.98 / 1500 + 0.02 * 0.98 / min(2000, n_train))
    assert abs(fresh.fraction - fresh.baseline) < 4 * se


def test_memorization_sees_near_copies_and_a_partial_memorizer():
    ds, g = load_dataset("moons"), torch.Generator().manual_seed(6)
    train = ds.sample(5000, g)
    d1, _ = two_nearest(train, train, exclude_self=True)
    idx = torch.randint(0, 5000, (1000,), generator=g)
    step = torch.randn(1000, 2, generator=g, dtype=torch.float64)
    near = train[idx].double() + 0.02 * d1[idx, None] * step / step.norm(dim=1, keepdim=True)
    assert memorization(near, train).fraction >= 0.9  # 2% of the spacing off a training point
    half = torch.cat([train[idx[:500]], ds.sample(500, g)])
    assert abs(memorization(half, train).fraction - 0.5) < 0.05


def test_memorization_criterion_checks():
    train = torch.randn(100, 2, generator=torch.Generator().manual_seed(0))
    with pytest.raises(FlowsError, match="criterion='loose'"):
        memorization(train, train, criterion="loose")
    with pytest.raises(FlowsError, match="null_points=0"):
        memorization(train, train, null_points=0)
    with pytest.raises(FlowsError, match="null_rate=1.5"):
        memorization(train, train, null_rate=1.5)
    fixed = memorization(train[:10] + 0.5, train, criterion=1 / 3, null_points=0)
    assert math.isnan(fixed.baseline) and fixed.criterion == 1 / 3


def test_memorization_fresh_samples_in_higher_dimension():
    digits = load_dataset("digits").pool
    perm = torch.randperm(1797, generator=torch.Generator().manual_seed(0))
    train, fresh = digits[perm[400:]], digits[perm[:400]]
    assert memorization(fresh, train).fraction <= 0.05
    assert memorization(train[:300], train).fraction >= 0.9
    gmm = load_dataset("gmm8")
    assert memorization(gmm.sample(1000, 1), gmm.sample(4000, 2)).fraction <= 0.05
