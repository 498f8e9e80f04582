"""Exact assignment by auction and sparse finish, checked against closed forms and scipy."""

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from flows import TrainConfig, train
from flows.assignment.auction import auction_assignment, squared_euclidean_assignment
from flows.coupling import ot_permutation
from flows.errors import FlowsError

pytest.importorskip("numba")


def _cost(c, sigma):
    return float(c[np.arange(len(sigma)), sigma].sum())


def _instances(seed, count):
    """Point clouds of many shapes, with ties: rounded points, shared points, integer costs."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n, d = int(rng.integers(1, 70)), int(rng.integers(1, 6))
        x = rng.standard_normal((n, d))
        y = rng.standard_normal((n, d)) * rng.uniform(0.1, 3) + rng.uniform(-2, 2)
        kind = trial % 4
        if kind == 1:
            x, y = np.round(x), np.round(y)
        if kind == 2:
            y = x[rng.permutation(n)].copy()
        c = ((x[:, None] - y[None]) ** 2).sum(-1)
        if kind == 3:
            c = np.round(rng.random((n, n)) * 5)
        yield kind, x, y, c


@pytest.mark.parametrize("seed", [0, 1])
def test_auction_reaches_the_optimal_cost_of_scipy(seed):
    for kind, x, y, c in _instances(seed, 120):
        sigma = auction_assignment(c)
        n = len(c)
        assert sorted(sigma.tolist()) == list(range(n))
        ref = _cost(c, linear_sum_assignment(c)[1])
        assert _cost(c, sigma) == pytest.approx(ref, rel=1e-12, abs=1e-12), kind
        if kind != 3:
            s2 = squared_euclidean_assignment(x, y)
            assert _cost(c, s2) == pytest.approx(ref, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("list_length", [0, 1, 3, 200])
def test_every_candidate_list_length_reaches_the_optimum(list_length):
    # lists of one entry (bound = the second-best value), a few, and longer than the row
    for kind, _x, _y, c in _instances(3, 60):
        ref = _cost(c, linear_sum_assignment(c)[1])
        sigma = auction_assignment(c, list_length=list_length)
        assert sorted(sigma.tolist()) == list(range(len(c)))
        assert _cost(c, sigma) == pytest.approx(ref, rel=1e-12, abs=1e-12), kind


def test_small_batches_match_brute_force_with_ties_and_outliers():
    # every permutation of up to 7 points: costs on a coarse grid (many ties), a far outlier
    import itertools

    rng = np.random.default_rng(30)
    for trial in range(150):
        n = int(rng.integers(2, 8))
        x, y = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
        if trial % 3 == 0:
            x, y = np.round(x), np.round(y)
        elif trial % 3 == 1:
            y[int(rng.integers(n))] = [1e4, -2e3]
        c = ((x[:, None] - y[None]) ** 2).sum(-1)
        best = min(_cost(c, np.array(p)) for p in itertools.permutations(range(n)))
        for sigma in (squared_euclidean_assignment(x, y), auction_assignment(c),
                      auction_assignment(c, list_length=1)):
            assert sorted(sigma.tolist()) == list(range(n))
            assert _cost(c, sigma) == pytest.approx(best, rel=1e-12, abs=1e-9), trial


@pytest.mark.parametrize("single", [False, True])
def test_the_slack_graph_holds_an_optimal_assignment(single):
    # every optimal assignment lies in {r_ij <= S}; scipy's (found independently) must too; the
    # graph read from the lists is the whole set {r <= S + margin}, in double precision even
    # when the auction bid in single precision (lowered list bounds)
    from flows.assignment import auction as A

    auction, matching = A._kernels()
    rng = np.random.default_rng(31)
    for kind in range(3):
        x, y = rng.standard_normal((300, 2)), rng.standard_normal((300, 2)) * 1.5
        if kind == 1:
            x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
        elif kind == 2:
            y = y[rng.integers(0, 20, 300)]
        c, typical, top, _, _, c32 = matching.reduced_squared_euclidean(x, y, True)
        n = len(c)
        if single:  # bids in single precision, the graph from the float64 cost
            sigma, p, ok, cand, _, bound = auction.auction(
                c32, np.zeros(n, np.float32), A.EPS0 * typical, A.DELTA * typical / n, A.THETA,
                10**8, A.LIST_LENGTH, A.LIST_PHASE, np.int32, np.inf)
            p, bound = A._to_double(p, bound, top)
        else:
            sigma, p, ok, cand, _, bound = auction.auction(
                c, np.zeros(n), A.EPS0 * typical, A.DELTA * typical / n, A.THETA, 10**8,
                A.LIST_LENGTH, A.LIST_PHASE, np.int64, np.inf)
        assert ok and sorted(sigma.tolist()) == list(range(n))
        margin = 4 * (n + 2) * np.finfo(float).eps * (top + np.abs(p).max())
        indptr, ind, val = auction.slack_graph(c, p, sigma, cand, bound, margin)
        r = c + p[None] - (c + p[None]).min(1, keepdims=True)
        slack = r[np.arange(n), sigma].sum()
        assert (val <= slack + margin).all() and (val >= 0).all()
        edges = {(i, j) for i in range(n) for j in ind[indptr[i]:indptr[i + 1]]}
        # the graph is exactly {r <= S + margin}, and holds scipy's optimal assignment
        inside = np.nonzero(r <= slack + margin)
        assert edges == {(int(i), int(j)) for i, j in zip(*inside, strict=True)}
        opt = linear_sum_assignment(c)[1]
        assert all((i, int(opt[i])) in edges for i in range(n)), kind


def test_one_dimensional_matching_is_the_sorted_one():
    # closed form: for the squared cost on the line the optimal assignment is monotone
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(300), rng.exponential(size=300)
    sigma = squared_euclidean_assignment(x[:, None], y[:, None])
    expected = np.empty(300, np.int64)
    expected[np.argsort(x)] = np.argsort(y)
    assert np.array_equal(sigma, expected)


def test_a_shuffled_copy_is_matched_back_exactly():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((512, 2))
    perm = rng.permutation(512)
    sigma = squared_euclidean_assignment(x, x[perm])
    assert np.array_equal(perm[sigma], np.arange(512))


def test_batch_of_512_matches_pot_network_simplex():
    g = torch.Generator().manual_seed(6)
    x0, x1 = torch.randn(512, 2, generator=g), torch.rand(512, 2, generator=g) * 4 - 2
    c = ((x0[:, None].double() - x1[None].double()) ** 2).sum(-1).numpy()
    costs = {s: _cost(c, ot_permutation(x0, x1, ot_solver=s).numpy())
             for s in ("auction", "emd", "lsa")}
    assert costs["auction"] == pytest.approx(costs["emd"], rel=1e-12)
    assert costs["auction"] == pytest.approx(costs["lsa"], rel=1e-12)


def test_bad_input_is_refused():
    with pytest.raises(FlowsError, match="square"):
        auction_assignment(np.ones((2, 3)))
    with pytest.raises(FlowsError, match="non-finite"):
        auction_assignment(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(FlowsError, match="theta"):
        auction_assignment(np.eye(3), theta=1.0)
    with pytest.raises(FlowsError, match="list_length"):
        auction_assignment(np.eye(3), list_length=-1)
    with pytest.raises(FlowsError, match="shapes"):
        squared_euclidean_assignment(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(FlowsError, match="non-finite"):
        squared_euclidean_assignment(np.array([[np.inf]]), np.array([[0.0]]))


def test_degenerate_problems():
    assert auction_assignment(np.array([[3.0]])).tolist() == [0]
    assert sorted(auction_assignment(np.zeros((5, 5))).tolist()) == list(range(5))


def test_prepared_batches_give_the_same_run_for_any_number_of_workers():
    cfg = TrainConfig(data="moons", coupling="ot", steps=30, batch=64, width=32, n_train=500,
                      n_eval=50, seed=2)
    runs = [train(cfg, progress=False, workers=w) for w in (0, 1, 3)]
    for r in runs[1:]:
        assert torch.equal(r.field.W, runs[0].field.W)
        assert torch.equal(r.losses, runs[0].losses)


def test_without_numba_the_coupling_falls_back_to_pot(monkeypatch):
    import flows.assignment.auction

    monkeypatch.setattr(flows.assignment.auction, "available", lambda: False)
    g = torch.Generator().manual_seed(8)
    x0, x1 = torch.randn(64, 3, generator=g), torch.randn(64, 3, generator=g)
    assert torch.equal(ot_permutation(x0, x1), ot_permutation(x0, x1, ot_solver="emd"))


def test_costs_spanning_many_orders_of_magnitude():
    # one far outlier makes the largest cost 1e14 times the typical one
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((200, 2)), rng.standard_normal((200, 2))
    y[0] = [1e7, 0.0]
    c = ((x[:, None] - y[None]) ** 2).sum(-1)
    ref = _cost(c, linear_sum_assignment(c)[1])
    assert _cost(c, squared_euclidean_assignment(x, y)) == pytest.approx(ref, rel=1e-12)
    assert _cost(c, auction_assignment(c)) == pytest.approx(ref, rel=1e-12)


def test_outliers_ties_and_duplicates_stay_exact():
    # the reduced, factored cost and the median scale must not change the optimum
    rng = np.random.default_rng(11)
    n = 256
    for kind in range(4):
        x, y = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
        if kind == 0:
            y[3] = [1e4, -2e3]
        elif kind == 1:
            x[5] = [-1e4, 0.0]
        elif kind == 2:
            y = y[rng.integers(0, 16, n)]
        else:
            x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
        c = ((x[:, None] - y[None]) ** 2).sum(-1)
        ref = _cost(c, linear_sum_assignment(c)[1])
        s = squared_euclidean_assignment(x, y)
        assert sorted(s.tolist()) == list(range(n))
        assert _cost(c, s) == pytest.approx(ref, rel=1e-12, abs=1e-9), kind
        assert _cost(c, auction_assignment(c)) == pytest.approx(ref, rel=1e-12, abs=1e-9), kind


@pytest.mark.parametrize("kind", ["moons", "outlier", "all tied", "duplicates", "grid"])
def test_batches_of_512_match_scipy_and_pot_with_ties_and_duplicates(kind):
    # the training batches' size: the compiled cost, auction and finish against two other exact
    # solvers; ties and duplicated points leave many optimal assignments, all of the same cost
    import ot

    from flows.data import load_dataset

    rng = np.random.default_rng(21)
    n = 512
    for seed in range(2):
        x = rng.standard_normal((n, 2))
        y = load_dataset("moons").sample(n, seed).double().numpy()
        if kind == "outlier":
            y[int(rng.integers(n))] = [1e4, -3e3]
        elif kind == "all tied":
            y[:] = y[0]
        elif kind == "duplicates":
            y = y[rng.integers(0, 32, n)]
        elif kind == "grid":
            x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
        c = ((x[:, None] - y[None]) ** 2).sum(-1)
        ref = _cost(c, linear_sum_assignment(c)[1])
        w = np.full(n, 1.0 / n)
        emd = float((ot.emd(w, w, c, numItermax=10**7) * c).sum()) * n
        assert emd == pytest.approx(ref, rel=1e-9)
        for sigma in (squared_euclidean_assignment(x, y), auction_assignment(c)):
            assert sorted(sigma.tolist()) == list(range(n))
            assert _cost(c, sigma) == pytest.approx(ref, rel=1e-12, abs=1e-9), kind


def test_the_reduced_cost_is_the_cost_less_column_then_row_minima():
    from flows.assignment._matching_kernels import reduced_squared_euclidean

    rng = np.random.default_rng(22)
    for d, far in ((1, 0.0), (2, 0.0), (2, 1e4), (5, 0.0)):
        x, y = rng.standard_normal((300, d)), rng.standard_normal((300, d))
        y[7, 0] += far
        c = ((x[:, None] - y[None]) ** 2).sum(-1)
        direct = c - c.min(0)
        direct -= direct.min(1, keepdims=True)
        r, typical, top, finite, _, r32 = reduced_squared_euclidean(x, y, True)
        assert finite and (r >= 0).all() and (r.min(1) == 0).all()
        assert np.abs(r - direct).max() <= 1e-9 * max(1.0, far**2)
        assert top == r.max() and 0 < typical <= top
        assert np.array_equal(r32, r.astype(np.float32))


def _scan_cases():
    """Rows of non-negative values with ties, zeros, a single entry and huge spreads."""
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 17, 64, 515):
        for kind in range(5):
            c = rng.random((3, n))
            p = rng.random(n)
            if kind == 1:  # ties: rounded values, zero prices
                c, p = np.round(c * 4), np.zeros(n)
            elif kind == 2:  # every value equal
                c, p = np.zeros((3, n)), np.zeros(n)
            elif kind == 3:  # values from 1e-300 to 1e300
                c = 10.0 ** rng.uniform(-300, 300, (3, n))
            elif kind == 4:  # the least value twice, late in the row
                c[:, -1] = c[:, max(0, n - 2)] = -1.0
                c -= c.min()
            yield c, p


@pytest.mark.parametrize("ftype, itype", [(np.float64, np.int64), (np.float32, np.int32)])
def test_row_scans_give_the_best_two_values_and_the_first_best_object(ftype, itype):
    """The scans compare values by their bits (in double and in single precision); the control
    is a plain float sort."""
    from flows.assignment._auction_kernels import _best_two, _build_list
    from flows.assignment._bits import scratch

    for c, p in _scan_cases():
        with np.errstate(over="ignore"):  # in single precision 1e300 is inf, 1e-300 is 0
            c, p = c.astype(ftype), p.astype(ftype)
        n = c.shape[1]
        for i in range(c.shape[0]):
            v = c[i] + p
            order = np.lexsort((np.arange(n), v))  # by value, then index
            w1, w2, j1 = _best_two(c, p, i, scratch(n, ftype, itype))
            assert (w1, j1) == (v[order[0]], order[0])
            assert w2 == (v[order[1]] if n > 1 else v[order[0]])
            k = 4
            # the starting gap is only a guess (none, or another row's: far too small or
            # large); the list must not depend on it
            for gap in (0.0, 1e-30, 1e-3, 1e30):
                cand = np.zeros((c.shape[0], min(k, n)), np.int64)
                cost = np.zeros((c.shape[0], min(k, n)), ftype)
                out = _build_list(c, p, i, cand, cost, gap, scratch(n, ftype, itype),
                                  np.empty(n, np.int64), np.empty(min(k, n) + 1, ftype),
                                  np.empty(min(k, n) + 1, np.int64))
                assert out[:3] == (w1, w2, j1)
                assert cand[i].tolist() == order[: min(k, n)].tolist()
                assert out[3] == (v[order[k]] if n > k else np.inf)


@pytest.mark.parametrize("kind", ["duplicates", "grid", "all tied", "both duplicated"])
def test_few_distinct_points_are_solved_as_a_transport_problem(kind):
    """Batches of few distinct points go through the transport between them; the answer is
    an optimal permutation (scipy's cost) that pairs x_i with a copy of its planned target."""
    from flows.assignment.auction import _few_distinct

    rng = np.random.default_rng(3)
    n = 256
    x, y = rng.standard_normal((n, 2)), rng.standard_normal((n, 2)) + 1
    if kind == "duplicates":
        y = y[rng.integers(0, 12, n)]
    elif kind == "grid":
        x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
    elif kind == "all tied":
        y[:] = y[0]
    else:
        x, y = x[rng.integers(0, 20, n)], y[rng.integers(0, 9, n)]
    sigma = _few_distinct(x, y)
    assert sigma is not None
    assert sorted(sigma.tolist()) == list(range(n))
    c = ((x[:, None] - y[None]) ** 2).sum(-1)
    best = c[linear_sum_assignment(c)].sum()
    assert _cost(c, sigma) == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert np.array_equal(squared_euclidean_assignment(x, y), sigma)


def test_distinct_points_stay_with_the_auction():
    from flows.assignment.auction import _few_distinct

    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((256, 2)), rng.standard_normal((256, 2))
    assert _few_distinct(x, y) is None  # 256 x 256 distinct pairs: the auction's problem
    assert _few_distinct(x[:40], y[:40][np.arange(40) % 3]) is None  # below 64 points


def test_an_uncertified_transport_plan_is_not_used(monkeypatch):
    """Control on the certificate: a transport plan that is integral with the right marginals
    but not optimal (its duals do not certify it) is refused, and the auction answers."""
    import ot

    from flows.assignment.auction import _few_distinct

    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((128, 2)), (rng.standard_normal((128, 2)) + 1)[
        rng.integers(0, 8, 128)]
    real_emd = ot.emd

    def shuffled_emd(a, b, cost, **kw):
        plan, log = real_emd(a, b, cost, **kw)
        rows = [0, int(np.argmax(plan[:, plan[0].argmax()] == 0))]  # a row with another target
        plan[rows] = plan[rows[::-1]]  # both rows hold one copy: the marginals still hold
        return plan, log

    monkeypatch.setattr(ot, "emd", shuffled_emd)
    assert _few_distinct(x, y) is None
    c = ((x[:, None] - y[None]) ** 2).sum(-1)
    sigma = squared_euclidean_assignment(x, y)
    assert _cost(c, sigma) == pytest.approx(c[linear_sum_assignment(c)].sum(), rel=1e-12)


def test_overflowing_distances_among_few_distinct_points_are_refused_quietly(recwarn):
    x, y = np.zeros((128, 2)), np.zeros((128, 2))
    x[0] = 1e200  # two distinct sources, one target: the transport path's distances overflow
    with pytest.raises(FlowsError, match="overflow"):
        squared_euclidean_assignment(x, y)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_single_precision_list_bounds_are_lowered_below_every_double_value():
    """Values distinct in float64 that round to one float32: the list's bound, read in single
    precision, lies above float64 values outside the list (the control) until lowered."""
    from flows.assignment import auction as A
    from flows.assignment._auction_kernels import _build_list
    from flows.assignment._bits import scratch

    n, k = 64, 4
    rng = np.random.default_rng(2)
    c = (1.0 - 1e-9 * rng.permutation(n))[None, :]  # all round to 1.0 in float32
    p32 = np.zeros(n, np.float32)
    cand, cost = np.zeros((1, k), np.int64), np.zeros((1, k), np.float32)
    out = _build_list(c.astype(np.float32), p32, 0, cand, cost, 0.0,
                      scratch(n, np.float32, np.int32), np.empty(n, np.int64),
                      np.empty(k + 1, np.float32), np.empty(k + 1, np.int64))
    bound = np.array([out[3]])
    outside = np.setdiff1d(np.arange(n), cand[0])
    assert (c[0, outside] < bound[0]).any()  # the control: the raw bound is not a bound
    prices, lowered = A._to_double(p32, bound, float(c.max()))
    assert prices.dtype == np.float64 and (c[0, outside] + prices[outside] >= lowered[0]).all()


def test_a_price_past_the_limit_stops_the_auction_and_the_double_auction_answers():
    """In single precision the auction stops (ok False) once a price passes p_limit, where a
    bid might no longer raise it; the float64 auction has no limit, and the solve falls back to
    it."""
    from flows.assignment import auction as A

    auction, matching = A._kernels()
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((128, 2)), rng.standard_normal((128, 2)) + 1
    c, typical, top, _, _, c32 = matching.reduced_squared_euclidean(x, y, True)
    n = len(c)
    args = (A.EPS0 * typical, A.DELTA * typical / n, A.THETA, 10**8, A.LIST_LENGTH, A.LIST_PHASE)
    assert not auction.auction(c32, np.zeros(n, np.float32), *args, np.int32, 1e-3 * top)[2]
    assert auction.auction(c32, np.zeros(n, np.float32), *args, np.int32, np.inf)[2]
    # a single-precision cost a million times too large: its prices pass the limit at once
    sigma, _ = A._solve(c, typical, top, A.DELTA, A.THETA, A.EPS0, A.LIST_LENGTH, None,
                        c32 * np.float32(1e6))
    assert _cost(c, sigma) == pytest.approx(_cost(c, linear_sum_assignment(c)[1]), rel=1e-12)


def test_distinct_projections_count_like_numpy_unique():
    """The screen for batches of few distinct points counts distinct projections with a hash
    set; the control is np.unique. Points at -0.0 and 0.0 are one point; NaN or inf means no
    count."""
    from flows.assignment._matching_kernels import distinct_projections

    rng = np.random.default_rng(11)
    probe = np.array([0.7548776662466927, 0.5698402909980532])
    for n, distinct in ((64, 3), (512, 40), (512, 512), (1000, 999)):
        x = rng.standard_normal((distinct, 2))[rng.integers(0, distinct, n)]
        y = np.round(rng.standard_normal((n, 2)) * 3) / 3
        kx, ky, finite = distinct_projections(x, y, probe)
        assert finite
        assert (kx, ky) == (len(np.unique(x @ probe)), len(np.unique(y @ probe)))
    zeros = np.zeros((64, 2))
    zeros[::2] = -0.0
    assert distinct_projections(zeros, zeros, probe) == (1, 1, True)
    for bad in (np.nan, np.inf):
        y = rng.standard_normal((64, 2))
        y[5, 1] = bad
        assert distinct_projections(zeros, y, probe)[2] is False
