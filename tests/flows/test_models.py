"""Any velocity module: training by autograd, saving by import path, exact resume, devices."""

import numpy as np
import pytest
import torch

from flows import TrainConfig, train
from flows.errors import FlowsError
from flows.evaluation.distances import w2
from flows.field import FieldSpec, TwoLayerReLUField
from flows.field.module import (
    ModuleField,
    field_from_blob,
    import_class,
    model_blob,
    resolve_device,
)
from flows.runs.run import evaluate_field, sample_field
from flows.sampling.ode import BudgetExceeded, integrate, log_likelihood, velocity_divergence
from flows.training.checkpoint import LoadedModel, load_model, save_model
from flows.training.loop import prepare_data

SELU = "flows_user_models:SeluMLP"


def _cfg(**kw):
    base = dict(data="moons", model=SELU, model_args={"hidden": 32}, steps=300, batch=128,
                lr=3e-2, n_train=2000, n_eval=300, checkpoint_every=50, seed=1)
    return TrainConfig(**{**base, **kw})


def test_a_user_module_learns_moons_and_beats_its_own_initialisation():
    cfg = _cfg(steps=200)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    assert isinstance(res.field, ModuleField) and res.initial_W is None
    ev = evaluate_field(res.field, splits, source, 0)
    untrained = train(_cfg(steps=1), splits=splits, source=source, progress=False)
    ev0 = evaluate_field(untrained.field, splits, source, 0)
    assert ev.heldout < 0.6 * ev0.heldout, (ev, ev0)


@pytest.mark.parametrize("coupling", ["independent", "ot"])
def test_user_module_resumes_exactly_and_is_independent_of_workers(tmp_path, coupling):
    cfg = _cfg(steps=60, coupling=coupling)
    full = train(cfg, progress=False, workers=0)
    part = train(cfg, out_dir=tmp_path, stop_after=23, progress=False, workers=2)
    assert part.steps_done == 23 and not part.completed
    resumed = train(cfg, out_dir=tmp_path, progress=False)
    assert torch.equal(resumed.losses, full.losses)
    for a, b in zip(resumed.field.state_dict().values(), full.field.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)


def test_saved_module_is_rebuilt_from_its_import_path(tmp_path):
    cfg = _cfg(steps=20)
    res = train(cfg, progress=False)
    save_model(tmp_path / "model.pt", res.field, cfg.to_dict())
    blob = torch.load(tmp_path / "model.pt", weights_only=True)  # nothing but data inside
    assert blob["spec"] == {"target": SELU, "args": {"hidden": 32}, "classes": 0, "dim": 2}
    loaded = load_model(tmp_path)
    assert isinstance(loaded, LoadedModel) and loaded._fields == ("field", "config")
    field, config = loaded  # still unpacks as the pair
    assert field is loaded.field and config is loaded.config
    x = torch.randn(7, 2, generator=torch.Generator().manual_seed(0))
    assert torch.equal(field(x, 0.3), res.field(x, 0.3)) and config["model"] == SELU
    # control: a fresh build from the same path differs until the tensors are loaded
    fresh = ModuleField(import_class(SELU)(hidden=32))
    assert not torch.equal(fresh(x, 0.3), res.field(x, 0.3))


def test_module_passed_in_built_needs_it_back_to_load(tmp_path):
    from flows_user_models import SeluMLP

    cfg = TrainConfig(data="moons", steps=5, batch=32, n_train=100, n_eval=20)
    res = train(cfg, model=SeluMLP(hidden=8), progress=False)
    save_model(tmp_path / "model.pt", res.field, cfg.to_dict())
    with pytest.raises(FlowsError, match="pass it as model="):
        load_model(tmp_path)
    field, _ = load_model(tmp_path, model=SeluMLP(hidden=8))
    x = torch.zeros(3, 2)
    assert torch.equal(field(x, 0.5), res.field(x, 0.5))


def test_bad_model_names_and_planted_specs_are_refused(tmp_path):
    with pytest.raises(FlowsError, match="package.module:Class"):
        TrainConfig(model="no colon here")
    with pytest.raises(FlowsError, match="cannot be imported"):
        TrainConfig(model="no_such_module_xyz:Net")
    with pytest.raises(FlowsError, match="not a torch.nn.Module"):
        TrainConfig(model="flows_user_models:NotAModule")
    with pytest.raises(FlowsError, match="theory"):
        TrainConfig(model=SELU, regime="theory")
    blob = model_blob(TwoLayerReLUField(FieldSpec(2, 4), seed=0), {})
    blob.update(kind="module", spec={"target": "os:system", "args": {}, "classes": 0})
    with pytest.raises(FlowsError, match="not a torch.nn.Module"):
        field_from_blob(blob)
    (tmp_path / "model.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(Exception):  # noqa: B017 - refused on load, whatever the wording
        load_model(tmp_path)


def test_closed_form_divergence_equals_autograd():
    field = TwoLayerReLUField(FieldSpec(3, 32, fourier=1), seed=2)
    x = torch.randn(50, 3, generator=torch.Generator().manual_seed(3))
    t = torch.tensor(0.4)
    v, div = velocity_divergence(field, x, t)
    v2, div2 = velocity_divergence(lambda x, t: field(x, t), x, t)  # no closed form: autograd
    assert torch.allclose(v, v2) and torch.allclose(div, div2, atol=1e-5)


def test_likelihood_tolerance_and_budget():
    mean, std = torch.tensor([1.0, -2.0]), 0.5
    from flows.optimal import gaussian_optimal_velocity

    f = lambda x, t: gaussian_optimal_velocity(x, t, mean, std)  # noqa: E731
    pts = torch.randn(16, 2, generator=torch.Generator().manual_seed(1))
    ref = torch.distributions.Normal(mean, std).log_prob(pts).sum(1)
    loose = log_likelihood(f, pts, rtol=1e-3, atol=1e-3)
    tight = log_likelihood(f, pts, rtol=1e-7, atol=1e-7)
    assert tight.nfe > loose.nfe
    assert (tight.logp - ref).abs().max() < 1e-4 < (loose.logp - ref).abs().max() + 1e-4
    with pytest.raises(BudgetExceeded, match="max_nfe=30"):
        log_likelihood(f, pts, rtol=1e-7, atol=1e-7, max_nfe=30)
    with pytest.raises(BudgetExceeded, match="max_nfe=10"):
        integrate(f, pts, method="dopri5", rtol=1e-8, atol=1e-8, max_nfe=10)
    with pytest.raises(FlowsError, match="rtol"):
        log_likelihood(f, pts, rtol=0.0)


def test_devices():
    assert resolve_device("cpu").type == "cpu"
    with pytest.raises(FlowsError, match="device='tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(FlowsError, match="no CUDA device"):
            resolve_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
@pytest.mark.parametrize("model", [None, SELU])
def test_cuda_training_coupling_sampling_and_likelihood(model):
    cfg = _cfg(model=model, steps=50, coupling="ot", labels=None)
    splits, source = prepare_data(cfg)
    cpu = train(cfg, splits=splits, source=source, progress=False)
    gpu = train(cfg, splits=splits, source=source, progress=False, device="cuda")
    assert next(gpu.field.parameters()).device.type == "cuda"
    assert np.allclose(gpu.losses.numpy(), cpu.losses.numpy(), rtol=1e-3, atol=1e-4)
    x = sample_field(gpu.field, source, 200, 0).x
    assert x.device.type == "cuda"
    assert w2(x.cpu(), splits.heldout[:200]) < 3.0
    ll = log_likelihood(gpu.field, splits.heldout[:50].cuda())
    assert ll.logp.device.type == "cuda" and torch.isfinite(ll.logp).all()


def test_cli_trains_a_named_module_and_samples_it_back(tmp_path, capsys):
    import json

    from flows.cli.commands import main

    out = tmp_path / "run"
    code = main(["train", "--data", "moons", "--out", str(out), "--model-class", SELU,
                 "--model-args", '{"hidden": 16}', "--steps", "30", "--batch", "64",
                 "--n-train", "500", "--n-eval", "50", "--coupling", "ot", "--method", "rk4",
                 "--device", "cpu"])
    assert code == 0, capsys.readouterr().err
    cfg = json.loads((out / "config.json").read_text())["config"]
    assert cfg["model"] == SELU and cfg["model_args"] == {"hidden": 16}
    assert cfg["ot_solver"] in ("auction", "emd")
    assert main(["sample", "--model", str(out), "--n", "20", "--out",
                 str(tmp_path / "s.npy"), "--method", "euler", "--steps", "4"]) == 0
    x = np.load(tmp_path / "s.npy")
    field, _ = load_model(out)
    x0 = torch.randn(20, 2, generator=torch.Generator().manual_seed(0))
    assert np.allclose(x, integrate(field, x0, method="euler", steps=4).x.numpy(), atol=1e-6)
    capsys.readouterr()
    assert main(["train", "--data", "moons", "--out", str(tmp_path / "bad"), "--model-args",
                 "[1, 2]"]) == 2


def test_cli_class_conditional_digits_and_sampling_by_class(tmp_path, capsys):
    import json

    from flows.cli.commands import main

    out = tmp_path / "digits"
    assert main(["train", "--data", "digits", "--labels", "data", "--out", str(out),
                 "--steps", "20", "--width", "32", "--batch", "64", "--n-eval", "200",
                 "--coupling", "ot"]) == 0, capsys.readouterr().err
    m = json.loads((out / "metrics.json").read_text())
    assert len(m["per_class"]) == 10 and m["worst_class_ratio"] > 0
    assert (out / "samples_by_class.png").is_file()
    assert main(["sample", "--model", str(out), "--n", "12", "--out", str(tmp_path / "d.npy"),
                 "--label", "3", "--guidance", "2"]) == 0
    side = json.loads((tmp_path / "d.json").read_text())
    assert side["config"]["label"] == 3 and side["config"]["guidance"] == 2.0
    assert np.load(tmp_path / "d.npy").shape == (12, 64)
    capsys.readouterr()
    assert main(["sample", "--model", str(out), "--n", "2", "--out", str(tmp_path / "e.npy"),
                 "--label", "10"]) == 2


_PLANTED_MODULE = '''
import pathlib
from torch import nn

pathlib.Path(__file__).with_name("imported.marker").write_text("module code ran")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x, t):
        return self.lin(__import__("torch").cat([x, t], -1))
'''


def test_a_model_file_cannot_make_the_loader_import_a_module(tmp_path, monkeypatch, capsys):
    import sys

    from flows.cli.commands import main

    code_dir = tmp_path / "code"
    code_dir.mkdir()
    (code_dir / "side_effect_models.py").write_text(_PLANTED_MODULE)
    marker = code_dir / "imported.marker"
    monkeypatch.syspath_prepend(str(code_dir))
    field = ModuleField(import_class("side_effect_models:Net")(), dim=2)
    save_model(tmp_path / "run" / "model.pt", field, {"model": "side_effect_models:Net",
                                                      "model_args": {}, "source": "normal"})
    marker.unlink()
    monkeypatch.delitem(sys.modules, "side_effect_models")
    with pytest.raises(FlowsError, match="--trust-module side_effect_models"):
        load_model(tmp_path / "run")
    assert main(["sample", "--model", str(tmp_path / "run"), "--n", "4", "--out",
                 str(tmp_path / "a.npy")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--trust-module" in err and "Traceback" not in err
    assert not marker.exists() and not (tmp_path / "a.npy").exists()
    # control: trusting the module imports it (its code runs) and the model loads
    assert main(["sample", "--model", str(tmp_path / "run"), "--n", "4", "--out",
                 str(tmp_path / "b.npy"), "--trust-module", "side_effect_models"]) == 0
    assert marker.exists() and np.load(tmp_path / "b.npy").shape == (4, 2)
