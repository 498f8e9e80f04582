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
