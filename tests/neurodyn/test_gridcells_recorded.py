"""Real rat trajectories for grid-cell runs: jumps, gaps and clipping of tracking; the CLI."""

import doctest
import importlib.util
import json

import numpy as np
import pytest

import neurodyn.spatial.gridcells.recorded as rec
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import save_model
from neurodyn.spatial.agent import Box

HAS_RATINABOX = importlib.util.find_spec("ratinabox") is not None
needs_ratinabox = pytest.mark.skipif(not HAS_RATINABOX, reason="ratinabox (extra 'data')")


def _line(seconds=10.0, rate=50.0, speed=0.05):
    """A straight walk at ``speed`` m/s along x, tracked at ``rate`` Hz."""
    t = np.arange(int(seconds * rate) + 1) / rate
    return t, np.c_[0.2 + speed * t, np.full(t.size, 0.5)]


def test_jumps_dropped_and_gaps_bridged_exactly():
    """On a straight walk, a 3-frame reflection and a 0.5 s dropout leave the resampled path
    exactly on the line; interpolating the raw tracking (the control) does not."""
    t, x = _line()
    truth = x.copy()
    x[100:103] += (0.3, 0.2)                       # a reflection for three frames
    t, x = np.delete(t, range(300, 325)), np.delete(x, range(300, 325), axis=0)
    traj, rep = rec.resample_tracking(t, x, 0.01, Box(1.0))
    assert (rep.jumps, rep.relocks, rep.gaps) == (3, 0, 2)
    assert rep.longest_gap_s == pytest.approx(26 * 0.02)   # samples 299 -> 325
    assert rep.gap_time_s == pytest.approx(26 * 0.02 + 4 * 0.02)
    grid = np.arange(traj.steps) * 0.01
    assert traj.steps == 1001
    assert np.abs(traj.position - np.c_[0.2 + 0.05 * grid, np.full(grid.size, 0.5)]).max() \
        < 1e-12
    raw = np.interp(grid, t, x[:, 0])
    assert np.abs(raw - (0.2 + 0.05 * grid)).max() > 0.2
    assert np.allclose(truth[::2, 0], traj.position[::4, 0])


def test_relock_follows_a_tracker_that_moved_for_good():
    t, x = _line()
    x[200:] += (30.0, 0.0)                         # the tracker moves on and stays
    keep, counts = rec.clean_tracking(t, x, max_speed=2.0, relock=0.99)
    assert counts["relocks"] == 1
    # dropped until the drops reach more than relock after the last kept sample 199
    # (sample 249 is 1 s after it), then followed to the end
    assert counts["jumps"] == 50 and keep[250:].all() and not keep[200:250].any()
    keep, counts = rec.clean_tracking(t, x, max_speed=2.0, relock=100.0)
    assert counts["relocks"] == 0 and not keep[200:].any()


def test_positions_outside_the_walls_are_clipped_and_counted():
    t, x = _line(seconds=2.0)
    x[:, 1] = 0.995                                # along the wall y = 1
    x[10, 1] = 1.02
    x[20, 1] = 1.005
    traj, rep = rec.resample_tracking(t, x, 0.02, Box(1.0))
    assert (rep.jumps, rep.clipped) == (0, 2) and rep.max_clip_m == pytest.approx(0.02)
    assert traj.position[10, 1] == 1.0 and traj.position[20, 1] == 1.0


def test_bad_tracking_is_refused():
    t, x = _line(seconds=1.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        rec.resample_tracking(t[::-1], x, 0.02, Box(1.0))
    with pytest.raises(ValueError, match="longer than the tracking"):
        rec.resample_tracking(t, x, 0.02, Box(1.0), duration=5.0)
    with pytest.raises(ValueError, match="max_speed"):
        rec.clean_tracking(t, x, max_speed=0.0)
    with pytest.raises(ValueError, match="choose one of"):
        rec.recorded_trajectory("hafting")


@needs_ratinabox
def test_real_sessions_tracking_reports():
    """Sargolini: no jump, its 60 missed-frame gaps (the longest 0.36 s); Tanni: tracking jumps
    of up to 6.4 m/s in one frame are dropped, so no resampled step is faster than the filter."""
    traj, rep = rec.recorded_trajectory("sargolini", 0.02)
    assert (traj.steps, traj.box.size, rep.jumps, rep.gaps) == (29983, 1.0, 0, 60)
    assert rep.longest_gap_s == pytest.approx(0.36, abs=1e-6)
    traj, rep = rec.recorded_trajectory("tanni", 0.02, duration=1800.0)
    assert traj.box.size == 3.5 and traj.steps == 90001 and rep.jumps > 100
    assert rep.relocks == 0 and traj.speed.max() <= 2.0 + 1e-9
    raw, _ = rec.resample_tracking(*_tanni_raw(), 0.02, Box(3.5), max_speed=1e3,
                                   duration=1800.0)
    assert raw.speed.max() > 4.0                   # the control: unfiltered, the jumps remain


def _tanni_raw():
    from importlib import resources

    from neurodyn.spatial.positions import ratinabox_arrays

    return ratinabox_arrays(str(resources.files("ratinabox") / "data" / "tanni.npz"))


def _model_dir(path, **fit_options):
    net = fit(FitConfig(geometry="torus", lattice="hex", n=(16, 16), seed=0,
                        **fit_options)).network
    save_model(net, path / "model.pt")
    return path


@pytest.mark.slow
@needs_ratinabox
def test_cli_runs_a_real_session(tmp_path):
    from neurodyn.cli import main

    model_dir = _model_dir(tmp_path)

    out = tmp_path / "sarg"
    code = main(["grid-cells", "--model", str(model_dir), "--out", str(out), "--trajectory",
                 "sargolini", "--duration", "3", "--cells", "4", "--shuffles", "0"])
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tracking"]["source"] == "ratinabox:sargolini"
    assert metrics["tracking"]["samples"] == 151 and metrics["duration_s"] == pytest.approx(3.0)
    assert metrics["max_error_m"] < 0.005
    track = np.load(out / "track.npz")
    traj, _ = rec.recorded_trajectory("sargolini", 0.02, duration=3.0)
    assert np.array_equal(track["position"], traj.position)


def test_cli_without_ratinabox_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    from neurodyn.cli import main

    model_dir = tmp_path / "no-model"                # refused before the model is read

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ratinabox" else real(name, *a))
    code = main(["grid-cells", "--model", str(model_dir), "--out", str(tmp_path / "x"),
                 "--trajectory", "tanni"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "ratinabox" in err and "neurodyn-flows[data]" in err
    assert not (tmp_path / "x").exists()


def test_docstring_examples():
    result = doctest.testmod(rec, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 4
