"""bench/bench_generate_seeds.py's summary: the acceptance counts and the paired comparison with a
fresh real sample (the sign test against scipy's exact binomial test)."""

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    return load_script("bench", "bench_generate_seeds")


@pytest.mark.parametrize("wins,n", [(0, 5), (3, 20), (13, 20), (20, 20), (7, 14)])
def test_sign_test_is_the_exact_binomial_test(bench, wins, n):
    assert bench.sign_test(wins, n) == pytest.approx(binomtest(wins, n, 0.5).pvalue, rel=1e-12)


def _row(seed, w2, real, betti=(1, 1, 0)):
    m = {"betti": list(betti), "distance_ratio": 1.0, "w2_ratio": w2, "w2_within_2std": True}
    return {"seed": seed, "seconds": 1.0, "cpu_seconds": 1.0, "load": 1.0,
            "control_betti": [1, 0, 0], "energy_rise": 0.0, "real_w2_ratio": real,
            "ambient": m, "riemannian": m, "relaxed": {**m, "betti": [1, 0, 0]}}


def test_summary_counts_and_pairs_each_seed_with_its_real_sample(bench):
    rows = [_row(s, w2, real) for s, (w2, real) in
            enumerate([(1.3, 1.0), (1.1, 0.9), (0.8, 1.0), (1.25, 1.25), (1.0, 1.3)])]
    s = bench.summarize(rows, "ring")
    assert s["riemannian"]["w2_ok"] == 3 and s["riemannian"]["betti_ok"] == 5
    assert s["relaxed"]["betti_ok"] == 0 and s["real_w2_ok"] == 3
    # the tie (seed 3) is dropped: 2 of 4 above the real sample
    assert s["riemannian"]["w2_above_real"] == 2 and s["riemannian"]["w2_sign_test_p"] == 1.0
    assert s["median_real_w2_ratio"] == 1.0 and s["riemannian"]["median_w2_ratio"] == 1.1


@pytest.mark.slow  # fits the 128-ring and judges 2,000 states (~20 s CPU)
def test_real_only_reads_the_data_without_training(bench, tmp_path):
    """--real-only trains nothing: the held-out and a fresh real ring sample are rings, and the
    fresh sample's W2 ratio is that of two real samples (about 1)."""
    out = tmp_path / "real.jsonl"
    s = bench.main(["--geometry", "ring", "--real-only", "--seeds", "1", "--jsonl", str(out)])
    row = json.loads(out.read_text())
    assert row["held_betti"] == row["real_betti"] == [1, 1, 0]
    assert 0.4 < row["real_w2_ratio"] < 2.5 and 0.9 < row["real_distance_ratio"] < 1.1
    assert s == {"geometry": "ring", "seeds": 1, "held_betti_ok": 1, "real_betti_ok": 1,
                 "real_w2_ok": int(row["real_w2_ratio"] <= 1.2)}
