"""Every neurodyn demo runs at its --quick size and lands on the results page."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tests.scripts import load_script

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
    from tests.project.test_results_page import CHROMIUM, _render

    if CHROMIUM.exists():  # the quick page as a reader's browser shows it: every figure loads
        dom = _render(CHROMIUM, tmp_path / "index.html", tmp_path / "profile")
        shown = sum(len(json.loads((tmp_path / n / "section.json").read_text())["figures"])
                    for n in DEMOS.split(","))
        assert len(dom.images) == shown > 20
        assert dom.body_attrs.get("data-images-loaded") == f"{shown}/{shown}"


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


def _run_all():
    return load_script("demos", "run_all")


def test_run_demo_resolves_a_relative_out_against_the_callers_directory(tmp_path, monkeypatch):
    """A relative --out means the caller's directory, though each demo runs in the repository
    root; the demo's printed output goes to its log, its times are measured."""
    run_all = _run_all()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    (tmp_path / "fake.py").write_text(
        "import os, sys\n"
        "def main(argv):\n"
        "    print('a line', argv[1]); sys.stdout.flush(); os.write(2, b'from C\\n')\n"
        "    if '--quick' in argv: raise SystemExit(3)\n")
    run = run_all.run_demo("demo", "fake.py", Path("rel"), "demo")
    assert run["returncode"] == 0 and run["seconds"] >= 0 and run["cpu_seconds"] >= 0
    log = (tmp_path / "rel" / "demo" / "log.txt").read_text()
    assert log == f"a line {tmp_path / 'rel' / 'demo'}\nfrom C\n"
    assert run_all.run_demo("demo", "fake.py", Path("rel"), "quick")["returncode"] == 3


def test_a_partial_run_rebuilds_its_page_and_names_what_is_missing(tmp_path, capsys):
    """run_all.py --page-only builds the page from any finished demos, whatever their
    metrics hold (nested lists: seal_capacity's), and names the ones that have not finished."""
    run_all = _run_all()
    folder = tmp_path / "seal_capacity"
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps({
        "summary": {"von_mises_fall_per_step": 0.5}, "control": [[1, 2], [3, 4]]}))
    Figure(figsize=(1, 1)).savefig(folder / "capacity.png")
    (tmp_path / "run_all.json").write_text(json.dumps(
        {"quick": True, "chosen": ["seal_capacity", "restoration"]}))
    assert run_all.main(["--out", str(tmp_path), "--page-only"])["missing"] == ["restoration"]
    out = capsys.readouterr().out
    assert "1 sections" in out and "not finished or failed: restoration" in out
    page = (tmp_path / "index.html").read_text()
    assert "SEAL capacity" in page and "seal_capacity/capacity.png" in page
    assert "Not on this page (not finished, failed or not run): restoration." in page
    section = json.loads((folder / "section.json").read_text())
    assert section["metrics"]["von Mises: field-error fall per step"] == 0.5
    assert run_all.missing_demos(tmp_path, ["seal_capacity", "restoration"]) == ["restoration"]


def test_ctrl_c_after_the_third_demo_leaves_a_page_of_three(tmp_path):
    """Interrupted as a terminal's Ctrl-C does (the whole process group), run_all ends its
    workers, exits 130 and leaves the page of the demos that finished."""
    import signal
    import time

    root = Path(__file__).resolve().parents[2]
    demos = "speed_gain,energy_comparison,heterogeneity,generate_activity"  # in run order
    proc = subprocess.Popen([sys.executable, str(root / "demos/run_all.py"), "--out",
                             str(tmp_path), "--quick", "--jobs", "1", "--only", demos],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    lines = []
    while len([x for x in lines if x.startswith("[")]) < 3:
        line = proc.stdout.readline()
        assert line, (lines, proc.stderr.read())
        lines.append(line)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert code == 130 and "interrupted: 3 of 4 demos finished" in err, err
    page = (tmp_path / "index.html").read_text()
    assert page.count('<section id="section-') == 3
    assert "Not on this page (not finished, failed or not run): generate_activity." in page
    time.sleep(0.5)
    assert not subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout
