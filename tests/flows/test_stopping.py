"""Excess risk along gradient descent, stopping rules and the shuffled-target control."""

import json

import pytest

from flows.data import load_dataset
from flows.errors import FlowsError
from flows.theory.excess import Estimate, population_minimum
from flows.theory.risk import RiskPath, protocol_steps, risk_path, summarize
from flows.theory.sweeps import risk_point
from flows.training.loop import TrainConfig


def _cfg(**kw):
    return TrainConfig(**({"data": "moons", "regime": "theory", "n_train": 32, "k_draws": 2,
                           "width": 64, "seed": 3, "n_eval": 1} | kw))


def test_risk_path_reads_the_run_that_train_makes():
    lstar = population_minimum(load_dataset("moons"), n_mc=4000)
    p = risk_path(_cfg(), lstar, [40, 0, 20], n_test=2000)
    r = risk_point(_cfg(steps=40), lstar, n_test=2000, samples=False)
    assert p.steps == [0, 20, 40]
    assert p.at(40)[0] == pytest.approx(r.excess_test, rel=1e-6)
    assert p.at(40)[2] == pytest.approx(r.excess_train, rel=1e-5, abs=1e-6)
    assert p.excess_test[2] < p.excess_test[0]
    with pytest.raises(FlowsError, match="was not read"):
        p.at(30)


def test_shuffled_targets_leave_the_field_far_from_the_optimum():
    lstar = Estimate(3.74, 0.0)  # the population minimum of moons (only shifts excess_train)
    cfg = _cfg(n_train=128, k_draws=4, width=128)
    real = risk_path(cfg, lstar, [300], n_test=4000)
    shuffled = risk_path(cfg, lstar, [300], n_test=4000, targets="shuffled")
    # the trained field is near u*; with targets permuted it learns little more than their mean
    assert real.excess_test[0] < 0.4 * shuffled.excess_test[0]
    with pytest.raises(FlowsError, match="targets"):
        risk_path(cfg, lstar, [1], targets="permuted")


def test_protocol_steps_and_bad_names():
    assert [protocol_steps("sqrt", n, 32, 500) for n in (32, 512)] == [500, 2000]
    assert protocol_steps("linear", 64, 32, 500) == 1000
    with pytest.raises(FlowsError, match="protocol"):
        protocol_steps("oracle", 64, 32, 500)


def _paths(ns, seeds, value):
    return [RiskPath(n, s, "data", [500], [value(n, s)], [0.0], [value(n, s) - 0.1])
            for n in ns for s in seeds]


def test_summary_slope_and_interval_separation():
    ns, seeds = [32, 64, 128, 256], [1, 2, 3, 4]
    jitter = {1: 1.0, 2: 1.02, 3: 0.98, 4: 1.01}
    s = summarize(_paths(ns, seeds, lambda n, k: jitter[k] * n**-0.5), ns, "fixed", 32, 500)
    assert s.slope == pytest.approx(-0.5, abs=1e-9) and s.slope_ci95 < 1e-9
    assert s.intervals_separate and s.steps == [500] * 4
    # a flat curve with noise: no separation, slope near 0
    flat = summarize(_paths(ns, seeds, lambda n, k: jitter[k] * (1 + 0.001 * n)), ns,
                     "fixed", 32, 500)
    assert not flat.intervals_separate and abs(flat.slope) < 0.3


def test_cli_stopping_experiment(tmp_path, capsys):
    from flows.cli.commands import main

    out = tmp_path / "st"
    code = main(["experiment", "stopping", "--out", str(out), "--data", "normal", "--ns",
                 "16,32", "--seeds",
                 "1,2", "--width", "32", "--k", "2", "--steps", "10", "--n-test", "1000",
                 "--protocols", "fixed,sqrt,linear"])
    assert code == 0, capsys.readouterr().err
    m = json.loads((out / "metrics.json").read_text())
    assert m["data/sqrt"]["steps"] == [10, 14] and m["data/linear"]["steps"] == [10, 20]
    assert m["shuffled/fixed"]["targets"] == "shuffled"
    assert len(m["data/paths"]) == 4 and (out / "stopping_vs_n.png").is_file()
    capsys.readouterr()
    for bad in (["--seeds", "1"], ["--protocols", "oracle"], ["--targets", "noise"]):
        code = main(["experiment", "stopping", "--out", str(tmp_path / "bad"), *bad])
        assert code == 2 and bad[0][2:] in capsys.readouterr().err


def test_ntk_gap_sweep_decides_monotonicity_on_paired_seeds():
    from flows.theory.ntk_gap import gap_sweep

    cfg = TrainConfig(data="moons", regime="theory", n_train=8, k_draws=2, steps=40, lr=0.5,
                      n_eval=1)
    s = gap_sweep([8, 2048], cfg, [1, 2, 3, 4])
    # a 256-fold width: the gap falls on every seed, far outside the paired interval
    assert s.monotone and s.drop_mean[0] > s.drop_ci95[0] > 0
    assert all(a > b for a, b in zip(s.gaps[0], s.gaps[1], strict=True))
    assert s.intervals_separate and s.flipped[0] > s.flipped[1]
    with pytest.raises(FlowsError, match="increasing widths"):
        gap_sweep([64, 16], cfg, [1, 2])


def test_cli_ntk_gap_writes_its_run_and_refuses_one_seed(tmp_path, capsys):
    from flows.cli.commands import main

    out = tmp_path / "ok"
    code = main(["experiment", "ntk-gap", "--out", str(out), "--widths", "8,64", "--n", "4",
                 "--k", "1", "--steps", "5", "--seeds", "1,2"])
    assert code == 0, capsys.readouterr().err
    m = json.loads((out / "metrics.json").read_text())
    assert m["kind"] == "ntk-gap" and len(m["gaps"]) == 2 and len(m["end_ratios"][0]) == 2
    assert (out / "ntk_gap_seeds.png").is_file()
    capsys.readouterr()
    code = main(["experiment", "ntk-gap", "--out", str(tmp_path / "g"), "--seeds", "1"])
    assert code == 2 and "seeds" in capsys.readouterr().err
