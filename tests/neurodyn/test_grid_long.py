"""Long grid-cell sessions: tracking files, rectangular arenas and their wall cue, noise set by a
stated diffusion, and several modules decoded together without the start position."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurodyn.spatial.agent import Box
from neurodyn.spatial.gridcells import calibration, joint
from neurodyn.spatial.gridcells.recorded import file_trajectory, read_tracking
from neurodyn.spatial.gridcells.run import _cue_pieces, run_grid_cells
from neurodyn.spatial.gridcells.segments import cue_gain
from neurodyn.spatial.phases import position_to_phase

SPACINGS = (0.4, 0.56, 0.784)


@pytest.fixture(scope="module")
def net():
    from neurodyn.fitting.core import FitConfig, fit

    return fit(FitConfig(geometry="torus", n=(12, 12), steps=2)).network


def _tracking(n: int = 300, dt: float = 1 / 30):
    """A slow walk sampled at 30 Hz with one reflection 1 m away and 10 missed frames."""
    t = np.arange(n) * dt
    x = np.c_[0.5 + 0.2 * np.sin(t), 0.5 + 0.2 * np.cos(0.7 * t)]
    x[100] = x[100] + 1.0
    keep = np.ones(n, dtype=bool)
    keep[200:210] = False
    return t[keep], x[keep]


def test_tracking_files_csv_and_npz_read_and_report_alike(tmp_path):
    """A CSV (with a header) and an npz of the same tracking give the same resampled path and
    report: one jump dropped, the missed frames as a gap of 11 intervals; a CSV without the
    header reads the same; a file without times is refused naming what it lacks."""
    t, x = _tracking()
    csv = tmp_path / "track.csv"
    csv.write_text("t,x,y\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                         for row in np.c_[t, x]))
    np.savez(tmp_path / "track.npz", t=t, pos=x)
    a, ra = file_trajectory(csv, 0.02, Box(1.0))
    b, rb = file_trajectory(tmp_path / "track.npz", 0.02, Box(1.0))
    assert np.array_equal(a.position, b.position) and ra.jumps == rb.jumps == 1
    assert ra.gaps == 2 and ra.longest_gap_s == pytest.approx(11 / 30)   # the jump, the frames
    assert a.speed.max() < 0.5                                            # the reflection is gone
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join(csv.read_text().splitlines()[1:]))
    assert np.array_equal(read_tracking(plain)[1], read_tracking(csv)[1])
    np.savez(tmp_path / "bad.npz", pos=x)
    with pytest.raises(ValueError, match="needs arrays 't'"):
        read_tracking(tmp_path / "bad.npz")


@pytest.mark.slow
def test_cli_tracking_file_reaches_the_run_with_its_report(net, tmp_path):
    """``--trajectory FILE.csv`` is cleaned, resampled to --dt and reported in metrics.json."""
    from neurodyn.cli import main
    from neurodyn.io import save_model

    save_model(net, tmp_path / "m" / "model.pt")
    t, x = _tracking()
    np.savez(tmp_path / "walk.npz", t=t, pos=x)
    out = tmp_path / "run"
    assert main(["grid-cells", "--model", str(tmp_path / "m"), "--out", str(out), "--trajectory",
                 str(tmp_path / "walk.npz"), "--dt", "0.02", "--cells", "4",
                 "--shuffles", "0", "--cue-strength", "0.5", "--cue-at", "0.5,0.5",
                 "--cue-walls"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tracking"]["jumps"] == 1 and metrics["tracking"]["dt"] == 0.02
    assert metrics["final_error_m"] < 0.01
    config = json.loads((out / "config.json").read_text())["config"]
    assert config["boundary_cue"] == [0.5, 0.1] and config["landmark_cue"] == [0.5, 0.5, 0.5, 0.1]


def test_rectangular_arena_wall_cue():
    """Tanni's arena (3.5 x 2.5 m in a 3.5 m box): near y = 2.5 the cue is on only when the
    arena is given (the square box's wall is 1 m further); near x = 0 in both."""
    from neurodyn.spatial.positions import load_positions

    pos = np.array([[1.7, 2.47], [1.7, 1.2], [0.02, 1.2], [1.7, 1.2]])
    traj = load_positions(pos, 0.02, Box(3.5))
    on = cue_gain(traj, (1.0, 0.05), None, (3.5, 2.5))
    box = cue_gain(traj, (1.0, 0.05), None)
    assert on.tolist() == [1.0, 0.0, 1.0, 0.0] and box.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert _cue_pieces(on, 0, 3) == [(0, 1, True), (1, 2, False), (2, 3, True)]
    assert _cue_pieces(None, 4, 9) == [(4, 9, False)]


def test_noise_for_a_stated_diffusion(net):
    """sigma_m gives every module the stated D (closed form: D grows like sigma^2 s^2), and a
    bad target is refused."""
    sig = calibration.noise_for_diffusion(net, SPACINGS, 2e-4)
    assert np.allclose(calibration.module_diffusion(net, SPACINGS, sig), 2e-4, rtol=1e-12)
    assert np.allclose(np.array(sig) * SPACINGS, sig[0] * SPACINGS[0], rtol=1e-12)
    one = calibration.module_diffusion(net, SPACINGS, sig[0])
    assert one[2] / one[0] == pytest.approx((SPACINGS[2] / SPACINGS[0]) ** 2)
    with pytest.raises(ValueError, match="diffusion=0"):
        calibration.noise_for_diffusion(net, SPACINGS, 0)


def test_per_module_noise_reaches_each_module(net):
    """One sigma per module: a noiseless module integrates as before, a noisy one drifts; a list
    of the wrong length is refused."""
    from neurodyn.spatial.agent import generate_trajectory

    traj = generate_trajectory(4.0, 0.02, Box(1.0), seed=3)
    res = run_grid_cells(net, traj, modules=[0.5, 0.7], cells=4, method="euler",
                         noise=[0.0, 0.3], shuffles=0, progress=False)
    quiet, noisy = (float(np.sqrt(np.mean(m.error ** 2))) for m in res.modules)
    assert quiet < 2e-3 < noisy and res.config["noise"] == [0.0, 0.3]
    assert res.joint is not None and res.metrics["joint"]["median_error_m"] < 0.05
    with pytest.raises(ValueError, match="one sigma per module"):
        run_grid_cells(net, traj, modules=[0.5, 0.7], method="euler", noise=[0.1])


def _walk(n: int = 1500, dt: float = 0.02):
    t = np.arange(n) * dt
    return np.c_[1.75 + 1.2 * np.sin(0.11 * t), 1.25 + 0.9 * np.sin(0.07 * t + 1.0)]


def test_joint_decoding_without_the_start_and_its_controls():
    """Noisy phases of three modules over Tanni's arena decode within a few cm with no start
    position; a burst of 0.2 s of phases from a far position moves the global estimate but not
    the track; decoding with the wrong spacings fails (the control)."""
    rng = np.random.default_rng(0)
    x = _walk()
    ph = np.stack([position_to_phase(x, s) for s in SPACINGS], axis=1)
    ph = ph + rng.normal(0.0, 0.1, ph.shape)
    res = joint.joint_decode(ph, SPACINGS, (3.5, 2.5), 0.02)
    err = np.linalg.norm(res.position - x, axis=1)
    assert np.percentile(err, 95) < 0.03 and res.relocks == 0
    burst = ph.copy()
    far = x[700:710] + np.array([1.3, 0.8])
    burst[700:710] = np.stack([position_to_phase(far, s) for s in SPACINGS], axis=1)
    held = joint.joint_decode(burst, SPACINGS, (3.5, 2.5), 0.02)
    assert np.linalg.norm(held.position[700:710] - x[700:710], axis=1).max() < 0.2
    assert held.relocks == 0
    glob = joint.joint_decode(burst[700:710], SPACINGS, (3.5, 2.5), 0.02, relock=0.02)
    assert np.linalg.norm(glob.position - x[700:710], axis=1).min() > 0.5
    wrong = joint.joint_decode(ph, (0.56, 0.4, 0.784), (3.5, 2.5), 0.02)  # modules swapped
    assert np.median(np.linalg.norm(wrong.position - x, axis=1)) > 0.5
