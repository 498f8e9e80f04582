"""Tampered training checkpoints are refused field by field on resume (exit 2 naming the file
and the field, no model.pt written from them): a step outside [0, steps], NaN weights or
moments, weights, moments or losses of another shape, a negative elapsed time.
In-process through ``main(argv)``."""

from __future__ import annotations

import math

import pytest
import torch

from flows.cli.commands import main

TINY = ["--steps", "20", "--width", "16", "--batch", "32", "--n-train", "200", "--n-eval", "40",
        "--seed", "1"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("tamper") / "run"
    assert main(["train", "--data", "moons", "--out", str(out), *TINY]) == 0
    return out


def _copy(src, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    for f in src.iterdir():
        if f.is_file() and f.name != ".lock":
            (out / f.name).write_bytes(f.read_bytes())
    return out


def _nan_weights(blob):
    blob["weights"]["W"][0, 0] = math.nan


def _nan_moment(blob):
    blob["optimizer"]["v"][0] = math.inf


def _set(*keys, value):
    def change(blob):
        target = blob
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return change


@pytest.mark.parametrize("change, word", [
    (_set("step", value=10**6), "field 'step' is 1000000"),
    (_set("step", value=-1), "field 'step' is -1"),
    (_nan_weights, "field 'weights.W' holds NaN"),
    (_nan_moment, "field 'optimizer.v' holds NaN"),
    (_set("weights", "W", value=torch.zeros(3, 3)), "field 'weights.W' has shape (3, 3)"),
    (_set("weights", "extra", value=torch.zeros(1)), "field 'weights' holds"),
    (_set("optimizer", "m", value=torch.zeros(1)), "field 'optimizer.m' has shape (1,)"),
    (_set("optimizer", "t", value=-5), "field 't' is -5"),
    (_set("losses", value=torch.zeros(3)), "field 'losses' has shape (3,)"),
    (_set("elapsed", value=-1.0), "field 'elapsed' is -1.0"),
], ids=["step-huge", "step-negative", "nan-weights", "inf-moment", "weights-shape",
        "weights-keys", "moment-shape", "adam-t", "losses", "elapsed"])
def test_tampered_checkpoint_is_refused_on_resume(trained, tmp_path, capsys, change, word):
    out = _copy(trained, tmp_path)
    before = (out / "model.pt").read_bytes()
    blob = torch.load(out / "checkpoint.pt", weights_only=True)
    change(blob)
    torch.save(blob, out / "checkpoint.pt")
    capsys.readouterr()
    code = main(["train", "--data", "moons", "--out", str(out), *TINY])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and word in err and "checkpoint.pt" in err, err
    assert "--fresh" in err
    assert (out / "model.pt").read_bytes() == before


def test_untampered_checkpoint_still_resumes(trained, tmp_path, capsys):
    out = _copy(trained, tmp_path)
    assert main(["train", "--data", "moons", "--out", str(out), *TINY]) == 0


MODULE = ["train", "--data", "moons", "--model-class", "flows_user_models:SeluMLP",
          "--model-args", '{"hidden": 8}', "--steps", "5", "--batch", "32", "--n-train", "100",
          "--n-eval", "20", "--device", "cpu", "--seed", "1"]


def _adam_moment(blob):
    state = blob["optimizer"]["state"]
    state[sorted(state)[0]]["exp_avg_sq"] = torch.zeros(2, 2)


def _adam_entry(blob):
    blob["optimizer"]["state"][99] = {"exp_avg": torch.zeros(1)}


@pytest.mark.parametrize("change, word", [
    (_adam_moment, "exp_avg_sq' has shape (2, 2)"),
    (_adam_entry, "holds an entry 99"),
], ids=["moment-shape", "extra-entry"])
def test_tampered_module_checkpoint_is_refused(tmp_path, capsys, change, word):
    out = tmp_path / "module"
    assert main([*MODULE, "--out", str(out)]) == 0, capsys.readouterr().err
    blob = torch.load(out / "checkpoint.pt", weights_only=True)
    change(blob)
    torch.save(blob, out / "checkpoint.pt")
    capsys.readouterr()
    code = main([*MODULE, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and word in err and "checkpoint.pt" in err, err
