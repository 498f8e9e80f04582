"""The drift/cue and grid-module demos run at their --quick size and describe their figures."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["drift_and_cues", "grid_modules"])
def test_quick_demo_writes_its_section(name, tmp_path):
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
    else:
        assert metrics["joint"]["network"][0]["median_error_m"] < 0.02
        assert metrics["maps"]["square_control"]["fraction_grid"] < 0.5
