"""Acceptance numbers of the spatial work (slow: run with -m slow)."""

import numpy as np
import pytest

from neurodyn.agent import Box, generate_trajectory
from neurodyn.anchoring import landmark_anchoring
from neurodyn.experiments import diffusion
from neurodyn.fitting import FitConfig, fit
from neurodyn.grid_decoding import decode_position
from neurodyn.gridcells import run_grid_cells

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("n", [64, 128, 256])
def test_ring_diffusion_within_10pct_with_interval(n):
    net = fit(FitConfig(geometry="ring", n=n, seed=0)).network
    for i, noise in enumerate((0.02, 0.05, 0.1)):
        m = diffusion(net, noise=noise, runs=128, duration=400.0, dt=0.05,
                      seed=1000 + 10 * n + i, lags=(2.0, 4.0, 8.0, 16.0)).to_dict()
        assert abs(m["ratio"] - 1) <= 0.1 and m["contains_theory"], (n, noise, m)


def test_landmark_bounds_heading_error_over_2000_tau():
    net = fit(FitConfig(geometry="ring", n=128, seed=0)).network
    r = landmark_anchoring(net, noise=0.3, strength=0.05, duration=2000.0, runs=32, seed=0)
    m = r.metrics
    # bound: the anchored RMS error never exceeds 1.5 sqrt(D/k) (sqrt(D/k) = 0.075 rad)
    assert m["rms_cue_max"] <= 1.5 * r.bound, m
    assert abs(m["rms_cue_late_mean"] / r.bound - 1) < 0.25, m
    # control: without the cue the error grows like sqrt(2 D t)
    assert m["free_ratio_low"] <= 1.0 <= m["free_ratio_high"], m
    assert m["rms_free_final"] > 4 * r.bound


def test_three_modules_decode_2m_box_median_under_2cm():
    net = fit(FitConfig(geometry="torus", lattice="hex", n=(16, 16), seed=0)).network
    traj = generate_trajectory(120.0, 0.02, Box(2.0), seed=3)
    sp = (0.4, 0.56, 0.784)
    res = run_grid_cells(net, traj, modules=list(sp), cells=4)
    ph = np.stack([m.phases for m in res.modules], axis=1)
    err = np.linalg.norm(decode_position(ph, sp, box=Box(2.0)).position - traj.position, axis=1)
    assert np.median(err) <= 0.02
