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


def test_streamed_null_equals_the_null_of_kept_rates(monkeypatch):
    """Binning each segment's rates at the lagged positions gives the shuffled null of the whole
    rate series (to rounding), so a long run keeps no (steps, cells) array."""
    import neurodyn.spatial.gridcells.segments as seg
    from neurodyn.spatial.agent import generate_trajectory
    from neurodyn.spatial.gridcells.segments import _NullAccumulator
    from neurodyn.spatial.gridnull import SMOOTHING_BINS, shuffled_gridness

    tr = generate_trajectory(120.0, 0.02, Box(1.0), seed=0)
    kx = 4 * np.pi / np.sqrt(3) / 0.4 * np.array([[1, 0], [0.5, np.sqrt(3) / 2],
                                                  [-0.5, np.sqrt(3) / 2]])
    grid = np.cos(tr.position @ kx.T).sum(axis=1, keepdims=True)
    rates = np.c_[grid, np.random.default_rng(1).random((tr.steps, 3))]
    ref = shuffled_gridness(tr.position, rates, 0.02, tr.box, 20, shuffles=7, min_shift=10.0,
                            seed=3)
    monkeypatch.setattr(seg, "_CHUNK", 32 * 100)               # 100 samples a chunk
    acc = _NullAccumulator(tr, 20, 4, 7, 10.0, 3)
    for first in range(0, tr.steps, 777):
        acc.add(first, rates[first:first + 777])
    got = acc.result(tr.box, SMOOTHING_BINS)
    assert np.allclose(got.null, ref.null, atol=1e-12, equal_nan=True)
    assert np.allclose(got.scores, ref.scores, atol=1e-12)
    assert got.threshold == pytest.approx(ref.threshold, abs=1e-12)
    assert got.is_grid.tolist() == ref.is_grid.tolist() == [True, False, False, False]


@pytest.mark.slow
def test_checkpointed_run_resumes_bit_identical(tmp_path, monkeypatch):
    import neurodyn.spatial.gridcells.run as gc
    from neurodyn.spatial.agent import generate_trajectory

    net = fit(FitConfig(geometry="torus", lattice="hex", n=(16, 16), steps=2)).network
    tr = generate_trajectory(4.0, 0.02, Box(1.0), seed=2)
    monkeypatch.setattr(gc, "_SEGMENT_BYTES", 16 * 256 * 25)    # 25 samples a segment
    monkeypatch.setattr(gc, "_KEEP_BYTES", 0)                   # the null is streamed
    monkeypatch.setattr(gc, "_fixed_connectivity", lambda net, seed: np.zeros((16, 16)))
    kw = dict(cells=6, shuffles=3, min_shift=1.0, noise=0.05, method="euler",
              boundary_cue=(0.5, 0.1), seed=4)
    whole = gc.run_grid_cells(net, tr, **kw)
    state = tmp_path / "state.pt"
    first = gc.run_grid_cells(net, tr, checkpoint=state, checkpoint_every=1.5, **kw)
    import torch
    assert int(torch.load(state, weights_only=True)["first"]) == 150   # saved at 1.5 s, 3 s
    again = gc.run_grid_cells(net, tr, checkpoint=state, checkpoint_every=1.5, **kw)
    for run in (first, again):
        a, b = run.modules[0], whole.modules[0]
        assert np.array_equal(a.phases, b.phases)
        assert np.array_equal(a.maps.maps, b.maps.maps, equal_nan=True)
        assert np.array_equal(a.classification.null, b.classification.null, equal_nan=True)
        assert run.metrics["nfe"] == whole.metrics["nfe"]
    # another run's checkpoint is refused
    with pytest.raises(ValueError, match=r"another run \(keys \['seed'\]"):
        gc.run_grid_cells(net, tr, checkpoint=state, **{**kw, "seed": 5})
