"""SEAL from recorded activity: cells, relaxation rates, the verdict's rule and tests with their
controls, the commands, their inputs and refusals. The real recording is
tests/neurodyn/test_real_recording.py; the verdict over many seeds of independent generators is
bench/bench_verdict.py (and its slow test)."""

import json

import numpy as np
import pytest

from neurodyn.cli import main
from neurodyn.datasets import rat_trajectory, ring_activity, time_shifted
from neurodyn.datasets.ground_truth import _ou
from neurodyn.inference import fit_activity, place_ring_cells, relaxation_rates
from neurodyn.inference.decode import wrapped
from neurodyn.inference.relaxation import _general_amplitudes, mode_amplitudes
from neurodyn.inference.verdict.rule import Evidence, combine
from neurodyn.inference.verdict.topology import activity_topology, read_betti


@pytest.fixture(scope="module")
def small_ring():
    tr = rat_trajectory(dt=0.02, duration=150.0, synthetic=True, seed=0)
    return ring_activity(cells=60, recorded=40, trajectory=tr, seed=0, fluctuation=0.08)


def _aligned_error(est, true):
    """Median angle error after the best global rotation."""
    d = wrapped(est - true)
    return float(np.median(np.abs(wrapped(d - np.angle(np.mean(np.exp(1j * d)))))))


def test_cells_placed_with_missing_bins_and_uneven_angles(small_ring):
    d = small_ring
    counts = d.counts.astype(float)
    counts[: counts.shape[0] // 2, ::3] = np.nan  # a third of the cells seen half the time
    cells = place_ring_cells(counts, d.heading, d.dt)
    assert _aligned_error(cells.preferred, d.truth.preferred) < 0.05
    assert np.corrcoef(cells.gain, d.truth.gain)[0, 1] > 0.95
    # each cell's own curve follows its true tuning to a few percent of its gain
    t = d.truth
    true = t.baseline + t.gain * t.profile(cells.centres[:, None] - t.preferred)  # (bins, cells)
    own = cells.own_rates(cells.centres)
    assert np.median(np.abs(own - true) / t.gain) < 0.05
    # control: placing the cells on a heading unrelated to the activity finds nothing
    wrong = place_ring_cells(counts, np.roll(d.heading, d.heading.size // 2), d.dt)
    assert _aligned_error(wrong.preferred, d.truth.preferred) > 0.5


def test_relaxation_rate_of_an_ou_amplitude_under_white_noise():
    rng = np.random.default_rng(0)
    a = _ou(rng, 30000, 2, 8.0, 0.06, 0.02) + rng.normal(0, 0.15, (30000, 2))
    white = rng.normal(0, 0.15, (30000, 1))
    amps = np.hstack([a, white])
    r = relaxation_rates(amps, np.zeros((30000, 2)), np.ones((30000, 2)), np.ones(2), 0.02,
                         ["a", "b", "w"], [0, 1, 2])
    assert np.all(np.abs(r.rate[:2] / 8.0 - 1) < 0.15)
    assert np.all((r.low[:2] < 8.0) & (8.0 < r.high[:2]))
    assert r.significant.tolist() == [True, True, False]  # white noise relaxes at no rate


@pytest.mark.parametrize("torus", [False, True])
def test_rotated_mode_amplitudes_equal_the_per_bin_solve(torus):
    rng = np.random.default_rng(3)
    shape = (25, 2) if torus else (25,)
    theta = rng.uniform(0, 2 * np.pi, shape)
    psi = rng.uniform(0, 2 * np.pi, (300,) + shape[1:])
    phi = theta[None] - psi[:, None]
    e = rng.normal(size=(300, 25))
    e[::4, 3] = np.nan  # some bins miss a cell: those take the per-bin path
    w = rng.uniform(0.5, 2.0, 25)
    amps, proj, _, _ = mode_amplitudes(e, phi, w, modes=3)
    ref, ref_proj = _general_amplitudes(e, phi, w, 3)
    assert np.allclose(amps, ref, atol=1e-10) and np.allclose(proj, ref_proj, atol=1e-10)
    # control: angles that are not theta_i - psi_t all take the per-bin path, still exact
    bent = phi + rng.normal(0, 0.1, phi.shape)
    amps2, _, _, _ = mode_amplitudes(e, bent, w, modes=3)
    assert np.allclose(amps2, _general_amplitudes(e, bent, w, 3)[0], atol=1e-10)
    assert not np.allclose(amps2, amps, atol=1e-3)


def _ev(name, role, status):
    return Evidence(name, role, status, 0.0, 0.0, power=status != "inconclusive",
                    veto=name.startswith("sleep"))


@pytest.mark.parametrize("tests, attractor", [
    ([("tuning", "gate", "fail"), ("drift", "specific", "pass")], False),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "fail"),
      ("drift", "specific", "pass")], False),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "pass"),
      ("drift", "specific", "fail"), ("fluctuations", "specific", "inconclusive")], False),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "pass"),
      ("drift", "specific", "fail"), ("fluctuations", "specific", "pass")], True),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "pass"),
      ("drift", "specific", "pass"), ("sleep co-firing", "specific", "fail")], "inconclusive"),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "inconclusive"),
      ("drift", "specific", "pass")], "inconclusive"),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "pass"),
      ("fluctuations", "specific", "inconclusive")], "inconclusive"),
    ([("tuning", "gate", "pass"), ("topology", "necessary", "pass"),
      ("sleep co-firing", "specific", "pass"), ("sleep continuity", "reported", "fail")], True),
])
def test_the_verdict_rule(tests, attractor):
    v = combine([_ev(*t) for t in tests])
    assert v.attractor == attractor
    named = [n for n, _, s in tests if s in ("pass", "fail") and n != "sleep continuity"]
    assert any(n in v.reason for n in named) or attractor == "inconclusive"


def test_a_hexagonal_torus_is_read_where_its_void_is_born():
    b = [np.zeros((0, 2)), np.array([[.5, 1.3], [.55, 1.29], [.6, 1.05], [.6, 0.7]]),
         np.array([[1.1, 1.5], [1.2, 1.25]])]
    assert read_betti(b, [0.1, 0.1, 0.1], 1.5, 2) == ((1, 2, 1), 1.1)
    # control: by lifetimes alone (no void counted) the third loop would be a third class
    assert read_betti(b, [0.1, 0.1, 0.35], 1.5, 2)[0] == (1, 3, 0)


def test_topology_sees_the_ring_and_not_its_time_shifted_control(small_ring):
    d = small_ring
    ring = activity_topology(d.counts, d.dt, "ring", seed=0)
    assert ring.status == "pass" and ring.statistic == [1, 1]
    shifted = activity_topology(time_shifted(d.counts, seed=3), d.dt, "ring", seed=0)
    assert shifted.statistic != [1, 1] and shifted.status != "pass"
    gap = activity_topology(d.counts, d.dt, "ring", gap=np.radians(120), seed=0)
    assert gap.status == "pass"  # a gap leaves the test without power only where it fails


def test_verdict_on_an_attractor_and_its_destroyed_controls(small_ring):
    d = small_ring
    fit = fit_activity(d.counts, d.dt, "ring", d.heading, topology=False, folds=3)
    assert fit.tuned and fit.cv_error < np.radians(15)
    assert fit.tests["fluctuations"].status == "pass" and fit.attractor is True
    assert _aligned_error(fit.cells.preferred, d.truth.preferred) < 0.05
    assert 0 <= fit.rates.fraction <= 1
    assert len(repr(fit)) < 200 and "\n" not in repr(fit)
    shifted = fit_activity(time_shifted(d.counts, seed=1), d.dt, "ring", d.heading,
                           topology=False, folds=3)
    assert not shifted.tuned and shifted.attractor is False and "tuning" in shifted.failed


def test_feed_forward_tuning_is_told_apart():
    ff = ring_activity(cells=60, recorded=40, seed=0, fluctuation=0.08, recurrent=False,
                       trajectory=rat_trajectory(dt=0.02, duration=150.0, synthetic=True))
    fit = fit_activity(ff.counts, ff.dt, "ring", ff.heading, topology=False, folds=3)
    assert fit.tuned  # the same tuning curves decode as well
    assert fit.attractor is False and "drift" in fit.failed  # it follows the heading exactly
    assert fit.tests["fluctuations"].status != "pass"  # its cells fluctuate on their own


def _refused(tmp_path, capsys, argv, words):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "keep.txt").write_text("mine")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir())
    assert main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir()) == before


def test_a_new_users_first_mistakes_are_refused_before_out(tmp_path, small_ring, capsys):
    d = small_ring
    raw = tmp_path / "raw.npy"
    np.save(raw, d.counts)
    _refused(tmp_path, capsys, ["fit-activity", "ring", "--data", str(raw)],
             ["one array", "counts (T, cells)", "dt"])
    cases = {
        "ms": (dict(counts=d.counts, dt=20.0, heading=d.heading), ["dt=20", "milliseconds"]),
        "deg": (dict(counts=d.counts, dt=d.dt, heading=np.degrees(d.heading)),
                ["heading", "radians"]),
        "inf": (dict(counts=np.where(np.arange(d.counts.shape[0])[:, None] == 5, np.inf,
                                     d.counts.astype(float)), dt=d.dt), ["finite"]),
        "neg": (dict(counts=d.counts.astype(float) - 1, dt=d.dt), [">= 0"]),
        "zero": (dict(counts=np.zeros_like(d.counts), dt=d.dt), ["cells fired"]),
        "overflow": (dict(counts=np.full((200, 4), 2**62, dtype=np.int64), dt=d.dt),
                     ["not counts"]),
    }
    for name, (arrays, words) in cases.items():
        f = tmp_path / f"{name}.npz"
        np.savez(f, **arrays)
        _refused(tmp_path, capsys, ["fit-activity", "ring", "--data", str(f)], words)
    epochs = tmp_path / "epochs.npz"
    np.savez(epochs, wake_counts=d.counts, wake_heading=d.heading, dt=d.dt)
    _refused(tmp_path, capsys, ["fit-activity", "ring", "--data", str(epochs)],
             ["--epoch", "wake"])


def test_exit_status_says_whether_a_model_was_written(tmp_path, small_ring, capsys):
    d = small_ring
    data = tmp_path / "ring.npz"
    np.savez(data, counts=d.counts, dt=d.dt, heading=d.heading)
    out = tmp_path / "m"
    assert main(["fit-activity", "ring", "--data", str(data), "--out", str(out),
                 "--no-topology", "--hold-out", "0.2"]) == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["tuned"] and m["model"] == "model.pt" and (out / "model.pt").exists()
    assert m["held_out"]["median_error_deg"] < 20
    assert {"verdict.png", "tuning.png", "decoded.png", "embedding.png"} <= {
        p.name for p in out.iterdir()}
    shifted = tmp_path / "shifted.npz"
    np.savez(shifted, counts=time_shifted(d.counts, seed=2), dt=d.dt, heading=d.heading)
    out = tmp_path / "s"
    assert main(["fit-activity", "ring", "--data", str(shifted), "--out", str(out),
                 "--no-topology"]) == 1
    assert "no model" in capsys.readouterr().err
    m = json.loads((out / "metrics.json").read_text())
    assert m["tuned"] is False and m["attractor"] is False and m["model"] is None
    assert not (out / "model.pt").exists()


def test_require_attractor_writes_no_model_unless_the_verdict_is_true(tmp_path, capsys):
    ff = ring_activity(cells=60, recorded=40, seed=0, fluctuation=0.08, recurrent=False,
                       trajectory=rat_trajectory(dt=0.02, duration=150.0, synthetic=True))
    data = tmp_path / "ff.npz"
    np.savez(data, counts=ff.counts, dt=ff.dt, heading=ff.heading)
    out = tmp_path / "ff"
    assert main(["fit-activity", "ring", "--data", str(data), "--out", str(out),
                 "--no-topology", "--require-attractor"]) == 1
    assert "--require-attractor" in capsys.readouterr().err
    assert not (out / "model.pt").exists()
    assert main(["fit-activity", "ring", "--data", str(data), "--out", str(tmp_path / "w"),
                 "--no-topology"]) == 0  # without it the tuned cells' model is written
    assert json.loads((tmp_path / "w" / "metrics.json").read_text())["attractor"] is False


def test_spike_times_with_a_tracking_series_are_binned_by_the_library(tmp_path, small_ring):
    from neurodyn.inference.recordings import read_activity

    d = small_ring
    rng = np.random.default_rng(0)
    t_bin, cell = np.nonzero(d.counts)
    reps = d.counts[t_bin, cell].astype(int)
    times = np.repeat((t_bin + rng.uniform(0, 1, t_bin.size)) * d.dt, reps)
    cells = np.repeat(cell, reps)
    track_t = np.arange(d.counts.shape[0]) * d.dt + d.dt / 2
    f = tmp_path / "spikes.npz"
    np.savez(f, spike_times=times, spike_cells=cells, tracking_time=track_t,
             heading=d.heading, start=0.0, stop=d.counts.shape[0] * d.dt)
    r = read_activity(f, bin=d.dt)
    assert r["counts"].shape == d.counts.shape and np.array_equal(r["counts"], d.counts)
    assert np.max(np.abs(wrapped(r["heading"] - d.heading))) < 1e-9
    with pytest.raises(Exception, match="--bin"):
        read_activity(f)


def test_nwb_units_with_a_compass_direction_in_degrees(tmp_path, small_ring):
    pynwb = pytest.importorskip("pynwb")
    from datetime import datetime, timezone

    from neurodyn.inference.recordings import read_activity

    d = small_ring
    nwb = pynwb.NWBFile("hd", "test", datetime(2026, 1, 1, tzinfo=timezone.utc))
    t = np.arange(d.counts.shape[0]) * d.dt
    module = nwb.create_processing_module("behavior", "tracking")
    compass = pynwb.behavior.CompassDirection()
    compass.create_spatial_series("heading", np.degrees(d.heading), reference_frame="room",
                                  unit="degrees", timestamps=t)
    module.add(compass)
    for i in range(d.counts.shape[1]):
        nwb.add_unit(spike_times=np.repeat(t + d.dt / 2, d.counts[:, i].astype(int)))
    path = tmp_path / "hd.nwb"
    with pynwb.NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    r = read_activity(path)
    assert r["dt"] == pytest.approx(d.dt)
    assert np.array_equal(r["counts"], d.counts.astype(float))
    centres = np.interp(t + d.dt / 2, t, np.unwrap(d.heading))  # the bins' centres
    assert np.max(np.abs(wrapped(r["heading"] - centres))) < 1e-6  # degrees read as such


def test_pynapple_objects_are_taken_as_they_are(small_ring):
    nap = pytest.importorskip("pynapple")
    from neurodyn.inference.recordings import from_pynapple

    d = small_ring
    t = np.arange(d.counts.shape[0]) * d.dt
    units = nap.TsGroup({i: nap.Ts(np.repeat(t + d.dt / 2, d.counts[:, i].astype(int)))
                         for i in range(d.counts.shape[1])})
    heading = nap.Tsd(t=t + d.dt / 2, d=d.heading)
    half = nap.IntervalSet(0.0, t[-1] / 2)
    r = from_pynapple(units, heading, nap.IntervalSet(0.0, t[-1] + d.dt), bin=d.dt)
    assert np.array_equal(r["counts"][:-1], d.counts[:-1].astype(float))
    assert np.max(np.abs(wrapped(r["heading"] - d.heading))) < 1e-6
    cut = from_pynapple(units, heading, half, bin=d.dt)
    assert cut["counts"].shape[0] == pytest.approx(d.counts.shape[0] / 2, abs=2)
    with pytest.raises(Exception, match="TsGroup"):
        from_pynapple(d.counts, heading)


def test_nan_bins_keep_every_fraction_in_range(small_ring):
    d = small_ring
    rng = np.random.default_rng(1)
    x = d.counts.astype(float)
    x[rng.random(x.shape[0]) < 0.3] = np.nan  # 30% of the bins not observed
    fit = fit_activity(x, d.dt, "ring", d.heading, topology=False, folds=3)
    assert fit.tuned and 0 <= fit.rates.fraction <= 1
    full = fit_activity(d.counts, d.dt, "ring", d.heading, topology=False, folds=3)
    assert fit.attractor == full.attractor


def test_decode_takes_a_recording_without_its_covariate(tmp_path, small_ring):
    d = small_ring
    data = tmp_path / "ring.npz"
    np.savez(data, counts=d.counts, dt=d.dt, heading=d.heading)
    assert main(["fit-activity", "ring", "--data", str(data), "--out", str(tmp_path / "m"),
                 "--no-topology"]) == 0
    sleep = tmp_path / "sleep.npz"
    np.savez(sleep, counts=d.counts[:2000], dt=d.dt)
    assert main(["decode", "--model", str(tmp_path / "m"), "--data", str(sleep),
                 "--out", str(tmp_path / "dec")]) == 0
    decoded = np.load(tmp_path / "dec" / "decoded.npy")
    assert decoded.shape == (2000,) and (tmp_path / "dec" / "decoded.png").exists()
    err = np.degrees(np.median(np.abs(wrapped(decoded - d.heading[:2000]))))
    assert err < 20  # the decoder had no heading and still finds it


def test_cells_with_no_lattice_are_not_tuned_to_a_torus(tmp_path, capsys):
    rng = np.random.default_rng(0)
    pos = np.cumsum(rng.normal(0, 0.01, (6000, 2)), 0) % 1.0
    counts = rng.poisson(0.05, (6000, 12))  # no place, no grid: nothing hexagonal
    data = tmp_path / "flat.npz"
    np.savez(data, counts=counts, dt=0.02, position=pos)
    out = tmp_path / "t"
    assert main(["fit-activity", "torus", "--data", str(data), "--out", str(out),
                 "--no-topology"]) == 1
    assert "no model" in capsys.readouterr().err
    m = json.loads((out / "metrics.json").read_text())
    assert m["tuned"] is False and m["attractor"] is False and m["failed"] == ["tuning"]


def test_rate_maps_without_a_hexagonal_lattice_give_an_untuned_fit(monkeypatch):
    from neurodyn.inference import torus

    def no_lattice(*args, **kwargs):
        raise torus.NoLattice("position, counts: no hexagonal autocorrelogram found")

    monkeypatch.setattr(torus, "estimate_lattice", no_lattice)
    rng = np.random.default_rng(0)
    fit = fit_activity(rng.poisson(0.1, (500, 6)), 0.02, "torus",
                       rng.uniform(0, 1, (500, 2)), topology=False)
    assert fit.tuned is False and fit.attractor is False and fit.failed == ["tuning"]
    assert "hexagonal" in fit.tests["tuning"].reason and "tuning" in fit.metrics()["failed"]


def test_unobserved_bins_carry_no_weight_in_the_cloud():
    """A NaN bin is not a zero: smoothing constant rates across 30% missing bins gives the
    constant back (taking NaN as 0 pulled the rates near every gap towards zero, and one
    seed of the NaN case read the ring's topology as (2, 1)); a window with nothing
    observed is NaN."""
    from neurodyn.inference.verdict.topology import _smoothed_rows

    x = np.full((2000, 3), 5.0)
    x[np.random.default_rng(0).random(2000) < 0.3] = np.nan
    x[1000:1040] = np.nan  # a gap longer than the window
    y = _smoothed_rows(x, 3.0, np.arange(2000))
    finite = np.isfinite(y).all(axis=1)
    assert np.allclose(y[finite], 5.0, rtol=1e-12)
    assert not finite[1020] and finite[:990].all()
