"""Research-training options: general affine paths (each velocity checked against a finite
difference), logit-normal time sampling, gradient clipping and the convolutional image field,
each through the run contract (validated before --out, recorded, resumed exactly)."""

import json
import math

import pytest
import torch

from flows.cli.commands import main
from flows.errors import FlowsError
from flows.path import PATHS, SCHEDULES, get_path
from flows.training.batches import draw_batch
from flows.training.checkpoint import load, load_model
from flows.training.loop import CHECKPOINT, TrainConfig, prepare_data, train
from flows.training.steps import clip_grads
from flows.training.times import draw_times, logit_normal_density

CFG = dict(data="moons", steps=16, width=16, batch=32, n_train=64, n_eval=8,
           checkpoint_every=5)
RISING = [k for k, (f, _) in SCHEDULES.items() if float(f(torch.zeros(1))) == 0]
FALLING = [k for k in SCHEDULES if k not in RISING]
AFFINE = [f"affine:{a},{s}" for a in RISING for s in FALLING]


def _fd_error(path, h=1e-6):
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(64, 3, generator=g).double(), torch.randn(64, 3, generator=g).double()
    t = torch.rand(64, 1, generator=g).double() * 0.9 + 0.05
    fd = (path.sample(x0, x1, t + h).x_t - path.sample(x0, x1, t - h).x_t) / (2 * h)
    return float((path.sample(x0, x1, t).dx_t - fd).abs().max())


@pytest.mark.parametrize("name", [*PATHS.names(), *AFFINE])
def test_every_path_velocity_is_the_finite_difference_of_its_point(name):
    path = get_path(name, 0.01 if name == "target" else 0.0)
    assert _fd_error(path) < 1e-6
    x0, x1 = torch.randn(5, 2, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)
    ends = [path.sample(x0, x1, torch.full((5, 1), v, dtype=torch.float64)).x_t for v in (0, 1)]
    assert torch.allclose(ends[0], x0)
    if name != "target":  # target ends at x1 + sigma_min x0
        assert torch.allclose(ends[1], x1, atol=1e-12)


def test_affine_paths_reproduce_the_named_ones_and_a_wrong_velocity_fails_the_check():
    g = torch.Generator().manual_seed(1)
    x0, x1, t = torch.randn(9, 2, generator=g), torch.randn(9, 2, generator=g), \
        torch.rand(9, 1, generator=g)
    for affine, named in (("affine:t,1-t", "linear"), ("affine:sin,cos", "vp")):
        a, b = get_path(affine).sample(x0, x1, t), get_path(named).sample(x0, x1, t)
        assert torch.allclose(a.x_t, b.x_t, atol=1e-6) and torch.allclose(a.dx_t, b.dx_t,
                                                                           atol=1e-6)
    path = get_path("affine:t^2,1-t")
    wrong = SCHEDULES["t^2"]
    SCHEDULES["t^2"] = (wrong[0], lambda t: t)  # d/dt t^2 is 2t, not t: the check must see it
    try:
        assert _fd_error(path) > 0.1
    finally:
        SCHEDULES["t^2"] = wrong


@pytest.mark.parametrize("bad, why", [("affine:t,t", "does not join"),
                                      ("affine:t^4,1-t", "unknown"), ("affine:t", "ALPHA,SIGMA")])
def test_bad_affine_paths_are_refused(bad, why):
    with pytest.raises(FlowsError, match=why):
        TrainConfig(path=bad)
    with pytest.raises(FlowsError, match="sigma_min"):
        TrainConfig(path="affine:t,1-t", sigma_min=0.1)


def test_logit_normal_times_follow_their_law_and_uniform_draws_are_unchanged():
    g = torch.Generator().manual_seed(0)
    t = draw_times("logit-normal:0.5,0.8", 40_000, g).double()
    logit = torch.log(t) - torch.log1p(-t)
    assert abs(float(logit.mean()) - 0.5) < 0.02 and abs(float(logit.std()) - 0.8) < 0.02
    u = draw_times("uniform", 40_000, g).double()  # control: the uniform's logit has std pi/3^.5
    assert abs(float((torch.log(u) - torch.log1p(-u)).std()) - math.pi / 3**0.5) < 0.05
    grid = torch.linspace(1e-4, 1 - 1e-4, 20_001, dtype=torch.float64)
    mass = float(logit_normal_density(grid, 0.5, 0.8).sum() * (grid[1] - grid[0]))
    assert abs(mass - 1) < 1e-3
    cfg = TrainConfig(**CFG).resolved()
    splits, source = prepare_data(cfg)
    batch = draw_batch(cfg, splits.train, source, 7, 3, torch.Generator())
    ref = torch.Generator().manual_seed(0)
    from flows.training.batches import step_seed
    ref.manual_seed(step_seed(7, 3))
    torch.randint(0, splits.train.shape[0], (cfg.batch,), generator=ref)
    torch.randn(cfg.batch, 2, generator=ref)
    assert torch.equal(batch[1], torch.rand(cfg.batch, 1, generator=ref))
    for bad in ("beta", "logit-normal:0", "logit-normal:0,-1", "uniform:0,1", 3):
        with pytest.raises(FlowsError, match="time_sampling"):
            TrainConfig(time_sampling=bad)


def test_clipping_scales_to_the_global_norm_and_changes_training_only_when_it_binds():
    g = [torch.tensor([3.0, 0.0]), torch.tensor([[0.0, 4.0]])]
    assert torch.allclose(torch.sqrt(sum(x.square().sum() for x in clip_grads(g, 2.0))),
                          torch.tensor(2.0), atol=1e-5)
    assert clip_grads(g, None) is g and torch.equal(clip_grads(g, 10.0)[0], g[0])
    for extra in ({}, {"model": "flows.field.conv:ConvField", "model_args": {"channels": 4},
                       "data": "digits", "steps": 6}):
        base = {**CFG, **extra}
        plain = train(TrainConfig(**base), progress=False).losses
        loose = train(TrainConfig(**base, clip_grad=1e9), progress=False).losses
        tight = train(TrainConfig(**base, clip_grad=1e-3), progress=False).losses
        assert torch.equal(plain, loose)  # a bound never reached changes nothing
        assert plain[0] == tight[0] and not torch.allclose(plain[2:], tight[2:])
    with pytest.raises(FlowsError, match="clip_grad"):
        TrainConfig(clip_grad=-1.0)
    with pytest.raises(FlowsError, match="theory"):
        TrainConfig(regime="theory", time_sampling="logit-normal")


def test_options_are_recorded_and_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    opts = dict(time_sampling="logit-normal:0,1.5", clip_grad=0.5, path="affine:smoothstep,cos",
                warmup=6)
    full = train(TrainConfig(**CFG, **opts), progress=False)
    part = train(TrainConfig(**CFG, **opts), tmp_path, stop_after=7, progress=False)
    assert not part.completed
    assert {k: load(tmp_path / CHECKPOINT)["config"][k] for k in opts} == opts
    with pytest.raises(FlowsError, match="time_sampling"):  # another config is refused
        train(TrainConfig(**CFG, **{**opts, "time_sampling": "uniform"}), tmp_path,
              progress=False)
    resumed = train(TrainConfig(**CFG, **opts), tmp_path, progress=False)
    assert torch.equal(resumed.losses, full.losses) and torch.equal(resumed.field.W, full.field.W)
    other = train(TrainConfig(**CFG, **{**opts, "time_sampling": "uniform"}), progress=False)
    assert not torch.equal(other.losses, full.losses)
    assert not {"time_sampling", "clip_grad", "warmup"} & set(TrainConfig().to_dict())


def test_command_line_trains_the_conv_field_with_the_options_and_refuses_before_out(
        tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--data", "digits", "--labels", "data", "--steps", "30", "--batch", "32",
            "--n-eval", "50", "--model-class", "flows.field.conv:ConvField", "--model-args",
            '{"classes": 10, "channels": 8}', "--time-sampling", "logit-normal",
            "--clip-grad", "1.0", "--path", "affine:sin,1-t", "--sample-steps", "4"]
    assert main([*args, "--out", str(out), "--json"]) == 0
    cfg = json.loads((out / "config.json").read_text())["config"]
    assert (cfg["time_sampling"], cfg["clip_grad"], cfg["path"]) == \
        ("logit-normal", 1.0, "affine:sin,1-t")
    metrics = json.loads(capsys.readouterr().out)
    assert math.isfinite(metrics["sliced_heldout"]) and metrics["classes"] == 10
    field, _ = load_model(out)  # the library's own class needs no --trust-module
    assert type(field.module).__name__ == "ConvField"
    for bad in (["--time-sampling", "gamma"], ["--clip-grad", "0"], ["--path", "affine:t,t"],
                ["--path", "curvy"]):
        target = tmp_path / "never"
        try:
            code = main([*args, "--out", str(target), *bad])
        except SystemExit as exc:  # argparse's own refusal
            code = exc.code
        assert code == 2 and not target.exists(), bad
    moons = tmp_path / "moons"
    assert main(["train", "--data", "moons", "--out", str(moons), "--steps", "2",
                 "--model-class", "flows.field.conv:ConvField"]) == 2
    assert "square" in capsys.readouterr().err and not moons.exists()
