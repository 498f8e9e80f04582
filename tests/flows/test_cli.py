"""The ``flows`` command-line contract, run in-process at tiny sizes."""

import json

import numpy as np
import pytest

from flows.cli.commands import main

TINY = ["--steps", "60", "--width", "16", "--batch", "32", "--n-train", "300", "--n-eval", "50",
        "--seed", "1"]


def run(capsys, *args):
    code = main([str(a) for a in args] + ["--json"])  # stdout: the result as one JSON line
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_train_sample_eval_round_trip(tmp_path, capsys):
    out = tmp_path / "run"
    code, stdout, _ = run(capsys, "train", "--data", "moons", "--out", out, *TINY)
    assert code == 0
    for name in ("model.pt", "config.json", "metrics.json", "loss.png", "samples.png",
                 "trajectories.png"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["steps"] == 60 and np.isfinite(metrics["w2_heldout"])
    assert 0 < metrics["w2_floor"]
    assert json.loads((out / "timing.json").read_text())["train_wall_time_s"] > 0
    assert json.loads((out / "config.json").read_text())["config"]["width"] == 16
    assert json.loads(stdout)["w2_heldout"] == metrics["w2_heldout"]

    npy = tmp_path / "s.npy"
    code, stdout, _ = run(capsys, "sample", "--model", out, "--n", 40, "--out", npy,
                          "--solver", "rk4", "--steps", 5, "--seed", 3)
    assert code == 0 and np.load(npy).shape == (40, 2)
    assert json.loads(stdout)["nfe"] == 20
    assert json.loads((tmp_path / "s.json").read_text())["nfe"] == 20

    code, stdout, _ = run(capsys, "eval", "--samples", npy, "--data", "moons")
    res = json.loads(stdout)
    assert code == 0 and {"metric", "value", "n_samples", "n_reference", "floor"} <= set(res)
    assert res["n_samples"] == res["n_reference"] == 40 and res["metric"] == "w2"
    np.save(tmp_path / "ref.npy", np.load(npy) + 1.0)
    code, stdout, _ = run(capsys, "eval", "--samples", npy, "--reference",
                          tmp_path / "ref.npy", "--metric", "w1")
    res = json.loads(stdout)
    assert code == 0 and res["floor"] is None and res["value"] == pytest.approx(2**0.5, rel=1e-5)


def test_same_seed_same_numbers(tmp_path, capsys):
    a = [run(capsys, "train", "--data", "circles", "--out", tmp_path / d, *TINY)[1]
         for d in ("a", "b")]
    ja, jb = json.loads(a[0]), json.loads(a[1])
    assert ja["w2_heldout"] == jb["w2_heldout"] and ja["final_loss"] == jb["final_loss"]


def test_train_resumes_from_checkpoint(tmp_path, capsys):
    out = tmp_path / "r"
    assert run(capsys, "train", "--data", "moons", "--out", out, *TINY)[0] == 0
    first = json.loads((out / "metrics.json").read_text())
    assert (out / "checkpoint.pt").is_file()
    assert run(capsys, "train", "--data", "moons", "--out", out, *TINY)[0] == 0
    again = json.loads((out / "metrics.json").read_text())
    assert again["final_loss"] == first["final_loss"]
    code, _, err = run(capsys, "train", "--data", "moons", "--out", out, *TINY[:-2], "--seed", 2)
    assert code == 2 and "different config" in err and "seed" in err


def test_bad_inputs_exit_2_with_one_line(tmp_path, capsys):
    bad = np.ones((10, 2))
    bad[3, 0] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    np.save(tmp_path / "d3.npy", np.ones((10, 3)))
    cases = [
        (["train", "--data", "blobs", "--out", tmp_path / "x"], "data='blobs'"),
        (["train", "--data", tmp_path / "nan.npy", "--out", tmp_path / "x"], "non-finite"),
        (["train", "--data", "moons", "--source", tmp_path / "d3.npy", "--out", tmp_path / "x"],
         "has dimension 3"),
        (["train", "--data", "moons", "--width", "0", "--out", tmp_path / "x"], "width=0"),
        (["eval", "--samples", tmp_path / "d3.npy", "--data", "moons"], "dimension"),
        (["eval", "--samples", tmp_path / "missing.npy", "--data", "moons"], "samples="),
    ]
    for args, needle in cases:
        code, _, err = run(capsys, *args)
        assert code == 2, args
        assert needle in err and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_sample_count_zero_and_unknown_option(tmp_path, capsys):
    out = tmp_path / "m"
    assert run(capsys, "train", "--data", "moons", "--out", out, *TINY)[0] == 0
    code, _, err = run(capsys, "sample", "--model", out, "--n", 0, "--out", tmp_path / "s.npy")
    assert code == 2 and "n=0" in err
    code = main(["train", "--data", "moons", "--out", str(out), "--coupling", "hungarian"])
    err = capsys.readouterr().err
    assert code == 2 and "--coupling" in err and len(err.splitlines()) == 1


def test_experiment_width_writes_figures(tmp_path, capsys):
    code, stdout, _ = run(capsys, "experiment", "width", "--out", tmp_path, "--widths", "32,128",
                          "--n", 16, "--k", 2, "--steps", 10)
    assert code == 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["lambda_0"] > 0 and len(m["drift"]) == 2
    for f in m["figures"]:
        assert (tmp_path / f).is_file()


@pytest.mark.slow
def test_experiment_risk_and_memorization_write_their_runs(tmp_path, capsys):
    code, stdout, _ = run(capsys, "experiment", "risk", "--out", tmp_path / "r", "--ns", "16,64",
                          "--seeds", "1,2", "--width", 64, "--k", 2, "--steps", 20,
                          "--n-test", 2000, "--n-samples", 200)
    assert code == 0
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert json.loads(stdout)["excess_test"] == m["excess_test"]
    assert len(m["runs"]) == 4 and len(m["excess_test_ci95"]) == 2
    assert m["w2_bound_holds_all"] in (True, False) and "excess_gap_slope" in m
    for r in m["runs"]:  # excess test - excess train is the raw gap minus its floor
        assert abs(r["excess_gap"] - (r["generalization_gap"] - r["gap_floor"])) < 1e-9
    cfg = json.loads((tmp_path / "r" / "config.json").read_text())
    assert cfg["command"] == "flows experiment risk" and cfg["config"]["seeds"] == [1, 2]
    for f in m["figures"]:
        assert (tmp_path / "r" / f).is_file()
    code, _, _ = run(capsys, "experiment", "risk", "--out", tmp_path / "r2", "--ns", "16,64",
                     "--seeds", "1,2", "--width", 64, "--k", 2, "--steps", 20, "--n-test", 2000,
                     "--n-samples", 200)  # the same command gives the same numbers
    assert code == 0 and ((tmp_path / "r2" / "metrics.json").read_bytes()
                          == (tmp_path / "r" / "metrics.json").read_bytes())
    code, _, _ = run(capsys, "experiment", "memorization", "--out", tmp_path / "m", "--ns",
                     "8,64", "--width", 32, "--steps", 50, "--n-samples", 200)
    m = json.loads((tmp_path / "m" / "metrics.json").read_text())
    assert code == 0 and m["ns"] == [8, 64]
    # the exact empirical-optimal field memorizes; the criterion is calibrated below 1/3
    assert min(m["memorized_empirical_optimal"]) >= 0.9 and max(m["criterion"]) < 1 / 3
    assert sorted(m["figures"]) == ["memorization_vs_n.png", "memorization_vs_time.png"]
