"""The drift/cue, grid-module and heterogeneity demos run at their --quick size and describe
their figures."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["drift_and_cues", "grid_modules"])
def test_quick_demo_writes_its_section(name, tmp_path):
    """End to end (each demo in its own process, fitting its models); the claims behind their
    numbers have fast checks of their own in test_drift_cues and test_spatial_tools."""
    out = tmp_path / name
    proc = subprocess.run([sys.executable, str(ROOT / "demos" / f"{name}.py"), "--out", str(out),
                           "--quick", "--cache", str(tmp_path / "models")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    section = json.loads((out / "section.json").read_text())
    assert section["figures"] and all((out / f).exists() for f in section["figures"])
    metrics = json.loads((out / "metrics.json").read_text())
    if name == "drift_and_cues":
        assert metrics["anchoring"]["rms_cue_final"] < metrics["anchoring"]["rms_free_final"]
        cell = metrics["diffusion"][0]  # --quick has one accepted cell: family level is 95%
        assert metrics["diffusion_family_level"] == pytest.approx(0.95)
        assert cell["ratio_family_low"] == pytest.approx(cell["ratio_low"])
    else:
        assert metrics["joint"]["network"][0]["median_error_m"] < 0.02
        assert metrics["maps"]["square_control"]["fraction_grid"] < 0.5


def test_heterogeneity_demo_pins_the_bump(tmp_path):
    """In process at --quick size: without disorder nothing drifts and a slow input is
    integrated exactly from every start; with disorder the bumps drift and the slow input is
    followed by a start-dependent amount; the energy never increases at any level."""
    from tests.scripts import load_script

    demo = load_script("demos", "heterogeneity", "heterogeneity_demo")
    m = demo.main(["--quick", "--out", str(tmp_path / "het"), "--cache", ""])
    clean, disordered = m["levels"][0], m["levels"][-1]
    assert clean["sd"] == 0.0 and disordered["sd"] > 0
    assert clean["max_drift_rad"] < 1e-9 and clean["speed_ratio_worst_error"] < 1e-6
    assert disordered["rms_drift_rad"] > 0.05 and disordered["speed_ratio_worst_error"] > 0.1
    assert all(r["energy_non_increasing"] for r in m["levels"])
    section = json.loads((tmp_path / "het" / "section.json").read_text())
    assert section["figures"] and all((tmp_path / "het" / f).exists()
                                      for f in section["figures"])
