"""Tampered fit checkpoints and model files are refused field by field (exit 2 naming the file
and the field): a step outside [0, steps], a history of another length, NaN tensors, sums of
the wrong shape; a model with NaN transport gains. In-process through ``main(argv)``."""

from __future__ import annotations

import math

import pytest
import torch

from neurodyn.cli import main

torch.set_num_threads(1)

FIT = ["fit", "ring", "--n", "16", "--steps", "3", "--seed", "0"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    out = tmp_path_factory.mktemp("tamper") / "fit"
    assert main([*FIT, "--out", str(out)]) == 0
    return out


def _copy(fitted, tmp_path):
    out = tmp_path / "fit"
    out.mkdir()
    for f in fitted.iterdir():
        if f.is_file() and f.name != ".lock":
            (out / f.name).write_bytes(f.read_bytes())
    return out


def _tamper(path, change):
    blob = torch.load(path, weights_only=True)
    change(blob)
    torch.save(blob, path)


def _set(key, value):
    return lambda blob: blob.__setitem__(key, value)


def _nan_sum(blob):
    blob["sums"]["linear"]["aty"][0] = math.nan


def _short_history(blob):
    blob["history"]["linear"] = blob["history"]["linear"][:1]


def _wrong_sums(blob):
    blob["sums"]["linear"]["ata"] = torch.zeros(2, 2, dtype=torch.float64)


@pytest.mark.parametrize("change, word", [
    (_set("step", -1), "field 'step' is -1"),
    (_set("step", 10**6), "field 'step' is 1000000"),
    (_set("step", 1.5), "field 'step' is 1.5"),
    (_short_history, "field 'history'"),
    (_nan_sum, "field 'sums.linear.aty' holds NaN"),
    (_wrong_sums, "field 'sums.linear.ata' has shape (2, 2)"),
], ids=["step-negative", "step-huge", "step-float", "history", "nan", "shape"])
def test_tampered_fit_checkpoint_is_refused(fitted, tmp_path, capsys, change, word):
    out = _copy(fitted, tmp_path)
    before = (out / "model.pt").read_bytes()
    _tamper(out / "fit_state.pt", change)
    capsys.readouterr()
    code = main([*FIT, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and word in err and "fit_state.pt" in err, err
    assert (out / "model.pt").read_bytes() == before


def test_untampered_checkpoint_still_resumes(fitted, tmp_path, capsys):
    out = _copy(fitted, tmp_path)
    assert main([*FIT, "--out", str(out)]) == 0


@pytest.mark.parametrize("field", ["transport", "bias", "manifold_u0"])
def test_model_with_nan_tensors_is_refused_at_load(fitted, tmp_path, capsys, field):
    model = tmp_path / "m" / "model.pt"
    model.parent.mkdir()
    model.write_bytes((fitted / "model.pt").read_bytes())

    def poison(blob):
        blob[field] = blob[field].clone()
        blob[field].view(-1)[0] = math.nan
    _tamper(model, poison)
    capsys.readouterr()
    code = main(["path-integrate", "--model", str(model.parent), "--out", str(tmp_path / "pi"),
                 "--duration", "1", "--dt", "0.5"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert f"field '{field}' holds NaN" in err and "model.pt" in err, err
    assert not (tmp_path / "pi").exists()


MLP = ["fit", "ring", "--family", "mlp", "--n", "16", "--steps", "2", "--hidden", "8",
       "--seed", "0"]


@pytest.fixture(scope="module")
def mlp_fitted(tmp_path_factory):
    out = tmp_path_factory.mktemp("tamper") / "mlp"
    assert main([*MLP, "--out", str(out)]) == 0
    return out


def _first_moment(blob):
    state = blob["optimizer"]["state"]
    first = sorted(state)[0]
    state[first]["exp_avg"] = torch.zeros(3, 3)


def _neural_weight(blob):
    key = sorted(blob["neural"])[0]
    blob["neural"][key] = torch.zeros(1)


def _nan_neural(blob):
    key = sorted(blob["neural"])[0]
    blob["neural"][key] = torch.full_like(blob["neural"][key], math.nan)


@pytest.mark.parametrize("change, word", [
    (_set("step", -1), "field 'step' is -1"),
    (_first_moment, "has shape (3, 3)"),
    (_neural_weight, "has shape (1,)"),
    (_nan_neural, "holds NaN"),
], ids=["step", "adam-moment", "weight-shape", "nan"])
def test_tampered_neural_fit_checkpoint_is_refused(mlp_fitted, tmp_path, capsys, change, word):
    out = _copy(mlp_fitted, tmp_path)
    _tamper(out / "fit_state.pt", change)
    capsys.readouterr()
    code = main([*MLP, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and word in err and "fit_state.pt" in err, err
