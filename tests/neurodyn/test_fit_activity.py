"""SEAL from recorded activity: cells, relaxation rates, the verdict and its controls, the
commands; the acceptance numbers on the real Sargolini trajectory are the slow test at the end
(and bench/bench_fit_activity.py)."""

import json

import numpy as np
import pytest

from neurodyn.cli import main
from neurodyn.datasets import (
    identity_shuffled,
    rat_trajectory,
    ring_activity,
    time_shifted,
    torus_activity,
)
from neurodyn.datasets.ground_truth import _ou
from neurodyn.inference import (
    fit_activity,
    mode_amplitudes,
    place_ring_cells,
    relaxation_rates,
    wrapped,
)
from neurodyn.inference.relaxation import _general_amplitudes


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


def test_verdict_on_an_attractor_and_its_destroyed_controls(small_ring):
    d = small_ring
    fit = fit_activity(d.counts, d.dt, "ring", d.heading, topology=False, folds=3)
    assert fit.attractor and fit.cv_error < np.radians(15)
    assert fit.rates.fraction > 0.8
    assert _aligned_error(fit.cells.preferred, d.truth.preferred) < 0.05
    shifted = fit_activity(time_shifted(d.counts, seed=1), d.dt, "ring", d.heading,
                           topology=False, folds=3)
    assert not shifted.attractor and {"decoding", "fluctuations"} <= set(shifted.failed)
    shuffled = fit_activity(identity_shuffled(d.counts, seed=1), d.dt, "ring", d.heading,
                            topology=False, folds=3)
    assert not shuffled.attractor and "decoding" in shuffled.failed


def test_feed_forward_tuning_is_told_apart_by_its_fluctuations():
    ff = ring_activity(cells=60, recorded=40, seed=0, fluctuation=0.08, recurrent=False,
                       trajectory=rat_trajectory(dt=0.02, duration=150.0, synthetic=True))
    fit = fit_activity(ff.counts, ff.dt, "ring", ff.heading, topology=False, folds=3)
    assert fit.tests["decoding"]["passed"]  # the same tuning curves decode as well
    assert fit.failed == ["fluctuations"] and fit.rates.fraction < 0.5


def test_commands_refuse_bad_input_and_write_no_model_without_an_attractor(tmp_path,
                                                                          small_ring, capsys):
    d = small_ring
    bad = tmp_path / "bad.npz"
    np.savez(bad, counts=d.counts, dt=-1.0)
    assert main(["fit-activity", "ring", "--data", str(bad), "--out", str(tmp_path / "a")]) == 2
    assert "--data" in capsys.readouterr().err and not (tmp_path / "a").exists()
    shifted = tmp_path / "shifted.npz"
    np.savez(shifted, counts=time_shifted(d.counts, seed=2), dt=d.dt, heading=d.heading)
    out = tmp_path / "b"
    assert main(["fit-activity", "ring", "--data", str(shifted), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no attractor" in err and "decoding" in err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["attractor"] is False and not (out / "model.pt").exists()


@pytest.mark.slow
def test_acceptance_on_the_sargolini_trajectory(tmp_path):
    """71 of 100 cells on the real 600 s trajectory (skipped without ratinabox): angles, held-out
    decoding, D in its interval, the ring without the heading; the command's model decodes a
    second session of the same cells."""
    tr = rat_trajectory("sargolini", dt=0.02)
    if not tr.real:
        pytest.skip("ratinabox is not installed")
    d = ring_activity(trajectory=tr, seed=0)
    fit = fit_activity(d.counts, d.dt, "ring", d.heading)
    assert fit.attractor and fit.betti == (1, 1)
    assert _aligned_error(fit.cells.preferred, d.truth.preferred) < 0.05
    assert np.degrees(fit.cv_error) < 10
    assert fit.diffusion.contains(d.truth.diffusion)
    true_rates = np.array(d.truth.mode_rates)
    assert np.all((fit.rates.low[:3] < true_rates) & (true_rates < fit.rates.high[:3]))
    nocov = fit_activity(d.counts, d.dt, "ring", None)
    best = min(_aligned_error(s * nocov.coordinate, d.heading) for s in (1, -1))
    assert nocov.attractor and np.degrees(best) < 15
    data = tmp_path / "ring.npz"
    d.save(data)
    assert main(["fit-activity", "ring", "--data", str(data), "--out", str(tmp_path / "m")]) == 0
    metrics = json.loads((tmp_path / "m" / "metrics.json").read_text())
    assert metrics["energy"]["resting_profile_correlation"] > 0.99
    again = ring_activity(trajectory=tr, seed=0, fluctuation=0.05)  # same cells, other draws
    again.save(tmp_path / "again.npz")
    assert main(["decode", "--model", str(tmp_path / "m"), "--data", str(tmp_path / "again.npz"),
                 "--out", str(tmp_path / "dec")]) == 0
    decoded = np.load(tmp_path / "dec" / "decoded.npy")
    assert np.degrees(np.median(np.abs(wrapped(decoded - again.heading)))) < 10


@pytest.mark.slow
def test_demo_quick(tmp_path):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("fit_activity_demo",
                                                  root / "demos" / "fit_activity.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    m = demo.main(["--quick", "--out", str(tmp_path / "demo")])
    section = json.loads((tmp_path / "demo" / "section.json").read_text())
    assert all((tmp_path / "demo" / f).exists() for f in section["figures"])
    verdicts = m["verdicts"]
    assert verdicts["data"]["attractor"] and verdicts["no covariate"]["attractor"]
    assert not any(verdicts[n]["attractor"] for n in ("time-shifted", "identity-shuffled",
                                                       "feed-forward"))


@pytest.mark.slow
def test_torus_on_the_sargolini_trajectory():
    """One grid module, 71 of 100 cells, 600 s (skipped without ratinabox): the torus's Betti
    numbers from the activity alone, phases and held-out decoding; time-shifted cells have no
    torus."""
    from neurodyn.inference.coordinate import torus_betti

    tr = rat_trajectory("sargolini", dt=0.02)
    if not tr.real:
        pytest.skip("ratinabox is not installed")
    d = torus_activity(trajectory=tr, seed=1)
    fit = fit_activity(d.counts, d.dt, "torus", d.position, seed=1)
    assert fit.betti == (1, 2, 1) and fit.attractor
    assert fit.cv_error < 0.03
    e = wrapped(fit.cells.preferred - d.truth.preferred)
    e = wrapped(e - np.angle(np.mean(np.exp(1j * e), axis=0)))
    assert np.median(np.hypot(e[:, 0], e[:, 1])) < 0.1
    assert torus_betti(time_shifted(d.counts, seed=9), d.dt, seed=1)["betti"] != (1, 2, 1)


def test_torus_bars_counted_above_their_widest_gap_and_the_null():
    from neurodyn.analysis.topology import Homology
    from neurodyn.inference.coordinate import _betti_above

    def bars(*life):
        return np.array([[0.0, v] for v in life]).reshape(-1, 2)

    torus = Homology((bars(np.inf, 0.38, 0.37), bars(0.60, 0.46, 0.27, 0.24, 0.05),
                      bars(0.49, 0.15, 0.04)), 2.5, 0.1, np.arange(3), 300)
    floor = [0.8, 0.36, 0.11]  # the longest bars of the time-shifted nulls
    assert _betti_above(torus, floor) == (1, 2, 1)  # the third, shorter loop is not counted
    # control: the same bars against a null as long as the torus's loops count nothing
    assert _betti_above(torus, [0.8, 0.61, 0.5]) == (1, 0, 0)
