"""The practice regime's step size and warm-up: the built-in field's defaults (lr 0.1, a linear
warm-up of min(200, steps / 10) steps, then the cosine decay), a user model's unchanged ones
(0.03, none), and the theory regime left exactly as it was: plain gradient descent at a
constant step, its config without the new key."""

import math
from dataclasses import fields

import pytest
import torch

from flows.cli.commands import main
from flows.errors import FlowsError, derive_seed
from flows.training.config import MODULE_LR, PRACTICE_LR, THEORY_LR, WARMUP
from flows.training.loop import (
    TrainConfig,
    build_model,
    fixed_objective,
    prepare_data,
    train,
)
from flows.training.steps import learning_rate

USER_MODEL = "tests.flows_user_models:SeluMLP"


def test_defaults_resolve_by_regime_and_by_field():
    assert (PRACTICE_LR, MODULE_LR, THEORY_LR, WARMUP) == (0.1, 0.03, 2.0, 200)
    built_in = TrainConfig(data="moons").resolved()
    assert (built_in.lr, built_in.warmup) == (0.1, 200)
    assert TrainConfig(data="moons", steps=50).resolved().warmup == 5  # a tenth of a short run
    module = TrainConfig(data="moons", model=USER_MODEL).resolved()
    assert (module.lr, module.warmup) == (0.03, 0)
    assert TrainConfig(data="moons").resolved(module=True).lr == 0.03
    theory = TrainConfig(data="moons", regime="theory").resolved()
    assert (theory.lr, theory.warmup) == (2.0, 0)
    given = TrainConfig(data="moons", lr=0.5, warmup=7).resolved()
    assert (given.lr, given.warmup) == (0.5, 7)


def test_theory_config_reads_as_before_and_a_practice_config_records_the_warmup():
    names = {f.name for f in fields(TrainConfig)} - {"ema", "ema_warmup", "time_sampling",
                                                      "clip_grad", "warmup"}
    for cfg in (TrainConfig(data="moons", regime="theory"),
                TrainConfig(data="moons", regime="theory").resolved(),
                TrainConfig(data="moons", regime="theory", warmup=0)):
        assert set(cfg.to_dict()) == names
    assert TrainConfig(data="moons").resolved().to_dict()["warmup"] == 200
    assert "warmup" not in TrainConfig(data="moons").to_dict()  # not given, not resolved


def test_learning_rate_warms_up_linearly_then_follows_the_cosine():
    cfg = TrainConfig(data="moons", steps=1000, lr=0.2, warmup=100)
    cosine = [0.2 * 0.5 * (1 + math.cos(math.pi * s / 1000)) for s in range(1000)]
    got = [learning_rate(cfg, s) for s in range(1000)]
    assert got[:100] == pytest.approx([(s + 1) / 100 * cosine[s] for s in range(100)],
                                      rel=1e-12)
    assert got[99:] == pytest.approx(cosine[99:], rel=1e-12)
    assert max(got) < 0.2 and got[0] == pytest.approx(0.002, rel=1e-3)
    # without a warm-up: exactly the earlier schedule, float for float
    plain = TrainConfig(data="moons", steps=1000, lr=0.2, warmup=0)
    assert [learning_rate(plain, s) for s in range(1000)] == cosine
    theory = TrainConfig(data="moons", regime="theory", steps=1000, lr=0.7).resolved()
    assert {learning_rate(theory, s) for s in range(1000)} == {0.7}


def test_theory_training_is_constant_step_gradient_descent_float_for_float():
    cfg = TrainConfig(data="moons", regime="theory", width=32, n_train=48, k_draws=2, steps=12,
                      seed=3).resolved()
    res = train(cfg, progress=False)
    # the same descent written out: W <- W - lr grad, the fixed objective, a constant step
    splits, source = prepare_data(cfg)
    field = build_model(cfg, 2)
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, field.spec, derive_seed(cfg.seed, "objective"))
    losses = []
    for _ in range(cfg.steps):
        loss, gw, _ = field.loss_and_grads(z, u, grad_a=False)
        field.W.data.sub_(gw, alpha=2.0)
        losses.append(float(loss))
    assert torch.equal(res.field.W, field.W)
    assert res.losses.tolist() == losses
    # control: the same descent with a warm-up ramp on its step ends elsewhere
    ramped = build_model(cfg, 2)
    for s in range(cfg.steps):
        _, gw, _ = ramped.loss_and_grads(z, u, grad_a=False)
        ramped.W.data.sub_(gw, alpha=2.0 * min(1.0, (s + 1) / 5))
    assert not torch.equal(ramped.W, field.W)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_bad_warmups_are_refused(bad):
    with pytest.raises(FlowsError, match="warmup"):
        TrainConfig(data="moons", warmup=bad)


def test_a_warmup_in_the_theory_regime_is_refused_before_out(tmp_path):
    with pytest.raises(FlowsError, match="warmup=5 is not allowed in the theory regime"):
        TrainConfig(data="moons", regime="theory", warmup=5)
    out = tmp_path / "run"
    assert main(["train", "--data", "moons", "--regime", "theory", "--warmup", "5",
                 "--steps", "3", "--out", str(out)]) == 2
    assert not out.exists()


def test_a_module_passed_to_train_keeps_the_module_defaults():
    from tests.flows_user_models import SeluMLP

    cfg = TrainConfig(data="moons", steps=4, batch=16, n_train=32, n_eval=8)
    res = train(cfg, model=SeluMLP(hidden=8, depth=2), progress=False)
    assert (res.config.lr, res.config.warmup) == (0.03, 0)
    assert (train(cfg, progress=False).config.lr, cfg.resolved().warmup) == (0.1, 0)


def test_the_warmup_changes_training_only_through_the_step_size():
    base = dict(data="moons", steps=20, width=16, batch=32, n_train=64, n_eval=8, lr=0.1)
    warm = train(TrainConfig(**base, warmup=10), progress=False)
    cold = train(TrainConfig(**base, warmup=0), progress=False)
    assert warm.losses[0] == cold.losses[0]  # the same batch and weights before any update
    assert not torch.equal(warm.field.W, cold.field.W)
    # a warm-up of one step is none: step 0 already trains at the full (cosine) rate
    one = train(TrainConfig(**base, warmup=1), progress=False)
    assert torch.equal(one.field.W, cold.field.W)
