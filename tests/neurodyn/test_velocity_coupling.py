"""Velocity coupling with speed physics beside the exact transport.

The asymmetric coupling is calibrated by linear response, so its gain at small speed is 1 (and an
uncalibrated kernel's gain is the predicted fraction); above v_max the bump lags, deforms and path
integration reports it as not tracked, while the exact transport tracks every speed.
"""

import json
import math

import pytest
import torch

from neurodyn.analysis.bump_motion import path_integration
from neurodyn.experiments.speed import speed_gain, speed_point
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.network import VELOCITY_COUPLINGS, Transport, velocity_coupling

KAPPA = 2.0


@pytest.fixture(scope="module")
def ring():
    return fit(FitConfig(n=32, steps=20, kappa=KAPPA, seed=0)).network


@pytest.fixture(scope="module")
def asym(ring):
    return velocity_coupling(ring, "asymmetric")


def test_small_speed_gain_is_the_linear_response(ring, asym):
    assert velocity_coupling(ring, "exact").transport.gains.equal(ring.transport.gains)
    assert abs(speed_point(asym, 0.02, duration=20.0).gain - 1) < 2e-3
    # control: the same kernel at 0.4 of the calibrated strength moves the bump at 0.4 v
    weak = velocity_coupling(ring, "exact")
    weak.transport = Transport(ring.geometry, 0.4 * asym.transport.gains)
    assert abs(speed_point(weak, 0.02, duration=20.0).gain - 0.4) < 2e-3


def test_fast_bump_lags_deforms_and_is_not_tracked(ring, asym):
    v = 4 * KAPPA
    fast = speed_point(asym, v, duration=20.0)
    assert fast.gain < 0.9 and not fast.tracked
    assert fast.correlation < 0.98 and fast.distance > 0.2 and fast.lag > 10
    slow = speed_point(asym, 0.1, duration=20.0)
    assert slow.tracked and slow.correlation > 0.999 and abs(slow.lag) < 0.05
    spec = f"constant:{v}"
    bad = path_integration(asym, spec, runs=2, duration=20.0, dt=0.02)
    assert not bad.tracked and bad.drift_final > 0.05 * bad.path_length
    assert bad.path_length == pytest.approx(v * 20.0)
    # the wrapped error cannot show it (at most pi); the unwrapped one does
    assert bad.drift_final > 2 * math.pi
    good = path_integration(ring, spec, runs=2, duration=20.0, dt=0.02)
    assert good.tracked and good.drift_final < 1e-3 * good.path_length
    assert path_integration(asym, "constant:0.1", runs=2, duration=20.0).tracked


def test_v_max_is_bracketed_and_exact_tracks_every_speed(ring, asym):
    res = speed_gain(asym, (0.25, 0.5, 1.0, 2.0, 4.0), duration=20.0)
    assert res.v_max_bounded and 0.5 < res.v_max < 1.0
    at = {p.v: p for p in res.points}
    assert at[res.v_max].tracked and abs(at[res.v_max].gain - 1) <= 0.05
    assert not at[res.first_untracked].tracked
    assert res.first_untracked / res.v_max < 2 ** (1 / 32) * (1 + 1e-9)
    gains = [p.gain for p in res.points]
    assert gains == sorted(gains, reverse=True)  # the gain falls with speed
    exact = speed_gain(velocity_coupling(ring, "exact"), (0.25, 1.0, 4.0, 16.0), duration=20.0)
    assert not exact.v_max_bounded and exact.v_max == 16.0
    assert all(abs(p.gain - 1) < 1e-3 and p.correlation > 0.9999 for p in exact.points)


def test_bad_arguments(ring):
    with pytest.raises(ValueError, match="width"):
        Transport.asymmetric(ring, width=-1.0)
    with pytest.raises(ValueError, match="coupling"):
        velocity_coupling(ring, "symmetric")
    with pytest.raises(ValueError, match="velocities"):
        speed_gain(ring, (1.0, 0.5))
    with pytest.raises(ValueError, match="tolerance"):
        path_integration(ring, "constant:0.1", runs=1, duration=1.0, tolerance=1.5)


def test_cli_velocity_coupling_and_speed_gain(ring, tmp_path, monkeypatch):
    from neurodyn.cli import main
    from neurodyn.cli.experiments import VELOCITY_COUPLINGS as CLI_CHOICES
    from neurodyn.io import save_model

    assert CLI_CHOICES == VELOCITY_COUPLINGS
    model = tmp_path / "ring"
    save_model(ring, model / "model.pt")
    common = ["path-integrate", "--model", str(model), "--velocity", "constant:8", "--runs", "2",
              "--duration", "20", "--dt", "0.02"]
    assert main(common + ["--out", str(tmp_path / "a"), "--velocity-coupling",
                          "asymmetric"]) == 0
    assert main(common + ["--out", str(tmp_path / "e")]) == 0
    a = json.loads((tmp_path / "a/metrics.json").read_text())
    e = json.loads((tmp_path / "e/metrics.json").read_text())
    assert a["velocity_coupling"] == "asymmetric" and a["tracked"] is False
    assert e["velocity_coupling"] == "exact" and e["tracked"] is True
    import neurodyn.network

    built = []
    original = neurodyn.network.velocity_coupling
    monkeypatch.setattr(neurodyn.network, "velocity_coupling",
                        lambda *a, **k: built.append(a[1:]) or original(*a, **k))
    assert main(["speed-gain", "--model", str(model), "--out", str(tmp_path / "s"),
                 "--velocities", "0.5,1,2", "--duration", "20"]) == 0
    assert len(built) == 1  # the driven network is built once, for the check and the run
    s = json.loads((tmp_path / "s/metrics.json").read_text())
    assert s["v_max_bounded"] and 0.5 <= s["v_max"] < 1.0
    assert (tmp_path / "s/speed_gain.png").stat().st_size > 0
    assert main(["speed-gain", "--model", str(model), "--out", str(tmp_path / "b"),
                 "--velocities", "2,1"]) == 2
    assert not (tmp_path / "b").exists()


@pytest.mark.slow
def test_v_max_scales_with_kappa_on_the_ring_and_torus_gain_is_one():
    from neurodyn.experiments.speed import speed_study

    nets = {k: fit(FitConfig(n=128, kappa=k, seed=0)).network for k in (0.5, 2.0, 4.0)}
    st = speed_study(nets, velocities=tuple(0.05 * 2.0**i for i in range(8)), duration=40.0)
    assert all(0.4 < r < 0.48 for r in st.v_max_per_kappa), st.v_max_per_kappa
    torus = fit(FitConfig(geometry="torus", n=(12, 12), steps=20, seed=0)).network
    p = speed_point(velocity_coupling(torus, "asymmetric"), 0.02, duration=20.0)
    assert abs(p.gain - 1) < 5e-3
    assert torch.isfinite(torch.tensor(p.correlation))


def test_quick_speed_demo(tmp_path):
    """demos/speed_gain.py at --quick size, in process: v_max / kappa is the same for both
    kappas and the exact controls track every speed of the grid."""
    from tests.scripts import load_script

    demo = load_script("demos", "speed_gain", "speed_gain_demo")
    m = demo.main(["--quick", "--out", str(tmp_path / "sg"), "--cache", ""])
    low, high = m["v_max_per_kappa"]
    assert low == pytest.approx(high, rel=0.05)
    assert all(c["v_max_bounded"] is False for c in m["controls"])
    assert (tmp_path / "sg" / "speed_gain.png").stat().st_size > 0
