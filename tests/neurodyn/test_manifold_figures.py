"""Manifold visualisation: topology of simulated activity, energy landscape, GIFs, the command."""

import json
import math

import numpy as np
import pytest
import torch
from PIL import Image

from flows.plotting.animation import animate_flow
from neurodyn.analysis.activity import manifold_activity, path_on_manifold
from neurodyn.analysis.landscape import energy_landscape
from neurodyn.analysis.topology import persistent_homology
from neurodyn.cli import main
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import save_model
from neurodyn.plotting.animation import animate_ring_bump, animate_sheet_bump
from neurodyn.plotting.manifold import plot_activity_pca, plot_energy_landscape, plot_manifold_path
from neurodyn.runs import manifold_report

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def ring():
    return fit(FitConfig(n=64, seed=1)).network


@pytest.fixture(scope="module")
def torus():
    return fit(FitConfig(geometry="torus", n=(16, 16), seed=1)).network


@pytest.fixture(scope="module")
def ring_dir(ring, tmp_path_factory):
    out = tmp_path_factory.mktemp("ring_model")
    save_model(ring, out / "model.pt")
    return out


def gif_frames(path) -> int:
    with Image.open(path) as im:
        assert im.format == "GIF"
        return im.n_frames


# ------------------------------------------------------------------------------- activity, topology


def test_ring_activity_is_a_circle(ring):
    act = manifold_activity(ring, samples=400, seed=0)
    assert act.rates.shape == (400, 64) and act.decoded.shape == (400, 1)
    assert act.distance.max() < 0.1  # near the manifold, not on a transient
    hist, _ = np.histogram(act.decoded[:, 0], bins=8, range=(0, 2 * math.pi))
    assert hist.min() > 0  # the whole ring is visited
    assert persistent_homology(act.rates, maxdim=2, seed=0).betti() == (1, 1, 0)


def test_torus_activity_is_a_torus(torus):
    act = manifold_activity(torus, samples=400, seed=0)
    assert act.rates.shape == (400, 256) and act.decoded.shape == (400, 2)
    assert act.distance.max() < 0.15
    hist, _, _ = np.histogram2d(act.decoded[:, 0], act.decoded[:, 1], bins=4,
                                range=[(0, 2 * math.pi)] * 2)
    assert hist.min() > 0
    assert persistent_homology(act.rates, maxdim=2, seed=0).betti() == (1, 2, 1)


def test_activity_is_seeded(ring):
    a = manifold_activity(ring, samples=30, duration=4.0, relax=1.0, seed=3)
    b = manifold_activity(ring, samples=30, duration=4.0, relax=1.0, seed=3)
    c = manifold_activity(ring, samples=30, duration=4.0, relax=1.0, seed=4)
    assert np.array_equal(a.rates, b.rates)
    assert not np.allclose(a.rates, c.rates)


def test_activity_sampled_after_relaxation(ring):
    # without input or noise, states started on the manifold stay where they started
    act = manifold_activity(ring, samples=20, runs=4, duration=5.0, relax=2.0, velocity=None,
                            noise=0.0, seed=0)
    assert act.runs == 4
    assert act.distance.max() < 1e-6
    per_run = act.decoded[:, 0].reshape(4, 5)
    assert np.allclose(per_run, per_run[:, :1], atol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({"samples": 0}, "samples=0"),
    ({"samples": -3}, "samples=-3"),
    ({"relax": 50.0}, "relax=50.0"),
    ({"noise": -1.0}, "noise=-1.0"),
    ({"dt": 0.0}, "dt=0.0"),
])
def test_activity_rejects_bad_input(ring, kwargs, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        manifold_activity(ring, **kwargs)


# ------------------------------------------------------------------------------- energy landscape


@pytest.fixture(scope="module")
def torus24():
    return fit(FitConfig(geometry="torus", n=(24, 24), seed=1)).network


@pytest.mark.parametrize("name", ["ring", "torus24"])
def test_energy_flat_along_tangent_valley_along_normals(name, request):
    net = request.getfixturevalue(name)
    land = energy_landscape(net, points=64, s_max=0.1, steps=21, directions=3, seed=0)
    assert land.tangent.shape == ((1, 64) if name == "ring" else (3, 64))
    assert land.normal.shape == (5, 21)
    assert land.tangent_relative < 1e-6
    assert land.normal_depth > 0
    assert np.all(land.argmin_s() == 0.0)
    # the valley rises on both sides of s = 0 along every direction
    c = len(land.s) // 2
    assert np.all(land.normal[:, c + 1] > 0) and np.all(land.normal[:, c - 1] > 0)
    metrics = land.metrics()
    assert metrics["normal_local_min"] and metrics["normal_min_at_zero"]


def test_tangent_energy_exact_for_whole_neuron_shifts(torus):
    # shifts by whole neurons permute the population: E is invariant to rounding; shifts in
    # between differ only by the aliasing of phi(u*) on the 16 x 16 grid
    land = energy_landscape(torus, points=32, s_max=0.1, directions=0)
    whole = land.tangent[:, ::2]  # psi = 2 pi j / 16
    depth = abs(land.normal_depth)
    assert np.abs(whole).max() < 1e-10 * depth
    assert land.tangent_range < 1e-4 * depth


def test_energy_landscape_values_are_the_network_energy(ring):
    land = energy_landscape(ring, points=8, s_max=0.1, steps=5, directions=0)
    m = ring.manifold
    psi = torch.tensor([[land.psi[3]]], dtype=torch.float64)
    with torch.no_grad():
        e0 = float(ring.energy(m.u_star(torch.zeros(1, dtype=torch.float64))))
        e3 = float(ring.energy(m.u_star(psi))[0])
        amp = m.u0 - m.u0.mean()
        e_amp = float(ring.energy(m.u0 + 0.1 * m.norm * amp / amp.norm()))
    assert land.tangent[0, 3] == pytest.approx(e3 - e0, abs=1e-12)
    assert land.normal_names[0] == "amplitude"
    assert land.normal[0, -1] == pytest.approx(e_amp - e0, rel=1e-9)


def test_landscape_and_path_figures_have_labels(ring):
    fig = plot_energy_landscape(energy_landscape(ring, points=16, directions=1))
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
    tr = path_on_manifold(ring, runs=2, duration=20.0, seed=0)
    assert float(tr.path_error().abs().max()) < 1e-3
    fig = plot_manifold_path(tr)
    assert fig.axes[-1].get_xlabel() == "time (τ)"
    act = manifold_activity(ring, samples=60, seed=0)
    fig = plot_activity_pca(act, path=tr.r[:, 0].numpy())
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("PC1") and ax.get_zlabel().startswith("PC3")


# ------------------------------------------------------------------------------- animations


def test_ring_bump_gif(ring, tmp_path):
    tr = path_on_manifold(ring, runs=1, duration=30.0, seed=0, save_every=5)  # 61 states
    path = animate_ring_bump(tr, tmp_path / "ring.gif", frames=12)
    assert gif_frames(path) == 12


def test_sheet_bump_gif(torus, tmp_path):
    tr = path_on_manifold(torus, runs=2, duration=10.0, seed=0)  # 11 states
    path = animate_sheet_bump(tr, tmp_path / "sheet.gif", lattice="hex", frames=60, run=1)
    assert gif_frames(path) == 11  # never more frames than saved states


def test_flow_gif_and_errors(tmp_path):
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(50, 2))
    t = np.linspace(0, 1, 20)[:, None, None]
    traj = (1 - t) * x0 + t * (x0 / np.linalg.norm(x0, axis=1, keepdims=True))
    path = animate_flow(traj, tmp_path / "flow.gif", frames=10, target=x0 * 0.5, trails=5)
    assert gif_frames(path) == 10
    with pytest.raises(ValueError, match="trajectories: shape"):
        animate_flow(traj[..., :1], tmp_path / "bad.gif")
    with pytest.raises(ValueError, match=r"must end with \.gif"):
        animate_flow(traj, tmp_path / "flow.png")
    with pytest.raises(ValueError, match="fps=0"):
        animate_flow(traj, tmp_path / "flow2.gif", fps=0)


# ------------------------------------------------------------------------------- report and command


def test_manifold_command_writes_its_files(ring_dir, tmp_path):
    out = tmp_path / "m"
    code = main(["manifold", "--model", str(ring_dir), "--out", str(out), "--samples", "300",
                 "--seed", "2", "--animate"])
    assert code == 0
    for name in ("pca.png", "isomap.png", "barcode.png", "energy_landscape.png", "path.png",
                 "ring_bump.gif", "activity.npz", "metrics.json", "config.json"):
        assert (out / name).exists(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["betti"] == [1, 1, 0] and metrics["betti_ok"]
    assert metrics["pca_top3"] > 0.8  # a bump on a ring: the first Fourier pair dominates
    assert metrics["energy"]["tangent_relative"] < 1e-6
    assert metrics["energy"]["normal_local_min"]
    assert metrics["path_error_rms_final"] < 1e-3
    assert "seconds" not in metrics  # wall times differ between runs of one seed
    assert json.loads((out / "timing.json").read_text())["seconds"]["total"] > 0
    config = json.loads((out / "config.json").read_text())
    assert config["command"] == "neurodyn manifold" and config["seed"] == 2
    assert config["config"]["samples"] == 300
    assert np.load(out / "activity.npz")["rates"].shape == (300, 64)
    assert 1 <= gif_frames(out / "ring_bump.gif") <= 60


def test_report_without_topology_or_files(torus):
    metrics = manifold_report(torus, None, samples=100, topology=False)
    assert "betti" not in metrics
    assert len(metrics["pca_explained_variance"]) == 6
    # a hexagonal bump: three equal Fourier pairs carry the variance
    assert sum(metrics["pca_explained_variance"]) > 0.8


@pytest.mark.parametrize("args", [
    ["--model", "/nonexistent/model/dir"],
    ["--samples", "0"],
    ["--samples", "-5"],
])
def test_manifold_command_bad_input_exits_2(ring_dir, tmp_path, args, capsys):
    argv = ["manifold", "--model", str(ring_dir), "--out", str(tmp_path / "x"), *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "error" in err and (args[0].lstrip("-") in err)


def test_docstring_examples_run():
    import doctest

    import neurodyn.analysis.activity
    import neurodyn.analysis.landscape

    attempted = 0
    for module in (neurodyn.analysis.activity, neurodyn.analysis.landscape):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0
        attempted += result.attempted
    assert attempted >= 6


# ------------------------------------------------------------------------------- acceptance


@pytest.mark.slow
@pytest.mark.parametrize("geometry", ["ring", "torus"])
def test_default_models_have_the_expected_betti_numbers(geometry, tmp_path):
    model = tmp_path / "model"
    assert main(["fit", geometry, "--out", str(model)]) == 0
    out = tmp_path / "m"
    assert main(["manifold", "--model", str(model), "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["betti"] == ([1, 1, 0] if geometry == "ring" else [1, 2, 1])
    assert metrics["energy"]["tangent_relative"] < 1e-9
    assert metrics["energy"]["normal_local_min"]
