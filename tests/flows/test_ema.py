"""EMA of weights in training: the bias-corrected average, its resume and its refusals."""

import pytest
import torch

from flows.errors import FlowsError
from flows.training.checkpoint import load
from flows.training.ema import WeightAverage
from flows.training.loop import CHECKPOINT, TrainConfig, train

CFG = dict(data="moons", steps=24, width=16, batch=32, n_train=64, n_eval=8,
           checkpoint_every=5)


def test_average_is_the_normalised_geometric_sum():
    f = torch.nn.Linear(2, 1)
    avg = WeightAverage(f, 0.8)
    seen = []
    for k in range(5):
        f.weight.data.normal_(generator=torch.Generator().manual_seed(k))
        seen.append(f.weight.detach().clone())
        avg.update()
    w = torch.tensor([0.2 * 0.8 ** (4 - i) for i in range(5)]) / (1 - 0.8**5)
    expected = sum(wi * s for wi, s in zip(w, seen, strict=True))
    assert torch.allclose(avg.averaged()["weight"], expected, atol=1e-6)
    assert torch.equal(avg.averaged_field().weight, avg.averaged()["weight"])
    assert torch.equal(f.weight, seen[-1])  # the field keeps its last iterate


def test_training_returns_the_average_and_resumes_exactly(tmp_path):
    plain = train(TrainConfig(**CFG), progress=False).field
    last = train(TrainConfig(**CFG, ema=1e-12), progress=False).field  # average = last iterate
    assert torch.allclose(last.W, plain.W, atol=1e-6) and torch.allclose(last.A, plain.A)
    full = train(TrainConfig(**CFG, ema=0.9), progress=False).field
    assert (full.W - plain.W).abs().max() > 1e-3  # the average is not the last iterate
    out = tmp_path / "run"
    part = train(TrainConfig(**CFG, ema=0.9), out, stop_after=12, progress=False)
    assert not part.completed and load(out / CHECKPOINT)["ema"]["n"] == 12
    resumed = train(TrainConfig(**CFG, ema=0.9), out, progress=False).field
    assert torch.equal(resumed.W, full.W) and torch.equal(resumed.A, full.A)


def test_edited_average_and_bad_decays_are_refused(tmp_path):
    out = tmp_path / "run"
    train(TrainConfig(**CFG, ema=0.9), out, stop_after=10, progress=False)
    blob = load(out / CHECKPOINT)
    blob["ema"]["n"] = 3
    torch.save(blob, out / CHECKPOINT)
    with pytest.raises(FlowsError, match="'n'"):
        train(TrainConfig(**CFG, ema=0.9), out, progress=False)
    for bad in (1.0, -0.1, True, "0.9", float("nan")):
        with pytest.raises(FlowsError, match="ema="):
            TrainConfig(ema=bad)
    with pytest.raises(FlowsError, match="theory"):
        TrainConfig(regime="theory", ema=0.99)
    assert "ema" not in TrainConfig().to_dict() and TrainConfig(ema=0.5).to_dict()["ema"] == 0.5
    assert TrainConfig.from_dict(TrainConfig(ema=0.5).to_dict()).ema == 0.5


def test_warmup_average_has_the_scheduled_weights():
    f = torch.nn.Linear(2, 1)
    avg = WeightAverage(f, 0.9, warmup=True)
    seen, betas = [], [min(0.9, n / (n + 9)) for n in range(1, 31)]
    for k in range(30):
        f.weight.data.normal_(generator=torch.Generator().manual_seed(k))
        seen.append(f.weight.detach().clone())
        avg.update()
    # w_i = (1 - beta_i) prod_{j > i} beta_j over their sum 1 - prod_j beta_j
    w = torch.tensor([(1 - betas[i]) * torch.tensor(betas[i + 1:]).prod() for i in range(30)])
    expected = sum(wi * s for wi, s in zip(w / w.sum(), seen, strict=True))
    assert torch.allclose(avg.averaged()["weight"], expected, atol=1e-6)
    assert float(w.sum()) == pytest.approx(1 - float(torch.tensor(betas).prod()), abs=1e-6)
    # control: the constant decay weighs the same iterates differently
    const = WeightAverage(f, 0.9)
    for s in seen:
        f.weight.data.copy_(s)
        const.update()
    assert (const.averaged()["weight"] - expected).abs().max() > 1e-2


def test_warmup_run_resumes_exactly_and_returns_the_last_iterate(tmp_path):
    plain = train(TrainConfig(**CFG), progress=False)
    assert plain.last_iterate is None
    full = train(TrainConfig(**CFG, ema=0.99, ema_warmup=True), progress=False)
    assert torch.equal(full.last_iterate.W, plain.field.W)  # the average leaves the iterates
    assert (full.field.W - plain.field.W).abs().max() > 1e-3
    out = tmp_path / "run"
    train(TrainConfig(**CFG, ema=0.99, ema_warmup=True), out, stop_after=12, progress=False)
    resumed = train(TrainConfig(**CFG, ema=0.99, ema_warmup=True), out, progress=False).field
    assert torch.equal(resumed.W, full.field.W) and torch.equal(resumed.A, full.field.A)
    with pytest.raises(FlowsError, match="ema_warmup"):
        TrainConfig(ema_warmup=True)
    assert "ema_warmup" not in TrainConfig(ema=0.5).to_dict()
    assert TrainConfig.from_dict(TrainConfig(ema=0.5, ema_warmup=True).to_dict()).ema_warmup
