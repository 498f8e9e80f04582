"""Evaluation with power: permutation p-values, precision/recall, variance ratio, data copying,
Sinkhorn that reports, and one output shape on ``flows eval``."""

import json
import math

import numpy as np
import pytest
import torch

from flows.cli.commands import main
from flows.data import load_digits, moons
from flows.evaluation.copying import data_copying, mann_whitney_z
from flows.evaluation.entropic import entropic_ot, reference_scale, sinkhorn_result
from flows.evaluation.twosample import permutation_test, two_sample_statistic

COMMON = {"metric", "value", "floor", "floor_std", "floor_pairs", "p_value", "permutations",
          "n_samples", "n_reference"}


def test_permutation_p_values_are_uniform_under_the_null_and_small_under_a_shift():
    g = torch.Generator().manual_seed(0)
    null = [permutation_test(torch.randn(20, 2, generator=g), torch.randn(20, 2, generator=g),
                             "energy", 19, seed=i).p_value for i in range(200)]
    # p is discrete uniform on {1/20, ..., 1} under exchangeability: mean 0.525, P(p <= 0.25) 0.25
    assert abs(np.mean(null) - 0.525) < 0.06
    assert 0.17 < np.mean(np.array(null) <= 0.25) < 0.33
    # control: the same test at the same sizes sees a shift of one standard deviation
    shifted = [permutation_test(torch.randn(20, 2, generator=g) + torch.tensor([1.0, 0.0]),
                                torch.randn(20, 2, generator=g), "energy", 19, seed=i).p_value
               for i in range(20)]
    assert np.mean(np.array(shifted) <= 0.05) > 0.7


def test_precision_recall_identical_disjoint_and_collapsed():
    g = torch.Generator().manual_seed(1)
    y = torch.randn(200, 3, generator=g)
    assert two_sample_statistic(y, y, "precision") == two_sample_statistic(y, y, "recall") == 1.0
    far = y + 100.0
    assert two_sample_statistic(far, y, "precision") == two_sample_statistic(far, y, "recall") == 0
    # a sampler collapsed onto a tenth of the reference keeps its precision but loses recall
    collapsed = y[:20].repeat(10, 1)
    assert two_sample_statistic(collapsed, y, "precision") == 1.0
    assert two_sample_statistic(collapsed, y, "recall") < 0.5


def test_variance_ratio_closed_form_and_its_test():
    g = torch.Generator().manual_seed(2)
    y = torch.randn(300, 4, generator=g)
    x = torch.randn(300, 4, generator=g)
    assert two_sample_statistic(0.8 * x, x, "variance") == pytest.approx(2 * math.log(0.8))
    assert permutation_test(0.8 * x, y, "variance", 199).p_value < 0.01
    assert permutation_test(x, y, "variance", 199).p_value > 0.01


def test_bin_counts_chi_square_closed_form_and_a_dropped_mode():
    from flows.evaluation.twosample import _chi_square

    # table [[2, 2], [4, 0]], expected [[3, 1], [3, 1]]: 1/3 + 1 + 1/3 + 1
    assert _chi_square(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0]), 2) == pytest.approx(8 / 3)
    g = torch.Generator().manual_seed(5)
    centres = torch.tensor([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    y = centres[torch.arange(300) % 3] + torch.randn(300, 2, generator=g)
    assert two_sample_statistic(y, y, "bins") == 0.0
    two_modes = centres[torch.arange(300) % 2] + torch.randn(300, 2, generator=g)
    assert permutation_test(two_modes, y, "bins", 99).p_value == 0.01
    fresh = centres[torch.arange(300) % 3] + torch.randn(300, 2, generator=g)
    assert permutation_test(fresh, y, "bins", 99).p_value > 0.01


def test_predicted_class_chi_square_sees_a_dropped_digit():
    from flows.errors import FlowsError

    x, labels = load_digits()
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(3))
    ref, rest = x[perm[:300]], perm[300:]
    assert two_sample_statistic(ref, ref, "classes") == 0.0
    dropped = x[rest[labels[rest] != 3][:300]]
    fresh = x[rest[-300:]]
    assert permutation_test(dropped, ref, "classes", 99).p_value == 0.01
    assert permutation_test(fresh, ref, "classes", 99).p_value > 0.01  # the i.i.d. control
    # the FD of the same classifier's features as a statistic: the metric's value
    from flows.evaluation.features import classifier_fd

    assert two_sample_statistic(dropped, ref, "fd") == pytest.approx(classifier_fd(dropped, ref))
    with pytest.raises(FlowsError, match="dimension 64, 196, 784"):
        two_sample_statistic(torch.zeros(5, 2), torch.zeros(5, 2), "classes")


def test_data_copying_flags_exact_copies_and_not_fresh_data():
    g = torch.Generator().manual_seed(3)
    train, held = torch.randn(600, 8, generator=g), torch.randn(300, 8, generator=g)
    copies = data_copying(train[:300], train, held)
    assert copies.median_generated == 0.0 and copies.z < -10 and copies.p_value < 1e-20
    fresh = [data_copying(torch.randn(300, 8, generator=g), train, held, seed=i).z
             for i in range(10)]
    assert abs(np.mean(fresh)) < 1.0 and max(abs(z) for z in fresh) < 3.5  # N(0, 1) under H0
    # underfitting (samples farther from the data than fresh data) has z >> 0, not copying
    assert data_copying(2.0 * torch.randn(300, 8, generator=g), train, held).z > 5
    assert mann_whitney_z(torch.tensor([3.0, 4.0]), torch.tensor([1.0, 2.0])) == pytest.approx(
        -mann_whitney_z(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))


def test_sinkhorn_reports_non_convergence_and_converges_in_few_iterations():
    x = torch.randn(300, 64, generator=torch.Generator().manual_seed(0))
    digits = load_digits()[0][:300]
    r = sinkhorn_result(x, digits)
    # epsilon scaling with one sweep per stage and over-relaxation: 153 iterations before
    assert r.converged and r.marginal_error < 1e-6 and r.iterations < 80
    stopped = sinkhorn_result(x, digits, reg=1e-3, max_iter=20)
    assert not stopped.converged and stopped.marginal_error > 1e-6 and math.isfinite(stopped.value)
    with pytest.raises(RuntimeError, match="did not converge"):
        entropic_ot(x, digits, 1e-3 * reference_scale(digits), max_iter=20)
    # a relaxed solve meets the same optimum as the plain one (the primal test is in
    # test_honest_eval): the value at reg 0.05 agrees with a tight plain solve
    a, b = moons(150, 1), moons(170, 2)
    eps = 0.05 * reference_scale(b)
    assert entropic_ot(a, b, eps, tol=1e-10, max_iter=20_000).value == pytest.approx(
        entropic_ot(a, b, eps).value, abs=1e-5)


def run(capsys, *args):
    code = main([str(a) for a in args] + ["--json"])  # stdout: the result as one JSON line
    return code, capsys.readouterr()


def test_eval_prints_one_shape_for_every_metric(tmp_path, capsys):
    x, _ = load_digits()
    train, held, fresh = x[:600].numpy(), x[600:900].numpy(), x[900:1200].numpy()
    for name, arr in (("train", train), ("held", held), ("fresh", fresh),
                      ("copies", train[:300] + 0.01)):
        np.save(tmp_path / f"{name}.npy", arr)
    seen = {}
    for metric in ("w2", "sliced", "energy", "hotelling", "precision", "recall", "variance"):
        code, cap = run(capsys, "eval", "--samples", tmp_path / "fresh.npy", "--reference",
                        tmp_path / "held.npy", "--metric", metric, "--permutations", 19)
        seen[metric] = json.loads(cap.out)
        assert code == 0 and COMMON <= set(seen[metric]) and seen[metric]["permutations"] == 19
        assert seen[metric]["metric"] == metric and 0.05 <= seen[metric]["p_value"] <= 1
    code, cap = run(capsys, "eval", "--samples", tmp_path / "copies.npy", "--metric", "copying",
                    "--train", tmp_path / "train.npy", "--reference", tmp_path / "held.npy")
    cp = json.loads(cap.out)
    assert code == 0 and COMMON <= set(cp) and cp["value"] < -10 and cp["p_value"] < 1e-10
    code, cap = run(capsys, "eval", "--samples", tmp_path / "copies.npy", "--metric",
                    "memorization", "--train", tmp_path / "train.npy", "--reference",
                    tmp_path / "held.npy")
    mem = json.loads(cap.out)
    assert code == 0 and COMMON <= set(mem) and mem["value"] == 1.0 and mem["p_value"] < 1e-10
    code, cap = run(capsys, "eval", "--samples", tmp_path / "fresh.npy", "--metric", "copying",
                    "--train", tmp_path / "train.npy")
    assert code == 2 and "--reference" in cap.err
    code, cap = run(capsys, "eval", "--samples", tmp_path / "fresh.npy", "--reference",
                    tmp_path / "held.npy", "--metric", "w2", "--reg", "0.1")
    assert code == 2 and "only used by --metric sinkhorn" in cap.err


def test_eval_sinkhorn_options_and_a_solve_that_stops_short(tmp_path, capsys):
    g = torch.Generator().manual_seed(0)
    np.save(tmp_path / "noise.npy", torch.randn(300, 64, generator=g).numpy())
    args = ("eval", "--samples", tmp_path / "noise.npy", "--data", "digits", "--metric",
            "sinkhorn", "--floor-pairs", 2)
    code, cap = run(capsys, *args)
    r = json.loads(cap.out)
    assert code == 0 and r["converged"] and r["reg"] == 0.05 and r["value"] > 5 * r["floor"]
    code, cap = run(capsys, *args, "--reg", "0.001", "--max-iter", "20")
    short = json.loads(cap.out)
    assert code == 0 and short["converged"] is False and short["marginal_error"] > 1e-6
    assert short["eps"] == pytest.approx(r["eps"] / 50) and math.isfinite(short["value"])


def test_holm_family_and_the_permutations_it_needs():
    from flows.evaluation.verdict import check_family, family, holm

    # Holm: sorted 0.001, 0.02, 0.03, 0.5 -> 4 x 0.001, 3 x 0.02, max(., 2 x 0.03), 0.5
    assert holm([0.03, 0.001, 0.5, 0.02]).tolist() == pytest.approx([0.06, 0.004, 0.5, 0.06])
    assert family(2) == ("energy", "sliced", "hotelling", "precision", "recall", "variance",
                         "bins")
    assert family(196)[-2:] == ("classes", "fd") and len(family(64, with_train=True)) == 11
    check_family(family(64, True), np.zeros((3, 64)), 0.01, 1099)  # 1 / 1100 <= 0.01 / 11
    with pytest.raises(ValueError, match="give at least 1099"):
        check_family(family(64, True), np.zeros((3, 64)), 0.01, 1098)
    with pytest.raises(ValueError, match="training set"):
        check_family(("energy", "copying"), None, 0.01, 999)
    with pytest.raises(ValueError, match="not allowed"):
        check_family(("energy", "energy"), None, 0.01, 999)


def test_batched_statistics_and_p_values_are_the_single_tests():
    from flows.evaluation.twosample import _pooled, _split_fn
    from flows.evaluation.verdict import batched_statistic, evaluate_all, permutation_masks

    x, _ = load_digits()
    for na, nb in ((60, 60), (50, 70)):
        z, n = _pooled(x[:na], x[300:300 + nb])
        masks = next(permutation_masks(z.shape[0], n, 6, seed=2))
        assert (masks.sum(1) == n).all()
        for name in ("energy", "sliced", "hotelling", "precision", "recall", "variance",
                     "bins", "classes", "fd"):
            fast = batched_statistic(name, z, n)(masks)
            slow = _split_fn(name, z, n, 3, 0)
            ref = [slow(np.flatnonzero(s), np.flatnonzero(~s)) for s in masks]
            assert fast == pytest.approx(ref, rel=1e-9, abs=1e-12), name
    # the family draws the splits permutation_test draws: the same p-values
    a, b = x[:80] * 1.05, x[300:380]
    v = evaluate_all(a, b, permutations=599, seed=4, tests=("energy", "variance", "bins"))
    for row in v.table:
        assert row.p_value == permutation_test(a, b, row.test, 599, seed=4).p_value, row.test


def test_eval_all_prints_one_table_and_one_verdict(tmp_path, capsys):
    g = torch.Generator().manual_seed(7)
    train, held, fresh = (moons(n, s) for n, s in ((400, 1), (150, 2), (150, 3)))
    for name, arr in (("train", train), ("held", held), ("fresh", fresh),
                      ("copies", train[:150]), ("shrunk", 0.7 * fresh),
                      ("noisy", fresh + 0.3 * torch.randn(fresh.shape, generator=g))):
        np.save(tmp_path / f"{name}.npy", arr.numpy())
    base = ("eval", "--metric", "all", "--reference", tmp_path / "held.npy", "--alpha", 0.05,
            "--permutations", 199)
    code, cap = run(capsys, *base, "--samples", tmp_path / "fresh.npy", "--out", tmp_path / "f")
    fresh_v = json.loads(cap.out)
    assert code == 0 and fresh_v["verdict"] == "pass" and fresh_v["flagged"] == []
    assert [r["test"] for r in fresh_v["table"]] == ["energy", "sliced", "hotelling",
                                                      "precision", "recall", "variance", "bins"]
    assert "verdict: pass at family-wise 0.05 (7 tests" in cap.err
    written = json.loads((tmp_path / "f" / "metrics.json").read_text())
    assert written["verdict"] == "pass" and len(written["table"]) == 7
    for bad, test in (("shrunk", "variance"), ("noisy", "precision")):
        code, cap = run(capsys, *base, "--samples", tmp_path / f"{bad}.npy")
        v = json.loads(cap.out)
        assert code == 0 and v["verdict"] == "fail" and test in v["flagged"], (bad, v["flagged"])
        assert all(r["p_holm"] >= r["p_value"] for r in v["table"])
    code, cap = run(capsys, *base, "--samples", tmp_path / "copies.npy", "--train",
                    tmp_path / "train.npy")
    copies = json.loads(cap.out)
    assert code == 0 and copies["verdict"] == "fail" and copies["n_train"] == 400
    assert set(copies["flagged"]) == {"memorization", "copying"} and len(copies["table"]) == 9
    # refused before anything is written: too few permutations for Holm, --train with --data,
    # --alpha with another metric
    for args, words in (((*base[:-1], 100, "--samples", tmp_path / "fresh.npy"), "at least 139"),
                        (("eval", "--metric", "all", "--data", "moons", "--train",
                          tmp_path / "train.npy", "--samples", tmp_path / "fresh.npy"),
                         "--reference"),
                        (("eval", "--metric", "w2", "--alpha", "0.05", "--reference",
                          tmp_path / "held.npy", "--samples", tmp_path / "fresh.npy"),
                         "only used by --metric all")):
        code, cap = run(capsys, *args, "--out", tmp_path / "refused")
        assert code == 2 and words in cap.err and not (tmp_path / "refused").exists()


@pytest.mark.slow
def test_eval_all_flags_every_defect_and_not_fresh_digits():
    """The acceptance of ``flows eval --metric all`` (bench/eval_power.py, 300 vs 300 digits,
    1999 permutations, family-wise 0.01): each defect in at least 4 of 5 repetitions, fresh
    digits in at most 1 of 20."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "eval_power.py"
    spec = importlib.util.spec_from_file_location("eval_power", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    table = bench.main(["--samplers", "fresh,drop-one-class,two classes,flips,10% noise,blur,"
                        "copies"])
    assert table["fresh"]["all"] <= 1 / 20
    for defect in ("drop-one-class", "two classes", "flips", "10% noise", "blur", "copies"):
        assert table[defect]["all"] >= 4 / 5, defect
