"""neurodyn sweeps: cells through the sweep engine and the ``neurodyn sweep`` command."""

import json
import math
import subprocess
import sys

import pytest

from _runkit.sweep import run_sweep
from neurodyn.experiments.sweeps import SWEEPS


def test_drift_and_diffusion_cells_measure(tmp_path):
    fixed = {"fit_steps": 10, "runs": 4, "duration": 20.0, "dt": 0.1}
    res = run_sweep(SWEEPS["drift"].cell, {"v": [0.0, 0.3], "n": [32]}, tmp_path / "d",
                    fixed=fixed, workers=0, progress=False)
    still, moving = res.rows
    assert math.isfinite(moving["rms_final"]) and math.isfinite(still["rms_final"])
    assert still["relative_drift"] == "nan"  # no distance travelled (JSON spelling of NaN)
    assert math.isfinite(moving["relative_drift"])
    res = run_sweep(SWEEPS["diffusion"].cell, {"noise": [0.05], "n": [32]}, tmp_path / "n",
                    fixed={**fixed, "dt": 0.05, "duration": 100.0}, workers=0, progress=False)
    assert res.rows[0]["D"] > 0 and res.rows[0]["D_theory"] > 0


@pytest.mark.slow
def test_sweep_command_writes_table_and_resumes(tmp_path):
    args = [sys.executable, "-m", "neurodyn.cli", "sweep", "kappa", "--out", tmp_path,
            "--grid", "kappa=0.5,2", "--grid", "n=32", "--fit-steps", "5", "--workers", "0"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "table.csv").read_text().splitlines()
    assert lines[0].startswith("kappa,n,seed") and len(lines) == 3
    assert (tmp_path / "slowest_normal_rate_vs_kappa.png").exists()
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and json.loads(
        (tmp_path / "timing.json").read_text())["ran"] == 0
    bad = subprocess.run(args[:7] + ["--grid", "speed=1"], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 2 and "AXIS" in bad.stderr
