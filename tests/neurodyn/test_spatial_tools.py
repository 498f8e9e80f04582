"""Multi-module decoding, noisy grid cells, shuffled gridness, HD tuning, heterogeneity, RatInABox
and NWB interoperability."""

import importlib.util
import json
import math

import numpy as np
import pytest
import torch
from drift_theory import null_vector_theory
from scipy.special import i0, i1

from neurodyn.analysis.diagnostics import energy_audit
from neurodyn.cli import main as cli_main
from neurodyn.dynamics.heterogeneity import Heterogeneity, heterogeneous
from neurodyn.dynamics.simulation import simulate
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.interop import from_ratinabox, read_nwb, write_nwb
from neurodyn.io import save_model
from neurodyn.spatial.agent import Box, generate_trajectory
from neurodyn.spatial.decoding import code_error, decode_position
from neurodyn.spatial.gridcells.run import run_grid_cells
from neurodyn.spatial.gridnull import shuffled_gridness
from neurodyn.spatial.head_direction import classify_head_direction, mean_vector, tuning_curves
from neurodyn.spatial.phases import grid_pattern

SPACINGS = (0.4, 0.56, 0.784)


@pytest.fixture(scope="module")
def hex_net():
    return fit(FitConfig(geometry="torus", lattice="hex", n=(16, 16), seed=0)).network


@pytest.fixture(scope="module")
def ring_net():
    return fit(FitConfig(geometry="ring", n=64, seed=0)).network


def test_three_modules_decode_a_2m_box_without_the_start(hex_net):
    traj = generate_trajectory(20.0, 0.02, Box(2.0), seed=3)
    res = run_grid_cells(hex_net, traj, modules=list(SPACINGS), cells=4, shuffles=0)
    ph = np.stack([m.phases for m in res.modules], axis=1)
    err = np.linalg.norm(decode_position(ph, SPACINGS, box=Box(2.0)).position - traj.position,
                         axis=1)
    assert np.median(err) < 0.02 and err.max() < 0.02
    # control: one module alone cannot tell its lattice points apart in a 2 m box
    one = decode_position(ph[:, :1], SPACINGS[:1], box=Box(2.0)).position
    assert np.median(np.linalg.norm(one - traj.position, axis=1)) > 0.2


def test_code_error_grows_with_phase_noise():
    errs = [code_error(SPACINGS, box=Box(2.0), phase_noise=s, samples=400)["median_error_m"]
            for s in (0.0, 0.05, 0.2)]
    assert errs[0] < 1e-6 and errs[0] < errs[1] < errs[2]


def test_noise_on_the_grid_network_diffuses_the_phase_as_predicted(hex_net):
    """Eight copies of one module get independent noise; their phase drift away from the
    noise-free run has the 2-D theory's diffusion tensor D = sigma^2/2 M^-1 G M^-T: D per axis
    from lagged increments (2-16 tau) with a 95% bootstrap interval that contains the theory and
    excludes 0.8x and 1.25x of it, and the hex cross term D_12 = D_11 / 2."""
    from neurodyn.analysis.drift import diffusion_estimate, diffusion_tensor_theory, unwrap_track

    traj = generate_trajectory(10.0, 0.02, Box(1.0), seed=5)
    mods = [0.5] * 8
    kw = {"modules": mods, "cells": 4, "method": "euler", "shuffles": 0}
    clean = run_grid_cells(hex_net, traj, **kw)
    noisy = run_grid_cells(hex_net, traj, noise=0.05, keep_rates=True, **kw)
    diff = np.stack([unwrap_track(n.phases[:, None])[:, 0] - unwrap_track(c.phases[:, None])[:, 0]
                     for n, c in zip(noisy.modules, clean.modules, strict=True)], axis=1)
    t_net = traj.t / 0.01 * hex_net.tau  # tau_seconds = 0.01
    theory = diffusion_tensor_theory(hex_net, 0.05)
    per_axis = float(np.trace(theory)) / 2
    assert theory[0, 1] == pytest.approx(theory[0, 0] / 2)  # the hex axes are 60 deg apart
    est = diffusion_estimate(diff, t_net, lags=(2.0, 4.0, 8.0, 16.0), seed=0)
    assert est.contains(per_axis) and abs(est.D / per_axis - 1) < 0.15, est
    # control: the interval is narrow enough to reject a theory 20-25% off
    assert not est.contains(0.8 * per_axis) and not est.contains(1.25 * per_axis), est
    tensor = np.array(est.tensor)
    assert abs(tensor[0, 1] / per_axis - 0.5) < 0.1, tensor / per_axis
    again = run_grid_cells(hex_net, traj, noise=0.05, **kw)
    assert np.array_equal(noisy.modules[0].phases, again.modules[0].phases)
    assert noisy.modules[0].rates.shape == (traj.steps, 4)
    with pytest.raises(ValueError, match="euler"):
        run_grid_cells(hex_net, traj, cells=4, noise=0.05)


def test_torus_tensor_theory_is_the_projection_on_the_jacobian_null_vectors(hex_net):
    """The 2-D closed form M^-1 G M^-T from the 256 x 256 Jacobian's two left and two right
    null vectors (scaled by the decoder's gradient), with its hex cross term D_12 = D_11 / 2;
    the right null vectors alone (an orthogonal projection) give another tensor."""
    from neurodyn.analysis.drift import diffusion_tensor_theory

    d, left, _, tang = null_vector_theory(hex_net, 0.1)
    theory = diffusion_tensor_theory(hex_net, 0.1)
    # to 2e-5, not rounding: sampled on 16 x 16 the sheet is only nearly symmetric under
    # continuous shifts (the two smallest singular values of J are 6e-6, not 0)
    assert np.allclose(theory, d, rtol=1e-4, atol=0), (theory, d)
    orthogonal = 0.5 * 0.1**2 * np.linalg.inv(tang @ tang.T)
    assert not np.allclose(orthogonal, d, rtol=0.1, atol=0)


def _pattern_rates(lattice, seed=0, cells=6, duration=300.0):
    traj = generate_trajectory(duration, 0.05, Box(1.0), seed=seed)
    rng = np.random.default_rng(seed)
    off = rng.uniform(0, 2 * np.pi, (cells, 2))
    return traj, np.maximum(grid_pattern(traj.position, 0.4, 0.0, lattice, off), 0.0)


def test_shuffled_threshold_accepts_hex_and_rejects_square_patterns():
    traj, hexr = _pattern_rates("hex")
    _, sq = _pattern_rates("square")
    h = shuffled_gridness(traj.position, hexr, 0.05, shuffles=5, seed=1)
    s = shuffled_gridness(traj.position, sq, 0.05, shuffles=5, seed=1)
    assert h.fraction == 1.0 and 0.0 < h.threshold < 0.8
    assert s.fraction == 0.0
    # the null itself sits far below the real scores
    assert np.nanmax(h.null) < h.scores.min()


def test_hd_tuning_matches_the_von_mises_closed_form():
    rng = np.random.default_rng(0)
    h = np.cumsum(rng.normal(0, 0.3, 20000))
    mu, kappa = np.array([0.5, 2.0, 4.0]), np.array([1.0, 2.0, 4.0])
    rates = np.exp(kappa * np.cos(h[:, None] - mu))
    R, pref = mean_vector(tuning_curves(h, rates, bins=60))
    bins_factor = np.sinc(1 / 60)  # sin(pi/60) / (pi/60)
    assert np.allclose(R, bins_factor * i1(kappa) / i0(kappa), atol=0.01)
    assert np.allclose(pref, mu, atol=0.02)
    c = classify_head_direction(h, np.column_stack([rates, rng.uniform(0, 1, h.size)]),
                                shuffles=20, seed=2)
    assert c.is_hd.tolist() == [True, True, True, False]


def test_hd_ring_preferred_directions_follow_the_sheet(ring_net):
    from neurodyn.dynamics.inputs import Constant

    u0 = ring_net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    tr = simulate(ring_net, u0, 130.0, 0.1, velocity=Constant(0.1), save_every=2,
                  diagnostics=False)
    heading = tr.reference[:, 0, 0].numpy()
    R, pref = mean_vector(tuning_curves(heading, tr.r[:, 0].numpy(), bins=64))
    theta = 2 * np.pi * np.arange(64) / 64
    assert np.abs(np.angle(np.exp(1j * (pref - theta)))).max() < 0.05
    r_star = ring_net.manifold.r_star(torch.zeros(1, dtype=torch.float64)).numpy()
    r_bump = abs((r_star * np.exp(1j * theta)).sum()) / r_star.sum()
    assert np.allclose(R, r_bump, atol=0.02)


def test_heterogeneity_pins_the_bump_and_keeps_energy_descent(ring_net):
    same = heterogeneous(ring_net, Heterogeneity())
    u = ring_net.manifold.u_star(torch.tensor([[1.0]], dtype=torch.float64))
    assert torch.equal(same.field(u), ring_net.field(u))
    het = heterogeneous(ring_net, Heterogeneity(gain_sd=0.05, threshold_sd=0.05,
                                                weight_sd=0.05, seed=3))
    a = simulate(ring_net, u, 20.0, 0.1, save_every=20, diagnostics=False)
    b = simulate(het, u, 20.0, 0.1, save_every=20, diagnostics=False)
    assert abs(float(a.decoded[-1, 0, 0]) - 1.0) < 1e-6
    assert abs(float(b.decoded[-1, 0, 0]) - 1.0) > 1e-2  # 0.025 rad in 20 tau
    assert energy_audit(b).ok
    with pytest.raises(ValueError, match="gain_sd"):
        Heterogeneity(gain_sd=-1.0)


def _ratinabox_history(duration=6.0):
    if importlib.util.find_spec("ratinabox") is None:
        return None
    from ratinabox.Agent import Agent
    from ratinabox.Environment import Environment

    np.random.seed(0)  # noqa: NPY002 - RatInABox draws from numpy's global generator
    agent = Agent(Environment(), params={"dt": 0.02})
    for _ in range(int(duration / 0.02)):
        agent.update()
    return agent


def test_ratinabox_agent_and_files(tmp_path):
    agent = _ratinabox_history()
    if agent is None:
        pytest.skip("ratinabox is not installed")
    traj = from_ratinabox(agent)
    arrays = agent.get_history_arrays()
    assert np.array_equal(traj.position, arrays["pos"]) and traj.box.size == 1.0
    np.savez(tmp_path / "history.npz", **arrays)
    hist = {"t": agent.history["t"], "pos": [list(map(float, p)) for p in agent.history["pos"]]}
    (tmp_path / "history.json").write_text(json.dumps(hist))
    for name in ("history.npz", "history.json"):
        assert np.allclose(from_ratinabox(tmp_path / name).position, arrays["pos"])
    with pytest.raises(ValueError, match="'t' and 'pos'"):
        from_ratinabox({"pos": [[0, 0]]})


def test_ratinabox_trajectory_runs_through_the_cli(hex_net, tmp_path):
    agent = _ratinabox_history(4.0)
    if agent is None:
        pytest.skip("ratinabox is not installed")
    np.savez(tmp_path / "history.npz", **agent.get_history_arrays())
    save_model(hex_net, tmp_path / "model" / "model.pt")
    out = tmp_path / "out"
    assert cli_main(["grid-cells", "--model", str(tmp_path / "model"), "--trajectory",
                     str(tmp_path / "history.npz"), "--cells", "4", "--out", str(out)]) == 0
    with np.load(out / "track.npz") as track:
        # tracking files are resampled to the run's dt (here the history's own): equal to rounding
        pos = agent.get_history_arrays()["pos"]
        assert track["position"].shape == pos.shape
        assert np.allclose(track["position"], pos, rtol=0, atol=1e-12)
        t = agent.get_history_arrays()["t"]  # the run's clock starts at the first sample
        assert np.allclose(track["t"], t - t[0])
        assert track["error"].max() < 0.01


def test_nwb_round_trip(tmp_path):
    pytest.importorskip("pynwb")
    rng = np.random.default_rng(0)
    t = np.arange(50) * 0.02
    pos = rng.uniform(0, 1, (50, 2))
    rates = rng.uniform(0, 1, (50, 3))
    maps = rng.uniform(0, 1, (3, 5, 5))
    maps[0, 0, 0] = np.nan
    path = write_nwb(tmp_path / "run.nwb", t, pos, rates, maps, np.linspace(0, 1, 6))
    back = read_nwb(path)
    assert np.array_equal(back["t"], t) and np.array_equal(back["position"], pos)
    assert np.array_equal(back["rates"], rates)
    assert np.array_equal(back["rate_maps"], maps, equal_nan=True)
    with pytest.raises(ValueError, match="position"):
        write_nwb(tmp_path / "bad.nwb", t, pos[:10])


def test_velocity_of_the_ratinabox_example_is_finite():
    traj = from_ratinabox({"t": [0.02, 0.04, 0.06], "pos": [[0.5, 0.5], [0.51, 0.5],
                                                            [0.52, 0.49]]})
    assert np.all(np.isfinite(traj.velocity)) and math.isclose(traj.dt, 0.02)


def test_boundary_encounters_reset_the_noisy_integrator(hex_net):
    traj = generate_trajectory(8.0, 0.02, Box(1.0), seed=5, start=np.array([0.15, 0.5]))
    near = np.minimum(traj.position, 1 - traj.position).min(1) < 0.1
    assert near.any() and not near.all()
    kw = {"modules": [0.5, 0.5], "cells": 4, "method": "euler", "noise": 0.2, "seed": 2,
          "shuffles": 0}
    free = run_grid_cells(hex_net, traj, **kw)
    cued = run_grid_cells(hex_net, traj, boundary_cue=(0.5, 0.1), **kw)
    off = run_grid_cells(hex_net, traj, boundary_cue=(0.0, 0.1), **kw)

    def rms(r):
        return float(np.sqrt(np.mean([m.error ** 2 for m in r.modules])))

    assert rms(cued) < 0.5 * rms(free)
    assert rms(off) == pytest.approx(rms(free), rel=1e-9)  # a zero-strength cue is no cue
    with pytest.raises(ValueError, match="boundary_cue"):
        run_grid_cells(hex_net, traj, boundary_cue=(1.0, -0.1), **kw)
