"""``neurodyn sweep`` claims ``--out`` as a run directory, checks its grid first, and never
tables a cell stored under other settings (in-process through ``main(argv)``)."""

import json

from neurodyn.cli import main

KAPPA = ["sweep", "kappa", "--workers", "0", "--grid", "kappa=1,2", "--grid", "n=16"]


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_sweep_refuses_a_directory_of_another_command(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    other = {"command": "flows train", "config": {"steps": 2}, "seed": 0, "version": "0",
             "argv": None}
    (out / "config.json").write_text(json.dumps(other))
    (out / "metrics.json").write_text('{"loss": 1.0}')
    code, err = _run(capsys, *KAPPA, "--fit-steps", "1", "--out", out)
    assert code == 2 and "--out" in err and len(err.strip().splitlines()) == 1
    assert json.loads((out / "config.json").read_text()) == other
    assert (out / "metrics.json").read_text() == '{"loss": 1.0}'
    assert not (out / "cells").exists()


def test_sweep_refuses_a_file_as_out(tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("keep")
    code, err = _run(capsys, *KAPPA, "--fit-steps", "1", "--out", out)
    assert code == 2 and "--out" in err and "FileExistsError" not in err
    assert len(err.strip().splitlines()) == 1 and out.read_text() == "keep"


def test_bad_grid_values_are_refused_before_anything_is_written(tmp_path, capsys):
    for bad in (["--grid", "kappa=1,nan"], ["--grid", "kappa=-1"], ["--grid", "n=4"],
                ["--grid", "n=16.5"], ["--fit-steps", "-1"]):
        out = tmp_path / "never"
        code, err = _run(capsys, "sweep", "kappa", "--workers", "0", "--grid", "n=16",
                         *bad, "--out", out)
        assert code == 2 and bad[0] in err, (bad, err)
        assert not out.exists(), bad
    code, err = _run(capsys, "sweep", "diffusion", "--workers", "0", "--grid", "noise=0",
                     "--out", tmp_path / "never")
    assert code == 2 and "--grid" in err and not (tmp_path / "never").exists()


def test_rerun_under_other_settings_recomputes_the_table(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert _run(capsys, *KAPPA, "--fit-steps", "1", "--out", out)[0] == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["command"] == "neurodyn sweep kappa" and cfg["config"]["fixed"]["fit_steps"] == 1
    one = (out / "table.csv").read_text()
    metrics = (out / "metrics.json").read_bytes()
    assert _run(capsys, *KAPPA, "--fit-steps", "1", "--out", out)[0] == 0
    assert json.loads((out / "timing.json").read_text())["ran"] == 0
    assert (out / "metrics.json").read_bytes() == metrics  # a resumed sweep: the same file
    assert (out / "table.csv").read_text() == one
    assert _run(capsys, *KAPPA, "--fit-steps", "3", "--out", out)[0] == 0
    three = (out / "table.csv").read_text()
    assert json.loads((out / "timing.json").read_text())["ran"] == 2 and three != one
    assert _run(capsys, *KAPPA, "--fit-steps", "3", "--out", tmp_path / "ref")[0] == 0
    assert (tmp_path / "ref" / "table.csv").read_text() == three
    assert _run(capsys, *KAPPA, "--fit-steps", "3", "--seed", "7", "--out", out)[0] == 0
    assert json.loads((out / "timing.json").read_text())["ran"] == 2
    assert (out / "table.csv").read_text() != three
