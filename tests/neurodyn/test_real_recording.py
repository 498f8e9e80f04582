"""SEAL on the real recording beside the repository (``../shared/data/adn_hd_wake_sws.npz``:
19 head-direction cells of the mouse anterodorsal thalamus, Peyrache et al. 2015; skipped
where it is not). The acceptance numbers, side by side with pynapple's decoder, are
bench/bench_real_recording.py's."""

import json

import numpy as np
import pytest

from neurodyn.cli import main
from neurodyn.inference.verdict.sleep import cofiring, rolled


@pytest.fixture(scope="module")
def adn(adn_path):
    d = np.load(adn_path)
    return {k: d[k] for k in d.files}


def test_a_model_from_the_wake_session_and_its_held_out_quarter(adn_path, tmp_path):
    out = tmp_path / "adn"
    assert main(["fit-activity", "ring", "--data", str(adn_path), "--epoch", "wake",
                 "--hold-out", "0.25", "--out", str(out)]) == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["tuned"] and (out / "model.pt").exists() and (out / "cells.npz").exists()
    # pynapple's decode_bayes reads 21.6 deg on these windows (bench_real_recording.py)
    assert m["held_out"]["median_error_deg"] < 21.6
    drift = m["tests"]["drift"]
    assert drift["status"] == "pass" and 0 < drift["interval"][0] < drift["interval"][1]
    assert m["attractor"] is not False  # 19 cells: the fluctuation test has no power
    assert m["tests"]["fluctuations"]["status"] == "inconclusive"
    assert m["betti"] == [1, 1]
    assert {"tuning.png", "decoded.png", "embedding.png", "verdict.png"} <= {
        p.name for p in out.iterdir()}


def test_sleep_co_firing_follows_wake_and_its_rolled_control_does_not(adn):
    wake, sws, dt = adn["wake_counts"].astype(float), adn["sws_counts"].astype(float), \
        float(adn["dt"])
    e = cofiring(wake, [sws], dt, rolls=99)
    assert e.status == "pass" and e.statistic > 0.9 and e.p_value <= 0.01
    assert abs(e.details["null_mean"]) < 0.2
    control = cofiring(wake, [rolled(sws, 5, int(10 / dt))], dt, rolls=99, seed=1)
    assert control.status == "fail" and control.statistic < 0.3


@pytest.mark.slow
def test_sleep_makes_the_verdict_and_its_rolled_control_fails(adn_path, adn, tmp_path):
    sws_rolled = tmp_path / "rolled.npz"
    np.savez(sws_rolled, counts=rolled(adn["sws_counts"], 3, 1000), dt=adn["dt"])
    for name, sleep, epoch in (("sws", adn_path, "sws"), ("rolled", sws_rolled, None)):
        out = tmp_path / name
        argv = ["fit-activity", "ring", "--data", str(adn_path), "--epoch", "wake",
                "--hold-out", "0.25", "--sleep", str(sleep), "--out", str(out)]
        assert main(argv + (["--sleep-epoch", epoch] if epoch else [])) == 0
        m = json.loads((out / "metrics.json").read_text())
        statuses = {k: m["tests"][k]["status"] for k in ("sleep co-firing", "sleep manifold")}
        if name == "sws":
            assert m["attractor"] is True and "sleep" in m["reason"]
            assert set(statuses.values()) == {"pass"} and (out / "sleep.png").exists()
        else:
            assert statuses["sleep co-firing"] == "fail" and m["attractor"] is not True


def _demo(name):
    from tests.scripts import load_script

    return load_script("demos", name, f"{name}_demo")


@pytest.mark.slow
def test_real_recording_demo_quick(adn_path, tmp_path):
    m = _demo("real_recording").main(["--quick", "--out", str(tmp_path / "demo")])
    section = json.loads((tmp_path / "demo" / "section.json").read_text())
    assert all((tmp_path / "demo" / f).exists() for f in section["figures"])
    assert m["verdict"]["with SWS"]["attractor"] is True
    assert m["verdict"]["rolled SWS"]["sleep co-firing"]["status"] == "fail"
    assert m["held_out"]["median_error_deg"] < 21.6


@pytest.mark.slow
def test_generated_data_demo_quick(tmp_path):
    m = _demo("fit_activity").main(["--quick", "--out", str(tmp_path / "demo")])
    section = json.loads((tmp_path / "demo" / "section.json").read_text())
    assert all((tmp_path / "demo" / f).exists() for f in section["figures"])
    v = m["verdicts"]
    assert v["data"]["tuned"] and v["data"]["attractor"] is not False
    assert v["time-shifted"]["attractor"] is False and v["identity-shuffled"]["attractor"] is False
    assert v["feed-forward"]["attractor"] is not True
