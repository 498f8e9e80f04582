"""flows theory sweeps submitted as cells of the sweep engine give the serial runs."""

import json

from flows.theory import sample_sweep, width_sweep
from flows.training import TrainConfig


def _base():
    return TrainConfig(data="moons", regime="theory", n_train=32, k_draws=2, steps=20,
                       width=32, n_eval=64, seed=0)


def test_width_and_sample_sweeps_through_the_engine(tmp_path):
    kw = {"n_samples": 64, "sample_steps": 4, "with_lambda": False}
    serial = width_sweep([16, 64], _base(), **kw)
    cells = width_sweep([16, 64], _base(), sweep={"out": tmp_path / "w", "workers": 0,
                                                  "progress_bar": False}, **kw)
    # the same numbers (JSON text compares NaN == NaN)
    assert json.dumps([r.to_dict() for r in cells.runs]) == \
        json.dumps([r.to_dict() for r in serial.runs])
    assert cells.drift_slope == serial.drift_slope and serial.drift_slope is not None
    assert serial.axis == "width" and serial.values == [16, 64]
    assert [r.width for r in serial.runs] == [16, 64]
    assert len(list((tmp_path / "w" / "cells").glob("*.json"))) == 2
    again = sample_sweep([16, 32], _base(), sweep={"out": tmp_path / "n", "workers": 0,
                                                   "progress_bar": False}, **kw)
    assert [r.n for r in again.runs] == [16, 32] and again.drift_slope is None
    assert again.runs[0].train_loss != again.runs[1].train_loss
    assert sorted(again.to_dict()) == ["axis", "drift_slope", "runs", "values"]
    assert again.to_dict()["runs"][0]["n"] == 16
