"""Every neurodyn demo runs at its --quick size and lands on the results page."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEMOS = "restoration,moving_bump,energy_comparison,connectivity,manifold,grid_cells"


def test_quick_demos_and_results_page(tmp_path):
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "demos/run_all.py"), "--out", str(tmp_path),
                           "--quick", "--only", DEMOS], capture_output=True, text=True,
                          timeout=600, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "run_all.json").read_text())
    assert summary["failed"] == []
    finished = [line for line in proc.stdout.splitlines() if line.startswith("[")]
    assert len(finished) == len(DEMOS.split(",")), proc.stdout  # a line as each demo finishes
    assert all(": ok in " in line for line in finished), finished
    page = (tmp_path / "index.html").read_text()
    for name in DEMOS.split(","):
        section = json.loads((tmp_path / name / "section.json").read_text())
        assert section["figures"], name
        for fig in section["figures"]:
            assert (tmp_path / name / fig).exists(), fig
            assert f"{name}/{fig}" in page, fig
        assert section["title"] in page
    metrics = json.loads((tmp_path / "restoration/metrics.json").read_text())
    assert metrics["ring"]["jacobian"]["n_zero"] == 1
    assert metrics["torus"]["jacobian"]["n_zero"] == 2
    comparison = json.loads((tmp_path / "energy_comparison/metrics.json").read_text())
    assert set(comparison) >= {"learned (SEAL)", "Fourier construction", "classic hand-wired"}


@pytest.mark.slow  # the GIF writer itself is checked in test_visualize; this is the demo end to end
def test_flow_animation_gif(tmp_path):
    from PIL import Image

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "demos/flows_moons.py"), "--out",
                           str(tmp_path), "--quick", "--animate"], capture_output=True, text=True,
                          timeout=600, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with Image.open(tmp_path / "flow.gif") as gif:
        assert gif.n_frames == 41  # one frame per saved time of the 40-step solution


def test_run_all_passes_demos_an_absolute_out(tmp_path, monkeypatch):
    """A relative --out means the caller's directory, though each demo runs in the repository."""
    import subprocess as sp
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "demos"))
    import run_all

    seen = {}

    def fake_run(cmd, **kw):
        seen["out"], seen["cwd"] = cmd[cmd.index("--out") + 1], kw.get("cwd")
        return sp.CompletedProcess(cmd, 0, "", "")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_all.subprocess, "run", fake_run)
    run_all._run("demo", "demo.py", Path("rel"), quick=True)
    assert seen["out"] == str(tmp_path / "rel" / "demo") and seen["cwd"] != tmp_path
