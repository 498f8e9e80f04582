"""``metrics.json`` holds only what the seed determines: two runs of one command with one seed
write byte-identical files; the wall times are in ``timing.json`` (README, "The run contract")."""

from __future__ import annotations

import json

import pytest

from neurodyn.cli import main


def _twice(tmp_path, argv):
    for name in ("a", "b"):
        assert main([*argv, "--out", str(tmp_path / name)]) == 0
    a, b = (tmp_path / name / "metrics.json" for name in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    return json.loads(a.read_text()), json.loads((tmp_path / "a" / "timing.json").read_text())


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    assert main(["fit", "ring", "--n", "32", "--steps", "2", "--out", str(root / "ring")]) == 0
    assert main(["fit", "torus", "--n", "12", "12", "--steps", "2",
                 "--out", str(root / "torus")]) == 0
    return root


def test_fit_records_wall_time_and_resume_step_in_timing(models):
    metrics = json.loads((models / "ring" / "metrics.json").read_text())
    timing = json.loads((models / "ring" / "timing.json").read_text())
    assert "resumed_from_step" not in metrics
    assert timing["resumed_from_step"] == 0 and timing["fit_seconds"] > 0


def test_simulate_same_seed_same_metrics(tmp_path, models, capsys):
    metrics, timing = _twice(tmp_path, ["simulate", "--model", str(models / "ring"),
                                        "--count", "2", "--duration", "5", "--seed", "0",
                                        "--json"])
    assert "seconds" not in metrics and timing["seconds"] > 0
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert printed["seconds"] > 0  # the command's line still reports it


def test_grid_cells_same_seed_same_metrics(tmp_path, models):
    metrics, timing = _twice(tmp_path, ["grid-cells", "--model", str(models / "torus"),
                                        "--duration", "20", "--seed", "0", "--shuffles", "2"])
    assert not {"wall_time_s", "realtime_factor"} & set(metrics)
    assert timing["wall_time_s"] > 0 and timing["realtime_factor"] > 0


def test_manifold_same_seed_same_metrics(tmp_path, models):
    metrics, timing = _twice(tmp_path, ["manifold", "--model", str(models / "ring"),
                                        "--samples", "40", "--no-topology", "--seed", "0"])
    assert "seconds" not in metrics and timing["seconds"]["total"] > 0
