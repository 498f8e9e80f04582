"""``flows train`` refuses a training split of fewer than 2 distinct points before it trains or
claims ``--out`` (exit 2, one line naming the option, no directory left behind)."""

from __future__ import annotations

import numpy as np
import pytest

from flows.cli import main


@pytest.mark.parametrize("data, extra, option", [
    ("two", [], "data="),            # 2 rows: one is held out, one trains
    ("same", [], "data="),           # 300 identical rows: one distinct training point
    ("moons", ["--n-train", "1"], "n_train=1"),
])
def test_train_refuses_a_degenerate_training_split_before_training(tmp_path, capsys, data,
                                                                   extra, option):
    np.save(tmp_path / "two.npy", np.random.default_rng(0).normal(size=(2, 2)))
    np.save(tmp_path / "same.npy", np.ones((300, 2)))
    source = data if data == "moons" else str(tmp_path / f"{data}.npy")
    out = tmp_path / "run"
    code = main(["train", "--data", source, "--steps", "5", "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and option in err, err
    assert not out.exists()


def test_train_accepts_two_distinct_training_points(tmp_path, capsys):
    np.save(tmp_path / "few.npy", np.random.default_rng(0).normal(size=(4, 2)))
    code = main(["train", "--data", str(tmp_path / "few.npy"), "--steps", "5",
                 "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("extra, name", [
    (["--guidance", "nan"], "guidance=nan"),
    (["--guidance", "inf"], "guidance=inf"),
    (["--model-args", '{"hidden": 8}'], "model_args="),
])
def test_train_refuses_options_it_would_ignore(tmp_path, capsys, extra, name):
    out = tmp_path / "run"
    code = main(["train", "--data", "moons", "--steps", "5", "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2 and name in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_sample_refuses_a_non_finite_guidance(tmp_path, capsys):
    model = tmp_path / "run"
    assert main(["train", "--data", "moons", "--steps", "5", "--out", str(model)]) == 0
    for value in ("nan", "inf"):
        out = tmp_path / f"s_{value}.npy"
        code = main(["sample", "--model", str(model), "--n", "8", "--out", str(out),
                     "--guidance", value])
        err = capsys.readouterr().err
        assert code == 2 and f"guidance={value}" in err, err
        assert not out.exists()


@pytest.mark.parametrize("seed", [1.5, "0", 2.0])
def test_python_api_refuses_a_seed_that_is_not_an_integer(seed):
    import torch

    from flows.evaluation.distances import sliced_w
    from flows.field.module import build_module

    with pytest.raises(ValueError, match="seed="):
        sliced_w(torch.zeros(4, 2), torch.ones(4, 2), seed=seed)
    with pytest.raises(ValueError, match="seed="):
        build_module("torch.nn:Linear", {"in_features": 2, "out_features": 2}, seed)
