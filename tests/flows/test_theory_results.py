"""The theory sweeps return typed results whose ``to_dict()`` rows keep the keys the run
layer has always written, and every public name of flows is defined in one module only."""

import dataclasses
import importlib
import inspect
import pkgutil
from collections import defaultdict

import pytest

import flows
import flows.theory.results as tr
import flows.theory.sweeps as ts
from _runkit import Result
from flows.training.loop import TrainConfig

SAMPLE_KEYS = {"w2", "w2_floor", "w2_floor_std", "w2_bound", "w2_bound_factor", "w2_coupling",
               "w2_bound_holds", "w2_bound_ratio", "mu_max", "lipschitz_max",
               "memorized_fraction", "w2_source", "w2_bound_vs_source", "w2_bound_vacuous",
               "w2_bound_trajectory", "w2_bound_trajectory_factor",
               "w2_bound_trajectory_holds", "w2_bound_trajectory_vs_source",
               "w2_bound_trajectory_vacuous", "w2_bound_certified",
               "w2_bound_trajectory_certified", "w2_lipschitz_bound", "w2_lipschitz_bound_log10",
               "w2_lipschitz_bound_certified", "w2_lipschitz_mu", "w2_lipschitz_constant",
               "w2_lipschitz_bound_holds", "w2_lipschitz_bound_ratio",
               "w2_lipschitz_bound_vs_source", "w2_lipschitz_bound_vacuous"}
WIDTH_POINT_KEYS = {"width", "n", "k", "lr", "steps", "lambda_0", "losses", "ntk_losses",
                    "ntk_gap", "ntk_tolerance", "ntk_within", "kernel", "required_width",
                    "required_lr", "final_loss", "final_ntk_loss", "excess_test",
                    "excess_test_ci95", "excess_train", "ntk_end_ratio",
                    "ntk_passes", "ntk_worst_ratio", "ntk_deviation"} | SAMPLE_KEYS
RISK_POINT_KEYS = {"n", "seed", "excess_test", "excess_test_se", "excess_train",
                   "test_objective", "test_objective_se", "train_objective",
                   "generalization_gap", "gap_floor", "excess_gap", "gen_bound",
                   "gen_bound_ratio", "gen_bound_vacuous", "gen_bound_holds", "gen_rademacher",
                   "gen_deviation", "gen_radius", "gen_distance", "gen_bound_certified"}
RISK_SWEEP_KEYS = {"runs", "ns", "seeds", "population_minimum", "excess_test",
                   "excess_test_ci95", "generalization_gap", "generalization_gap_ci95",
                   "excess_train", "excess_train_ci95", "gap_floor", "gap_floor_ci95",
                   "excess_gap", "excess_gap_ci95", "intervals_separate", "endpoints_separate",
                   "excess_slope", "excess_slope_ci95", "excess_train_slope",
                   "excess_train_slope_ci95", "excess_gap_slope", "excess_gap_slope_ci95",
                   "bound_rate", "gen_bound", "gen_bound_ratio", "gen_bound_vacuous_fraction",
                   "gen_bound_holds_all", "bounds"}
W2_SWEEP_KEYS = {"w2_bound_holds_all", "w2_bound_vs_source", "w2_bound_vacuous_fraction",
                 "w2_bound_trajectory", "w2_bound_trajectory_vs_source",
                 "w2_bound_trajectory_vacuous_fraction", "w2_bound_trajectory_holds_all",
                 "w2_lipschitz_bound_log10", "w2_lipschitz_bound_vs_source",
                 "w2_lipschitz_bound_vacuous_fraction", "w2_lipschitz_bound_holds_all"}
WIDTH_POINT = {"n_test": 200, "n_samples": 40, "bound_steps": 3, "pairs": 8, "floor_pairs": 2}
POINT = WIDTH_POINT | {"gen_groups": 100}


@pytest.fixture(autouse=True)
def _small_population_minimum(monkeypatch):
    """The sweeps' population minimum from 2,000 draws instead of 40,000 (keys, not values)."""
    real = ts.population_minimum
    monkeypatch.setattr(ts, "population_minimum",
                        lambda ds, seed: real(ds, n_mc=2000, seed=seed))


def _theory(**kw):
    return TrainConfig(**({"data": "moons", "regime": "theory", "n_train": 8, "k_draws": 2,
                           "width": 16, "steps": 4, "lr": 0.5, "seed": 0} | kw))


def test_every_theory_result_is_a_frozen_result():
    for name in tr.__all__:
        cls = getattr(tr, name)
        assert issubclass(cls, Result) and cls.__dataclass_params__.frozen, name


def test_ntk_width_sweep_rows_keep_their_keys():
    res = ts.ntk_width_sweep([16, 32], _theory(), **WIDTH_POINT)
    assert isinstance(res, tr.NTKWidthSweep) and all(isinstance(r, tr.WidthPoint)
                                                     for r in res.runs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.runs[0].ntk_gap = 0.0
    d = res.to_dict()
    assert set(d) == {"runs", "widths", "population_minimum", "ntk_gap", "gap_monotone",
                      "w2_bound_holds_all", "ntk_passes"}
    assert [set(r) for r in d["runs"]] == [WIDTH_POINT_KEYS] * 2
    assert d["runs"][0]["kernel"] == res.runs[0].kernel.to_dict()
    assert d["population_minimum"] == res.population_minimum.to_dict()
    assert d["ntk_gap"] == [r.ntk_gap for r in res.runs] and d["widths"] == [16, 32]
    assert d["w2_bound_holds_all"] == all(r.samples.w2_bound_holds for r in res.runs)
    assert d["runs"][1]["w2"] == res.runs[1].samples.w2


def test_risk_sweep_rows_keep_their_keys_with_and_without_samples():
    with_samples = ts.risk_sweep([8, 16], _theory(), [1], **POINT).to_dict()
    assert set(with_samples) == RISK_SWEEP_KEYS | W2_SWEEP_KEYS
    assert [set(r) for r in with_samples["runs"]] == [RISK_POINT_KEYS | SAMPLE_KEYS] * 2
    alone = ts.risk_sweep([8, 16], _theory(), [1], n_test=200, samples=False, gen_groups=100)
    assert alone.w2_bound_holds_all is None and all(r.samples is None for r in alone.runs)
    d = alone.to_dict()
    assert set(d) == RISK_SWEEP_KEYS and [set(r) for r in d["runs"]] == [RISK_POINT_KEYS] * 2
    # the risks do not depend on whether the samples were drawn
    assert d["excess_test"] == with_samples["excess_test"]


def test_memorization_sweep_rows_keep_their_keys():
    res = ts.memorization_sweep([8, 16], width=16, steps=3, n_samples=30, reference_steps=5)
    assert isinstance(res, tr.MemorizationSweep)
    d = res.to_dict()
    assert set(d) == {"ns", "memorized_trained", "memorized_trained_fixed", "criterion",
                      "memorized_empirical_optimal", "iid_baseline", "vs_time", "width",
                      "steps"}
    assert set(d["vs_time"]) == {"t", "trained, n=8", "empirical optimum, n=8",
                                 "trained, n=16", "empirical optimum, n=16"}
    assert len(d["vs_time"]["t"]) == len(d["vs_time"]["trained, n=16"]) == 11


def test_the_two_width_sweeps_have_different_names():
    from flows.theory import regime as theory

    assert not hasattr(ts, "width_sweep")
    assert inspect.signature(ts.ntk_width_sweep).return_annotation == "NTKWidthSweep"
    assert inspect.signature(theory.width_sweep).return_annotation == "TheorySweep"


def test_every_public_flows_name_is_defined_in_one_module():
    where = defaultdict(list)
    for info in pkgutil.walk_packages(flows.__path__, "flows."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) \
                    and obj.__module__ == info.name:
                where[name].append(info.name)
    assert "ntk_width_sweep" in where and "width_sweep" in where
    assert {n: m for n, m in where.items() if len(m) > 1} == {}
    for name in flows.__all__:  # the flat API: each name is the one object of that name
        obj = getattr(flows, name)
        assert where.get(name, [obj.__module__]) == [obj.__module__], name
