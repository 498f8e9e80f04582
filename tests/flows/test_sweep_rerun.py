"""A flows experiment rerun into the same ``--out`` under other settings never tables the
cells of the earlier run (in-process through ``main(argv)``)."""

import json

from flows.cli.commands import main

RISK = ["experiment", "risk", "--ns", "8,16", "--seeds", "1,2", "--width", "8", "--k", "1",
        "--n-test", "50", "--n-samples", "0", "--workers", "0"]
MEMO = ["experiment", "memorization", "--ns", "8,16", "--width", "8", "--n-samples", "20",
        "--workers", "0"]


def _metrics(out):
    body = json.loads((out / "metrics.json").read_text())
    return json.dumps({k: v for k, v in body.items() if k not in ("seconds", "out", "path")},
                      sort_keys=True)


def _check(base, tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*base, "--steps", "2", "--out", str(out)]) == 0
    two = _metrics(out)
    assert main([*base, "--steps", "25", "--out", str(out)]) == 0
    assert main([*base, "--steps", "25", "--out", str(tmp_path / "ref")]) == 0
    capsys.readouterr()
    assert _metrics(out) != two
    assert _metrics(out) == _metrics(tmp_path / "ref")


def test_risk_rerun_with_other_steps_recomputes(tmp_path, capsys):
    _check(RISK, tmp_path, capsys)


def test_memorization_rerun_with_other_steps_recomputes(tmp_path, capsys):
    _check(MEMO, tmp_path, capsys)
