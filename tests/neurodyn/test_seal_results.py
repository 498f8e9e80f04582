"""SEAL's learning experiments return typed results whose ``to_dict()`` keeps the keys the
demo has always written."""

import dataclasses
import json

import pytest

from _runkit import Result, to_jsonable
from neurodyn.experiments import seal as se
from neurodyn.experiments import seal_results as sr
from neurodyn.fitting.core import FitConfig, fit

MEASURE_KEYS = {"spectrum_min", "spectrum_max", "fraction_within", "worst_relative", "n_zero",
                "field_error", "energy_error"}
DECAY_KEYS = {"decay_early", "decay_late", "decay_worst_relative", "energy_ok"}


def test_every_seal_result_is_a_frozen_result_importable_from_the_experiments():
    for name in sr.__all__:
        cls = getattr(sr, name)
        assert issubclass(cls, Result) and cls.__dataclass_params__.frozen, name
        assert getattr(se, name) is cls


@pytest.fixture(scope="module")
def small_ring():
    return fit(FitConfig(n=16, steps=2, batch=2, kappa=2.0)).network


def test_measure_with_and_without_the_decay(small_ring):
    full = se.measure(small_ring, 2.0, count=4)
    assert isinstance(full, sr.SealMeasurement)
    assert set(full.to_dict()) == MEASURE_KEYS | DECAY_KEYS
    assert set(full.decay_late) == set(full.decay_early) and isinstance(full.energy_ok, bool)
    quick = se.measure(small_ring, 2.0, decay=False, count=4)
    assert quick.decay_late is None and set(quick.to_dict()) == MEASURE_KEYS
    # the same network and probes: the decay does not change the other numbers
    assert {k: full.to_dict()[k] for k in MEASURE_KEYS} == quick.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.field_error = 0.0


def test_sweep_rows_keep_their_keys():
    kappa = se.kappa_sweep("ring", (2.0,), 16, seed=0)
    d = kappa.to_dict()
    assert set(d) == {"seal", "spectral"} and set(d["seal"]) == {"2.0"}
    assert set(d["seal"]["2.0"]) == MEASURE_KEYS | DECAY_KEYS | {"fit_seconds"}
    assert d["seal"]["2.0"]["fit_seconds"] == kappa.families["seal"]["2.0"].fit_seconds > 0
    variants = {k: se.CAPACITY[k] for k in ("spectral only", "phi^-1 + x^1..x^3 (default)")}
    cap = se.capacity_sweep(2.0, 16, variants).to_dict()
    assert list(cap) == list(variants)
    assert all(set(r) == MEASURE_KEYS | {"parameters"} for r in cap.values())
    assert cap["spectral only"]["parameters"] < cap["phi^-1 + x^1..x^3 (default)"]["parameters"]
    json.dumps(to_jsonable(kappa))  # JSON as the demo writes it


def test_ablation_and_variable_control_rows_keep_their_keys():
    abl = se.ablation(2.0, 16).to_dict()
    assert set(abl) == {"Fourier construction", "classic CANN (cosine W)", "spectral SEAL",
                        "full SEAL", "kappa", "note"} and abl["kappa"] == 2.0
    assert set(abl["full SEAL"]) == MEASURE_KEYS | DECAY_KEYS | {"slowest_rate"}
    var = se.variable_control("ring", 2.0, 16)
    d = var.to_dict()
    assert set(d) == {"amplitude", "power"}
    assert set(d["power"]) == {"field_error", "field_error_median", "energy_ratio",
                               "fit_seconds", "worst_relative"}
    assert d["power"]["field_error"] == var.variables["power"].field_error


@pytest.mark.slow
def test_mlp_rows_keep_their_keys():
    mlp = se.mlp_sweep((2.0,), n=16, steps=2, hidden=4)
    d = mlp.to_dict()
    assert set(d) == {"2.0"}
    assert set(d["2.0"]) == MEASURE_KEYS | DECAY_KEYS | {"fit_seconds", "c0", "without_mlp",
                                                         "without_c0"}
    assert set(d["2.0"]["without_mlp"]) == set(d["2.0"]["without_c0"]) == MEASURE_KEYS
    assert d["2.0"]["c0"] == mlp.kappas["2.0"].c0
