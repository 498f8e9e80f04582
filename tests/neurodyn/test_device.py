"""--device for simulations: cpu, cuda (CUDA tests skipped on machines without one)."""

import pytest
import torch

from neurodyn.activation import Logistic
from neurodyn.dynamics.device import check_device, on_device
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import LearnedFourierEnergy
from neurodyn.geometry.populations import Ring
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork

no_cuda = not torch.cuda.is_available()


def _net():
    g = Ring(32)
    m = TargetManifold.bump(g, Logistic())
    p = g.power(m.r_star(torch.zeros(1, 1, dtype=torch.float64)))[0]
    e = LearnedFourierEnergy(g, bandwidth=3, scale=p.clamp(min=1e-3))
    e.anchor(p, m.fourier_construction())
    return HopfieldNetwork(g, Logistic(), e, 0.0, 1.0, None, m)


def test_cpu_device_and_refusals():
    net = _net()
    assert check_device("cpu") == torch.device("cpu") and on_device(net, torch.device("cpu")) is net
    with pytest.raises(ValueError, match="unsupported"):
        check_device("meta")
    with pytest.raises(ValueError, match="not a device"):
        check_device("gpu7")
    u0 = net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64)) + 0.1
    assert simulate(net, u0, 1.0, 0.1, device="cpu").u.device.type == "cpu"


@pytest.mark.skipif(not no_cuda, reason="this machine has CUDA: the refusal cannot be tested")
def test_cuda_refused_without_a_device():
    with pytest.raises(ValueError, match="no CUDA device"):
        simulate(_net(), torch.zeros(1, 32, dtype=torch.float64), 1.0, 0.1, device="cuda")


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
def test_cuda_run_matches_cpu():
    net = _net()
    u0 = net.manifold.u_star(torch.zeros(2, 1, dtype=torch.float64)) + 0.1
    a = simulate(net, u0, 5.0, 0.1, device="cuda")
    b = simulate(net, u0, 5.0, 0.1, device="cpu")
    assert a.u.device.type == "cuda" and a.backend == "torch"
    assert float((a.u.cpu() - b.u).abs().max()) < 1e-10


@pytest.fixture(scope="module")
def ring_model(tmp_path_factory):
    from neurodyn.fitting.core import FitConfig, fit
    from neurodyn.io import save_model

    root = tmp_path_factory.mktemp("device")
    save_model(fit(FitConfig(n=16, steps=2, seed=0), progress=False).network,
               root / "m" / "model.pt")
    return root / "m"


COMMANDS = ["simulate", "restore", "path-integrate", "diffuse"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("device", ["cuda:7", "tpu"])
def test_cli_unavailable_device_exits_2_naming_the_option(command, device, ring_model,
                                                          tmp_path, capsys):
    from neurodyn.cli import main

    if device == "cuda:7" and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a CUDA device 7")
    code = main([command, "--model", str(ring_model), "--out", str(tmp_path / "o"),
                 "--device", device])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--device" in err and "Traceback" not in err
    assert not (tmp_path / "o" / "metrics.json").exists()


@pytest.mark.parametrize("command,extra", [
    ("simulate", ["--duration", "1", "--count", "2"]),
    ("restore", ["--duration", "1", "--count", "2", "--kinds", "noise"]),
    ("path-integrate", ["--duration", "1", "--runs", "2"]),
    ("diffuse", ["--duration", "256", "--dt", "0.1", "--runs", "2"])])
def test_cli_cpu_device_runs_every_simulating_command(command, extra, ring_model, tmp_path):
    import json

    from neurodyn.cli import main

    out = tmp_path / command
    assert main([command, "--model", str(ring_model), "--out", str(out), "--device", "cpu",
                 *extra]) == 0
    assert (out / "metrics.json").exists()
    assert json.loads((out / "config.json").read_text())["config"]["device"] == "cpu"


@pytest.mark.parametrize("command", [["grid-cells", "--model", "m"], ["sweep", "drift"]])
@pytest.mark.parametrize("device", ["cuda:7", "tpu"])
def test_grid_cells_and_sweep_refuse_an_unavailable_device(command, device, tmp_path, capsys):
    from neurodyn.cli import main

    if device == "cuda:7" and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a CUDA device 7")
    code = main([*command, "--out", str(tmp_path / "o"), "--device", device])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--device" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def _torus_net(n=12):
    from neurodyn.geometry.populations import Torus
    from neurodyn.network import Transport

    g = Torus(n, n, "hex")
    act = Logistic()
    m = TargetManifold.bump(g, act)
    p = g.power(m.r_star(torch.zeros(1, 2, dtype=torch.float64)))[0]
    e = LearnedFourierEnergy(g, bandwidth=2, degree=3, scale=p.clamp(min=1e-3))
    e.anchor(p, m.fourier_construction())
    return HopfieldNetwork(g, act, e, 0.0, 1.0, Transport.fit(g, m.u0, 1.0, act), m)


def _short_grid_run(device):
    from neurodyn.spatial.agent import Box, generate_trajectory
    from neurodyn.spatial.gridcells.run import run_grid_cells

    traj = generate_trajectory(4.0, 0.02, Box(1.0), seed=2)
    return run_grid_cells(_torus_net(), traj, cells=4, shuffles=0, seed=1, device=device)


def test_grid_cells_on_the_cpu_device_is_the_default_run():
    import numpy as np

    a, b = _short_grid_run("cpu"), _short_grid_run(torch.device("cpu"))
    assert np.array_equal(a.modules[0].phases, b.modules[0].phases)
    assert np.isfinite(a.modules[0].decoded).all() and a.config["device"] == "cpu"
    with pytest.raises(ValueError, match="no CUDA device|unsupported"):
        _short_grid_run("cuda" if no_cuda else "tpu")


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
def test_grid_cells_on_cuda_match_the_cpu():
    a, b = _short_grid_run("cuda"), _short_grid_run("cpu")
    import numpy as np

    assert np.abs(a.modules[0].decoded - b.modules[0].decoded).max() < 1e-6


@pytest.mark.skipif(no_cuda, reason="no CUDA device on this machine")
def test_drift_sweep_cell_on_cuda_matches_the_cpu():
    from neurodyn.experiments.sweeps import drift_cell

    p = {"v": 0.2, "n": 16, "fit_steps": 2, "runs": 2, "duration": 2.0, "dt": 0.1, "seed": 3}
    a, b = drift_cell({**p, "device": "cuda"}), drift_cell({**p, "device": "cpu"})
    assert abs(a["rms_final"] - b["rms_final"]) < 1e-6

