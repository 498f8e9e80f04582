"""``device`` of a fit (``neurodyn fit --device``): cpu, cuda (CUDA tests skipped without one)."""

import json

import pytest
import torch

from neurodyn.cli import main
from neurodyn.fitting import core as fitting
from neurodyn.fitting.checkpoint import checkpoint_config
from neurodyn.fitting.core import FitConfig, FitInterrupted, fit

no_cuda = not torch.cuda.is_available()
#: a CUDA device this machine does not have
MISSING_CUDA = "cuda" if no_cuda else f"cuda:{torch.cuda.device_count()}"

FIT = ["fit", "ring", "--n", "16", "--steps", "2", "--batch", "2", "--no-kappa-check"]


def _energy_state(out):
    return torch.load(out / "model.pt", weights_only=True)["energy_state"]


def test_cli_device_cpu_is_bit_identical_to_no_flag(tmp_path):
    a, b = tmp_path / "default", tmp_path / "cpu"
    assert main([*FIT, "--out", str(a)]) == 0
    assert main([*FIT, "--out", str(b), "--device", "cpu"]) == 0
    sa, sb = _energy_state(a), _energy_state(b)
    assert sa.keys() == sb.keys() and len(sa) > 0
    for k in sa:
        assert torch.equal(sa[k], sb[k]), k
    assert any(bool(v.abs().sum() > 0) for v in sa.values())  # something was fitted
    ma, mb = (json.loads((d / "metrics.json").read_text()) for d in (a, b))
    assert ma["final_loss"] == mb["final_loss"] and ma["device"] == mb["device"] == "cpu"
    assert json.loads((b / "config.json").read_text())["config"]["device"] == "cpu"


def test_cli_refuses_an_unavailable_cuda_with_exit_2_naming_it(tmp_path, capsys):
    out = tmp_path / "o"
    code = main([*FIT, "--out", str(out), "--device", MISSING_CUDA])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "--device" in err and repr(MISSING_CUDA) in err and "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert not out.exists()


def test_api_refuses_an_unavailable_or_foreign_device():
    with pytest.raises(ValueError, match="CUDA device"):
        FitConfig(device=MISSING_CUDA)
    with pytest.raises(ValueError, match="unsupported"):
        FitConfig(device="meta")
    assert FitConfig(device=torch.device("cpu")).device == "cpu"  # stored as plain text
    assert "device" not in checkpoint_config(FitConfig())  # resumes on any device


def _interrupt_at(monkeypatch, step):
    """Ctrl-C when batch ``step`` is drawn (both families draw one batch per step)."""
    batch = fitting._batch

    def failing(manifold, config, k):
        if k >= step:
            raise KeyboardInterrupt
        return batch(manifold, config, k)

    monkeypatch.setattr(fitting, "_batch", failing)


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
    return [t for v in items for t in _tensors(v)]


def _resumed(tmp_path, monkeypatch, first, second, **kw):
    """A fit interrupted after one step on device ``first``, resumed on ``second``."""
    with monkeypatch.context() as m:
        _interrupt_at(m, 1)
        with pytest.raises(FitInterrupted):
            fit(FitConfig(device=first, **kw), out_dir=tmp_path, progress=False)
    state = torch.load(tmp_path / "fit_state.pt", weights_only=True)
    assert state["step"] == 1
    assert all(t.device.type == "cpu" for t in _tensors(state)) and len(_tensors(state)) > 0
    return fit(FitConfig(device=second, **kw), out_dir=tmp_path, progress=False)


def _theta_gap(a, b):
    """Largest difference of the fitted coefficients, relative to the largest one (the normal
    equations of a torus are ill-conditioned, so round-off moves them by their own scale)."""
    ta, tb = a.network.energy_fn.theta().cpu(), b.network.energy_fn.theta().cpu()
    return float((ta - tb).abs().max() / tb.abs().max())


def _field_gap(a, b):
    """Largest difference of the two fitted fields near the manifold, relative to its size."""
    m = b.network.manifold
    gen = torch.Generator().manual_seed(7)
    psi = m.geometry.random_phase(4, gen)
    u = m.u_star(psi) + 0.1 * torch.randn(m.u_star(psi).shape, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        fa = a.network.field(u.to(a.network.bias.device)).cpu()
        fb = b.network.field(u)
    return float((fa - fb).abs().max() / fb.abs().max())


KW = {"n": 16, "steps": 3, "batch": 2}


@pytest.mark.parametrize("family", ["seal", "mlp"])
def test_interrupted_cpu_fit_resumes_to_the_uninterrupted_result(family, tmp_path, monkeypatch):
    kw = {**KW, "family": family}
    full = fit(FitConfig(**kw), progress=False)
    resumed = _resumed(tmp_path, monkeypatch, "cpu", "cpu", **kw)
    assert resumed.resumed_from == 1
    assert torch.equal(resumed.network.energy_fn.theta(), full.network.energy_fn.theta())
    assert resumed.history == full.history
    assert _theta_gap(resumed, full) == 0.0 and _field_gap(resumed, full) == 0.0


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
@pytest.mark.parametrize("options", [{"geometry": "ring", "n": 32}, {"geometry": "torus", "n": 8}],
                         ids=["ring", "torus"])
def test_cuda_fit_matches_the_cpu_fit(options):
    cfg = {**options, "steps": 2, "batch": 2}
    a, b = fit(FitConfig(device="cuda", **cfg)), fit(FitConfig(device="cpu", **cfg))
    assert a.network.bias.device.type == "cuda" and a.network.manifold.u0.device.type == "cuda"
    assert _theta_gap(a, b) < 1e-8 and _field_gap(a, b) < 1e-8
    assert all(abs(x - y) <= 1e-8 * max(1.0, abs(y))
               for k in a.history for x, y in zip(a.history[k], b.history[k], strict=True))
    gains = (a.network.transport.gains.cpu() - b.network.transport.gains).abs().max()
    assert float(gains) < 1e-8


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
@pytest.mark.parametrize("first,second", [("cuda", "cpu"), ("cpu", "cuda")])
def test_fit_resumed_on_another_device_matches_the_uninterrupted_one(first, second, tmp_path,
                                                                     monkeypatch):
    full = fit(FitConfig(**KW), progress=False)
    resumed = _resumed(tmp_path, monkeypatch, first, second, **KW)
    assert resumed.resumed_from == 1
    assert _theta_gap(resumed, full) < 1e-8 and _field_gap(resumed, full) < 1e-8


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
def test_cli_fit_on_cuda_writes_a_cpu_model(tmp_path):
    from neurodyn.io import load_model

    assert main([*FIT, "--out", str(tmp_path / "g"), "--device", "cuda"]) == 0
    assert main([*FIT, "--out", str(tmp_path / "c")]) == 0
    sg, sc = _energy_state(tmp_path / "g"), _energy_state(tmp_path / "c")
    assert all(v.device.type == "cpu" for v in sg.values())
    assert all(float((sg[k] - sc[k]).abs().max()) <= 1e-8 * max(1.0, float(sc[k].abs().max()))
               for k in sc if sc[k].is_floating_point())
    assert load_model(tmp_path / "g").network.bias.device.type == "cpu"
