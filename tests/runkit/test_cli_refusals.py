"""Inputs that used to end both command lines with an "unexpected" exit 1 are bad input: exit 2
and one line naming the option."""

import numpy as np
import pytest

from flows.cli import main as flows_main
from neurodyn.cli import main as neurodyn_main

LONG = "a" * 256
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.savez(tmp_path / "packed.npz", a=np.zeros((10, 2)))
    (tmp_path / "packed.npz").rename(tmp_path / "packed.npy")
    np.save(tmp_path / "rows.npy", np.random.default_rng(0).normal(size=(40, 2)))
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "config.json").write_text(DEEP)
    return tmp_path


CASES = [
    (flows_main, ["train", "--data", "packed.npy", "--out", "o", "--steps", "1"], "data="),
    (flows_main, ["train", "--data", "rows.npy", "--labels", "packed.npy", "--out", "o",
                  "--steps", "1"], "labels="),
    (flows_main, ["train", "--data", "moons", "--out", LONG, "--steps", "1"], "--out="),
    (flows_main, ["train", "--data", "moons", "--out", "o", "--steps", "1", "--model-class",
                  "flows.field.module:MLPField", "--model-args", DEEP], "--model-args"),
    (flows_main, ["train", "--data", "moons", "--out", "deep", "--steps", "1"], "config="),
    (neurodyn_main, ["fit", "ring", "--out", LONG, "--steps", "1"], "--out="),
    (neurodyn_main, ["--threads", "100000", "fit", "ring", "--out", "o", "--steps", "1"],
     "--threads"),
    (neurodyn_main, ["fit", "ring", "--out", "deep", "--steps", "1"], "config="),
    (neurodyn_main, ["sweep", "kappa", "--out", "sw", "--grid", "kappa=1", "--fit-steps", "1",
                     "--scheduler", "notanaddress"], "--scheduler"),
]


@pytest.mark.parametrize("main, argv, word", CASES,
                         ids=["npz-as-npy", "npz-labels-as-npy", "flows-long-out",
                              "deep-model-args",
                              "flows-deep-config", "neurodyn-long-out", "threads-huge",
                              "neurodyn-deep-config", "scheduler-no-address"])
def test_refused_as_bad_input_naming_the_option(root, capsys, main, argv, word):
    assert main(argv) == 2
    line, = capsys.readouterr().err.splitlines()
    assert ": error: " in line and word in line and "unexpected" not in line, line
