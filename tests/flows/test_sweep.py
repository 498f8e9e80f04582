"""flows theory sweeps submitted as cells of the sweep engine give the serial runs."""

import json

from flows.theory.regime import sample_sweep, width_sweep
from flows.training.loop import TrainConfig


def _base():
    return TrainConfig(data="moons", regime="theory", n_train=32, k_draws=2, steps=20,
                       width=32, n_eval=64, seed=0)


def test_width_and_sample_sweeps_through_the_engine(tmp_path):
    kw = {"n_samples": 64, "sample_steps": 4, "with_lambda": False}
    serial = width_sweep([16, 64], _base(), **kw)
    cells = width_sweep([16, 64], _base(), sweep={"out": tmp_path / "w", "workers": 0,
                                                  "progress": False}, **kw)
    # the same numbers (JSON text compares NaN == NaN)
    assert json.dumps([r.to_dict() for r in cells.runs]) == \
        json.dumps([r.to_dict() for r in serial.runs])
    assert cells.drift_slope == serial.drift_slope and serial.drift_slope is not None
    assert serial.axis == "width" and serial.values == [16, 64]
    assert [r.width for r in serial.runs] == [16, 64]
    assert len(list((tmp_path / "w" / "cells").glob("*.json"))) == 2
    again = sample_sweep([16, 32], _base(), sweep={"out": tmp_path / "n", "workers": 0,
                                                   "progress": False}, **kw)
    assert [r.n for r in again.runs] == [16, 32] and again.drift_slope is None
    assert again.runs[0].train_loss != again.runs[1].train_loss
    assert sorted(again.to_dict()) == ["axis", "drift_slope", "runs", "values"]
    assert again.to_dict()["runs"][0]["n"] == 16


def test_typed_results_rebuild_from_their_stored_rows():
    from flows.theory.ntk import KernelDrift, NTKComparison, TheoremRequirements
    from flows.theory.results import RiskPoint, SampleChecks

    checks = SampleChecks(w2=0.2, w2_floor=0.1, w2_floor_std=0.01, w2_bound=float("inf"),
                          w2_bound_factor=2.0, w2_coupling=0.25, w2_bound_holds=True,
                          w2_bound_ratio=float("inf"), mu_max=0.3, lipschitz_max=1.2,
                          memorized_fraction=0.0)
    point = RiskPoint(n=16, seed=1, excess_test=float("nan"), excess_test_se=0.01,
                      excess_train=0.05, test_objective=1.1, test_objective_se=0.01,
                      train_objective=1.05, generalization_gap=0.05, gap_floor=0.0,
                      excess_gap=0.05)
    for p in (point, RiskPoint(**{**point.__dict__, "samples": checks})):
        row = json.loads(json.dumps({"n": 16, "run_seed": 1, "seed": 99, **p.to_dict()}))
        back = RiskPoint.from_dict(row)
        assert json.dumps(back.to_dict()) == json.dumps(p.to_dict())
        assert (back.samples is None) == (p.samples is None)
    cmp = NTKComparison(8, 4, 0.5, [1.0, float("nan")], [1.0, 0.5], 0.1, 1.4, True,
                        KernelDrift(0.1, 0.2, 0.3, 0.4, 0.5),
                        TheoremRequirements(float("inf"), 0.1, 0.1))
    back = NTKComparison.from_dict(json.loads(json.dumps(cmp.to_dict())))
    assert isinstance(back.drift, KernelDrift) and back.requirements.width == float("inf")
    assert json.dumps(back.to_dict()) == json.dumps(cmp.to_dict())
