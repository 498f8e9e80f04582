"""Warm starts of the exact assignment: the guessed prices, and answers that do not depend on
them."""

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from flows.assignment import auction as A
from flows.errors import FlowsError

pytestmark = pytest.mark.skipif(not A.available(), reason="the auction needs numba")


def _optimum(x, y):
    c = ((x[:, None] - y[None]) ** 2).sum(-1)
    return c, c[linear_sum_assignment(c)].sum()


def _shifted_normals(rng, n, b):
    return rng.standard_normal((n, 2)), rng.standard_normal((n, 2)) + b


def test_the_map_recovers_the_potential_of_a_translation():
    # x ~ N(0, I) -> y ~ N(b, I): the optimal map is x + b and the price of C = |x - y|^2 is
    # P(y) = -2 b . y + const (grad P(y) = 2 (T^-1(y) - y) = -2 b)
    from flows.assignment.warmstart import PriceMap

    rng = np.random.default_rng(3)
    b = np.array([1.5, -0.5])
    pm = PriceMap.fit([_shifted_normals(rng, 512, b) for _ in range(4)])
    # the control: the same targets reached by the opposite translation, from N(2 b, I)
    wrong = PriceMap.fit([(x + 2 * b, y) for x, y in
                          (_shifted_normals(rng, 512, b) for _ in range(4))])
    y = rng.standard_normal((2000, 2)) + b
    truth = -2.0 * y @ b

    def error(m):
        e = m(y) - truth
        ok = np.isfinite(e)
        assert ok.mean() > 0.95
        return np.median(np.abs(e[ok] - np.median(e[ok])))

    spread = np.median(np.abs(truth - np.median(truth)))
    assert error(pm) < 0.1 * spread
    assert error(wrong) > 0.5 * spread


def test_the_map_guesses_a_new_batch_prices_better_than_a_mismatched_map():
    from flows.assignment.warmstart import PriceMap
    from flows.data import load_dataset

    moons = load_dataset("moons")
    rng = np.random.default_rng(5)

    def batch(seed, shift=0.0):
        return rng.standard_normal((512, 2)) + shift, moons.sample(512, seed).double().numpy()

    pm = PriceMap.fit([batch(s) for s in range(4)])
    # the control: the same targets, reached from a source shifted by 3 (another potential)
    other = PriceMap.fit([batch(s, np.array([3.0, 0.0])) for s in range(4, 8)])
    errors = []
    for s in range(8, 14):
        x, y = batch(s)
        _, p = A.assignment_and_prices(x, y)
        typical = A._kernels()[1].reduced_squared_euclidean(x, y, False)[1]
        row = []
        for m in (pm, other):
            e = m(y) - p
            assert np.isfinite(e).mean() > 0.99
            e = e[np.isfinite(e)]
            row.append(np.median(np.abs(e - np.median(e))) / typical)
        errors.append(row)
    good, bad = np.median(errors, axis=0)
    assert good < 0.08 and bad > 3 * good, errors


def test_a_batch_offsets_from_the_reference_means_are_put_back():
    """Moving a batch's sources by a and its targets by b changes the guess by 2 (a - b) . y up
    to a constant (the exact change of the prices under the squared Euclidean cost); a batch
    shifted from the reference distributions is guessed far better with its sources given than
    by the map alone (the control), and so, by a little, is an unshifted one."""
    from flows.assignment.warmstart import PriceMap
    from flows.data import load_dataset

    moons = load_dataset("moons")
    rng = np.random.default_rng(11)

    def batch(seed, shift=0.0):
        return rng.standard_normal((512, 2)) + shift, moons.sample(512, seed).double().numpy()

    pm = PriceMap.fit([batch(s) for s in range(4)])
    x, y = batch(4)
    a, b = np.array([0.05, -0.02]), np.array([-0.03, 0.04])
    change = pm(y + b, x + a) - pm(y, x) - 2.0 * (y @ (a - b))
    ok = np.isfinite(change)
    assert ok.mean() > 0.95 and np.ptp(change[ok]) < 1e-9
    alone = pm(y + b) - pm(y) - 2.0 * (y @ (a - b))  # the map alone does not follow the move
    assert np.ptp(alone[np.isfinite(alone)]) > 1e-3

    def error(guess, p, typical):
        e = guess - p
        e = e[np.isfinite(e)]
        return np.sqrt(np.mean((e - e.mean()) ** 2)) / typical

    for shift, factor in ((0.3, 0.5), (0.0, 1.0)):
        with_x, without = [], []
        for s in range(5, 13):
            x, y = batch(s, shift)
            _, p = A.assignment_and_prices(x, y)
            typical = A._kernels()[1].reduced_squared_euclidean(x, y, False)[1]
            with_x.append(error(pm(y, x), p, typical))
            without.append(error(pm(y), p, typical))
        assert np.mean(with_x) < factor * np.mean(without), (shift, with_x, without)


@pytest.mark.parametrize("kind", ["map", "mismatched map", "random", "huge", "all unknown"])
def test_a_warm_started_assignment_is_optimal_whatever_the_start(kind):
    from flows.assignment.warmstart import PriceMap

    rng = np.random.default_rng(11)
    pm = PriceMap.fit([_shifted_normals(rng, 256, np.array([2.0, 0.0])) for _ in range(4)])
    for case in range(4):
        x, y = _shifted_normals(rng, 256, np.array([2.0, 0.0]))
        if case == 1:
            y[3] = [1e4, 0.0]  # a far outlier, outside the map
        elif case == 2:
            y = np.round(y * 2) / 2  # ties (a coarse grid, still many distinct points)
        elif case == 3:
            y[::2] = y[1::2]  # duplicates
        prices = {"map": pm(y), "mismatched map": pm(-y),
                  "random": rng.standard_normal(256) * 10,
                  "huge": np.where(np.arange(256) % 3 == 0, 1e12, 0.0),
                  "all unknown": np.full(256, np.nan)}[kind]
        c, best = _optimum(x, y)
        sigma, p = A.assignment_and_prices(x, y, prices)
        assert sorted(sigma.tolist()) == list(range(256))
        assert c[np.arange(256), sigma].sum() == pytest.approx(best, rel=1e-12, abs=1e-9)
        assert p is not None and p.shape == (256,)


def test_final_prices_certify_the_assignment():
    # every row's target minimises C_ij + P_j up to the auction's final eps
    rng = np.random.default_rng(13)
    x, y = _shifted_normals(rng, 300, np.array([1.0, 1.0]))
    c, _ = _optimum(x, y)
    sigma, p = A.assignment_and_prices(x, y)
    eps_f = A.DELTA * A._kernels()[1].reduced_squared_euclidean(x, y, False)[1] / 300

    def slack(prices):
        values = c + prices[None, :]
        return values[np.arange(300), sigma] - values.min(1)

    # eps_f in the auction's arithmetic (single precision where the cost's range allows)
    rounding = 2.0**-20 * (c.max() + np.abs(p).max())
    assert slack(p).min() >= -1e-9 and slack(p).max() <= eps_f + rounding
    assert slack(np.zeros(300)).max() > 100 * eps_f  # the control: prices that certify nothing


def test_bad_prices_and_points_are_refused():
    from flows.assignment.warmstart import PriceMap

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((64, 2)), rng.standard_normal((64, 2))
    with pytest.raises(FlowsError, match="one price per point"):
        A.squared_euclidean_assignment(x, y, np.zeros(63))
    pm = PriceMap.fit([(x, y)])
    with pytest.raises(FlowsError, match="dimension 2"):
        pm(np.zeros((5, 3)))
    with pytest.raises(FlowsError, match="x has shape"):
        pm(y, np.zeros((5, 3)))
    with pytest.raises(FlowsError, match="non-empty"):
        pm(y, np.zeros((0, 2)))
    with pytest.raises(FlowsError, match="reach"):
        PriceMap.fit([(x, y)], reach=-1)
    far = pm(np.array([[1e3, 0.0], [np.nan, 0.0], [0.0, 0.0]]))
    assert np.isnan(far[:2]).all() and np.isfinite(far[2])
    assert PriceMap.fit([(rng.standard_normal((64, 4)), rng.standard_normal((64, 4)))]) is None


def _cfg(**kw):
    from flows.training.loop import TrainConfig

    base = dict(data="moons", coupling="ot", steps=12, width=32, batch=128, n_eval=64,
                fourier=0, seed=4)
    base.update(kw)
    return TrainConfig(**base)


def test_warm_started_training_gives_the_weights_of_cold_starts(monkeypatch):
    import flows.training.batches as batches
    from flows.training.loop import prepare_data, train

    cfg = _cfg()
    splits, source = prepare_data(cfg)
    assert batches.ot_warm_start(cfg.resolved(), splits.train, source, 0) is not None
    warm = train(cfg, splits=splits, source=source, progress=False, workers=2)
    monkeypatch.setattr(batches, "WARM_BATCHES", 0)
    assert batches.ot_warm_start(cfg.resolved(), splits.train, source, 0) is None
    cold = train(cfg, splits=splits, source=source, progress=False, workers=0)
    assert torch.equal(warm.field.W, cold.field.W) and torch.equal(warm.field.A, cold.field.A)


def test_no_warm_start_where_it_cannot_apply():
    import flows.training.batches as batches
    from flows.training.loop import prepare_data

    for cfg in (_cfg(coupling="independent"), _cfg(ot_solver="emd"), _cfg(data="digits")):
        splits, source = prepare_data(cfg)
        assert batches.ot_warm_start(cfg.resolved(), splits.train, source, 0) is None
    cfg = _cfg()
    splits, source = prepare_data(cfg)
    assert batches.ot_warm_start(cfg.resolved(), splits.train, source, 0, device="meta") is None
