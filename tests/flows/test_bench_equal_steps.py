"""The equal-steps, lever and OT-step benches: their arithmetic and their fields, without
training to the end (nothing here times anything or needs TorchCFM)."""

import math
import subprocess
from pathlib import Path

import pytest
import torch

from flows.field import features
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    return load_script("bench", name)


@pytest.fixture(scope="module")
def equal_steps():
    return _load("bench_equal_steps")


@pytest.fixture(scope="module")
def levers():
    return _load("flows_levers")


def test_each_side_is_judged_at_its_own_best_learning_rate(equal_steps):
    w2 = {  # side -> lr -> W2 of seeds 0, 1, 2
        "flows": {0.01: [0.5, 0.6, 0.4], 0.1: [0.30, 0.35, 0.31]},
        "torchcfm same field": {0.01: [0.40, 0.41, 0.39], 0.1: [0.5, 0.5, 0.5]},
        "torchcfm pytorch init": {0.01: [0.33, 0.32, 0.34], 0.1: [0.9, 0.2, 0.9]},
    }
    runs = [{"side": side, "case": "a:b", "lr": lr, "seed": s, "w2": v, "floor": 0.2 + s / 100}
            for side, by_lr in w2.items() for lr, vals in by_lr.items()
            for s, v in enumerate(vals)]
    row = equal_steps.summarise(runs, ["a:b"], [0.01, 0.1])["a:b"]
    assert row["floor_median"] == pytest.approx(0.21)
    assert (row["sides"]["flows"]["best_lr"], row["sides"]["flows"]["best_median"]) == (0.1, 0.31)
    assert row["sides"]["torchcfm same field"]["best_lr"] == 0.01
    assert row["sides"]["torchcfm pytorch init"]["best_median"] == 0.33  # medians, not minima
    assert row["flows_over"]["torchcfm same field"] == pytest.approx(0.31 / 0.40)
    assert row["sides"]["flows"]["best_over_floor"] == pytest.approx(0.31 / 0.21)


def test_the_pytorch_initialised_field_is_nn_linear_on_flows_inputs(equal_steps):
    a, b = equal_steps.PyTorchMLP(2, 256, 1, seed=4), equal_steps.PyTorchMLP(2, 256, 1, seed=4)
    assert torch.equal(a.hidden.weight, b.hidden.weight)  # seeded, without the global RNG
    state = torch.random.get_rng_state()
    equal_steps.PyTorchMLP(2, 256, 1, seed=5)
    assert torch.equal(state, torch.random.get_rng_state())
    assert a.hidden.weight.shape == (256, 5) and a.out.weight.shape == (2, 256)
    assert a.hidden.weight.abs().max() <= 1 / math.sqrt(5)  # kaiming-uniform bound of nn.Linear
    assert a.out.weight.abs().max() <= 1 / math.sqrt(256)
    x, t = torch.randn(7, 2), torch.rand(7)
    z = features(x, t, 1)[:, :-1]
    want = torch.relu(z @ a.hidden.weight.T + a.hidden.bias) @ a.out.weight.T + a.out.bias
    assert torch.allclose(a(x, t), want)


def test_lever_schedules_and_initialisations(levers):
    o = {**levers.REFERENCE, "warmup": 10, "schedule": "cosine"}
    assert levers.factor(o, 0, 100) == pytest.approx(0.1 * 0.5 * (1 + math.cos(0.0)))
    assert levers.factor(o, 50, 100) == pytest.approx(0.5)
    assert levers.factor({**o, "schedule": "linear", "warmup": 0}, 25, 100) == 0.75
    ref = levers.Field(64, 1, "flows", True, seed=0)
    assert ref.c == 1 / 8 and ref.W.std().item() == pytest.approx(1.0, abs=0.1)
    assert levers.Field(64, 1, "zero-a", True, seed=0).A.abs().sum() == 0
    fan_in = levers.Field(64, 1, "fan-in", True, seed=0)
    assert torch.allclose(fan_in.W * math.sqrt(6), ref.W)
    pytorch = levers.Field(64, 1, "pytorch", False, seed=0)
    assert pytorch.c == 1.0 and pytorch.W.abs().max() <= 1 / math.sqrt(5)
    x, t = torch.randn(5, 2), torch.rand(5)
    scaled = levers.Scaled(ref, 2.0)
    assert torch.allclose(scaled(x, t), 2.0 * ref(x / 2.0, t))


def test_every_lever_changes_the_reference_and_the_reference_changes_nothing(levers):
    assert levers.LEVERS["reference"] == {}
    for name, change in levers.LEVERS.items():
        assert set(change) <= set(levers.REFERENCE), name
        if name != "reference":
            assert any(levers.REFERENCE[k] != v for k, v in change.items()), name


def test_ot_step_bench_exports_a_commit_and_forms_its_ratios(tmp_path):
    ot_step = _load("bench_ot_step")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    tree = ot_step.export_commit(head, tmp_path)
    assert (tree / "flows" / "cli" / "__main__.py").is_file()
    assert not (tree / ".git").exists()
    rounds = [{"new ot": (4.0, 8.0), "new independent": (1.0, 2.0), "old ot": (6.0, 9.0),
               "old independent": (1.0, 1.0), "torchcfm ot": (40.0, 80.0),
               "torchcfm independent": (2.0, 4.0)},
              {"new ot": (3.0, 6.0), "new independent": (1.5, 2.0), "old ot": (9.0, 9.0),
               "old independent": (1.5, 1.0), "torchcfm ot": (30.0, 60.0),
               "torchcfm independent": (2.0, 4.0)}]
    r = ot_step.ratios(rounds, ["new", "old"], torchcfm=True)
    assert r["new: OT step / independent step"] == pytest.approx((4.0 + 2.0) / 2)
    assert r["old: OT step / independent step, CPU time"] == 9.0
    assert r["ot step: new / old"] == pytest.approx((4 / 6 + 3 / 9) / 2)
    assert r["TorchCFM OT step / new OT step"] == 10.0
    assert r["TorchCFM OT step / new OT step, CPU time"] == 10.0
