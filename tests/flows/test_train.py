"""Training: resume equivalence, the theory regime's behaviour and a short end-to-end number."""

import importlib
import os
import signal

import pytest
import torch

from _runkit import safe_torch_load
from flows import TrainConfig, train
from flows.errors import derive_seed
from flows.evaluation.distances import w2
from flows.runs.run import evaluate_field
from flows.theory.kernel import (
    guaranteed_log_rate,
    lambda_0,
    log_loss_slope,
    loglog_slope,
    weight_drift,
)
from flows.training.loop import CHECKPOINT, fixed_objective, prepare_data


@pytest.mark.parametrize("kw", [
    {"coupling": "sinkhorn", "steps": 40, "batch": 64, "width": 32, "sigma_min": 0.05},
    {"coupling": "ot", "steps": 40, "batch": 32, "width": 32, "path": "vp"},
    {"regime": "theory", "steps": 40, "width": 64, "n_train": 32, "k_draws": 2},
])
def test_interrupted_training_resumes_exactly(tmp_path, kw):
    cfg = TrainConfig(data="moons", n_eval=50, checkpoint_every=7, seed=3,
                      **{"n_train": 500, **kw})
    full = train(cfg, progress=False)
    part = train(cfg, out_dir=tmp_path, stop_after=17, progress=False)
    assert not part.completed and part.steps_done == 17 and (tmp_path / CHECKPOINT).exists()
    resumed = train(cfg, out_dir=tmp_path, progress=False)
    assert resumed.completed and resumed.steps_done == 40
    assert torch.equal(resumed.field.W, full.field.W)
    assert torch.equal(resumed.field.A, full.field.A)
    assert torch.equal(resumed.losses, full.losses)


def test_ctrl_c_finishes_the_step_checkpoints_and_resumes_exactly(tmp_path, monkeypatch):
    cfg = TrainConfig(data="moons", steps=400, batch=64, width=64, n_train=500, n_eval=50,
                      checkpoint_every=1000, seed=5)
    full = train(cfg, progress=False)
    calls = {"n": 0}

    def interrupt_at_step_123(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 123:
            os.kill(os.getpid(), signal.SIGINT)
        return real_draw(*args, **kwargs)

    module = importlib.import_module("flows.training.loop")
    real_draw = module.draw_batch
    with monkeypatch.context() as patch:
        patch.setattr(module, "draw_batch", interrupt_at_step_123)
        with pytest.raises(KeyboardInterrupt):
            train(cfg, out_dir=tmp_path, progress=False)
    blob = safe_torch_load(tmp_path / CHECKPOINT)
    assert blob["step"] == 123  # the step that was running when Ctrl-C came was completed
    resumed = train(cfg, out_dir=tmp_path, progress=False)
    assert resumed.completed
    assert torch.equal(resumed.field.W, full.field.W)
    assert torch.equal(resumed.losses, full.losses)


def test_resume_refuses_a_different_config(tmp_path):
    train(TrainConfig(steps=5, batch=16, width=8, n_train=100, n_eval=20), out_dir=tmp_path,
          progress=False)
    with pytest.raises(ValueError, match=r"different config.*\['width'\]"):
        train(TrainConfig(steps=5, batch=16, width=9, n_train=100, n_eval=20), out_dir=tmp_path,
              progress=False)


def test_theory_regime_converges_and_drift_shrinks_with_width():
    drifts, widths = [], [256, 4096]
    for m in widths:
        res = train(TrainConfig(regime="theory", width=m, n_train=32, k_draws=2, steps=150,
                                n_eval=50, seed=1), progress=False)
        assert torch.equal(res.field.A.abs(), torch.ones_like(res.field.A))  # A stays fixed
        assert res.losses[-1] < 0.7 * res.losses[0]
        assert log_loss_slope(res.losses).slope < 0
        assert res.test_loss is not None and res.test_loss > res.losses[-1]
        drifts.append(weight_drift(res.field.W, res.initial_W))
        # the slowest kernel mode's rate is positive and far below the observed decay
        splits, source = prepare_data(res.config)
        z, _ = fixed_objective(splits.train[:32], source, 2, "linear", 0.0, res.field.spec,
                               derive_seed(1, "objective"))
        assert guaranteed_log_rate(lambda_0(z), res.config.lr, 64) > 0
    assert drifts[1] < drifts[0]
    assert -0.8 < loglog_slope(widths, drifts).slope < -0.2


def test_short_moons_training_reaches_w2_bound():
    cfg = TrainConfig(data="moons", steps=3000, width=256, batch=256, n_eval=500,
                      seed=0)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    ev = evaluate_field(res.field, splits, source, seed=0)
    floor = w2(splits.floor, splits.heldout)
    assert ev.metric == "w2" and ev.floor == pytest.approx(floor)
    assert ev.floor < ev.heldout < 0.4, ev  # untrained: W2 > 1
    assert ev.nfe == 40


def test_check_loss_when_the_first_loss_is_zero():
    from _runkit import Diverged
    from flows.training.loop import EXPLODED, check_loss

    cfg = TrainConfig(data="moons", lr=0.5)
    zeros = torch.zeros(5)
    for step in range(1, 6):  # a field that matches its targets exactly has not diverged
        check_loss(cfg, zeros, step)
    # a small positive loss after a zero one is not an explosion; it sets the scale
    losses = torch.tensor([0.0, 0.0, 1e-6, 0.9e-3, 1.1e-3])
    for step in (1, 2, 3, 4):
        check_loss(cfg, losses, step)
    with pytest.raises(Diverged) as info:
        check_loss(cfg, losses, 5)
    assert info.value.step == 5 and info.value.parameter == "lr"
    assert "step 5" in str(info.value) and "of step 3" in str(info.value)
    assert "lower lr (now 0.5)" in str(info.value)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(Diverged, match="diverged at step 2"):
            check_loss(cfg, torch.tensor([0.0, bad]), 2)
    # a positive first loss is the reference: EXPLODED times it is the limit
    check_loss(cfg, torch.tensor([2.0, 2.0 * EXPLODED]), 2)
    with pytest.raises(Diverged, match="of step 1"):
        check_loss(cfg, torch.tensor([2.0, 2.0 * EXPLODED * 1.01]), 2)
