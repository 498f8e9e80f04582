"""``neurodyn diffuse`` on short runs: lags follow the saved steps; too short is bad input."""

from __future__ import annotations

import json

import pytest

from neurodyn.analysis.bump_motion import default_lags
from neurodyn.cli import main


def test_default_lags_are_whole_saved_steps():
    assert default_lags(200.0, 1.0) == (3.0, 6.0, 12.0, 25.0)  # the long-run lags, unchanged
    assert default_lags(10.0, 1.0) == (1.0, 2.0)
    with pytest.raises(ValueError, match="three saved steps"):
        default_lags(2.0, 1.0)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("m") / "ring"
    assert main(["fit", "ring", "--n", "32", "--steps", "5", "--out", str(out)]) == 0
    return out


def test_a_ten_tau_run_is_estimated(model, tmp_path, capsys):
    out = tmp_path / "d"
    assert main(["diffuse", "--model", str(model), "--runs", "4", "--duration", "10",
                 "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["lags"] == [1.0, 2.0] and metrics["D"] > 0


def test_a_two_tau_run_is_refused_before_the_directory(model, tmp_path, capsys):
    out = tmp_path / "d"
    assert main(["diffuse", "--model", str(model), "--runs", "4", "--duration", "2",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--duration" in err[0]
    assert not out.exists()
