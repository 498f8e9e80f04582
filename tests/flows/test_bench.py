"""bench/bench_flows.py runs from a clean checkout: the parts that need no TorchCFM, end to end.

Timings are what the benchmark measures and reports; nothing here asserts a time.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from flows.assignment.auction import squared_euclidean_assignment
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    return load_script("bench", "bench_flows")


@pytest.mark.parametrize("kind", [0, 1, 2, 3])
def test_adversarial_batches_are_what_they_claim_and_solved_exactly(bench, kind):
    x0, x1 = bench.adversarial_batch(kind, seed=kind)
    if kind == 0:
        assert np.linalg.norm(x1, axis=1).max() == pytest.approx(1e4)
    elif kind == 1:
        assert len(np.unique(x1, axis=0)) == 1
    elif kind == 2:
        assert len(np.unique(x1, axis=0)) <= 32
    else:
        assert np.array_equal(x0 * 2, np.round(x0 * 2)) and np.array_equal(x1 * 2, np.round(x1 * 2))
    cost = ((x0[:, None] - x1[None]) ** 2).sum(-1)
    sigma = squared_euclidean_assignment(x0, x1)
    rows, cols = linear_sum_assignment(cost)
    assert sorted(sigma.tolist()) == list(range(len(x0)))
    best = cost[rows, cols].sum()
    assert cost[np.arange(len(x0)), sigma].sum() <= best + 1e-9 * max(1.0, best)


def test_adversarial_and_likelihood_parts_write_their_report(bench, tmp_path):
    report = bench.main(["--out", str(tmp_path), "--parts", "adversarial,likelihood",
                         "--steps", "300", "--width", "128"])
    saved = json.loads((tmp_path / "bench_flows.json").read_text())
    assert saved == json.loads(json.dumps(report))
    adv = saved["adversarial"]
    assert set(adv["by_kind"]) == {"outlier at 1e4", "all tied", "duplicates (32 points)",
                                   "0.5 grid"}
    assert adv["adversarial_max_ms"] == max(v["max_ms"] for v in adv["by_kind"].values())
    lik = saved["likelihood"]
    assert lik["nfe"] > 0 and math.isfinite(lik["mean_logp"])
    # control: the untrained flow (the identity map) gives the source density N(0, I) at the
    # held-out moons points; a trained field must explain them better
    from flows.training.loop import TrainConfig, prepare_data

    splits, _ = prepare_data(TrainConfig(data="moons", n_eval=1000))
    held = splits.heldout[:1000].double().numpy()
    source_logp = float((-0.5 * (held ** 2).sum(1) - math.log(2 * math.pi)).mean())
    assert lik["mean_logp"] > source_logp + 0.3


def test_unknown_part_is_refused(bench, tmp_path):
    with pytest.raises(SystemExit, match="unknown"):
        bench.main(["--out", str(tmp_path), "--parts", "speedy"])
