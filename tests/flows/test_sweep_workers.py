"""``flows experiment risk | memorization | stopping | ntk-gap`` with ``--workers 2`` (a real
Dask LocalCluster, its cells stored under the run directory) write the serial metrics."""

import json
import os
from pathlib import Path

import pytest

from _runkit.sweep import DASK_AVAILABLE
from flows.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not DASK_AVAILABLE, reason="dask.distributed is not installed")

CASES = {
    "risk": ["--ns", "16,32", "--seeds", "1,2", "--width", "64", "--k", "2", "--steps", "5",
             "--n-test", "200", "--n-samples", "0"],
    "memorization": ["--ns", "8,16", "--width", "16", "--steps", "5", "--n-samples", "50"],
    "stopping": ["--data", "normal", "--ns", "16,32", "--seeds", "1,2", "--width", "32",
                 "--k", "2", "--steps", "5", "--n-test", "200", "--protocols", "fixed,sqrt"],
    "ntk-gap": ["--widths", "8,64", "--n", "4", "--k", "1", "--steps", "5", "--seeds", "1,2"],
}
#: the cells each kind stores: (folder under the run directory, how many)
CELLS = {"risk": [("cells", 4)], "memorization": [("cells", 2)],
         "stopping": [("data/cells", 4), ("shuffled/cells", 4)], "ntk-gap": [("cells", 4)]}


@pytest.fixture
def worker_path(monkeypatch):
    """Worker processes import this checkout."""
    parts = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in parts if p))


@pytest.mark.parametrize("kind", list(CASES))
def test_two_workers_write_the_serial_metrics(kind, tmp_path, capsys, worker_path):
    serial, cells = tmp_path / "serial", tmp_path / "workers"
    assert main(["experiment", kind, "--out", str(serial), *CASES[kind]]) == 0, \
        capsys.readouterr().err
    assert not (serial / "cells").exists()
    assert main(["experiment", kind, "--out", str(cells), *CASES[kind], "--workers", "2"]) == 0, \
        capsys.readouterr().err
    capsys.readouterr()
    assert (json.loads((cells / "metrics.json").read_text())
            == json.loads((serial / "metrics.json").read_text()))
    for folder, count in CELLS[kind]:
        assert len(list((cells / folder).glob("*.json"))) == count, folder
