"""The sweep engine: grid order, seeds from coordinates, resume, and a real Dask LocalCluster."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sweep_cells

from _runkit import BadInput
from _runkit.sweep import DASK_AVAILABLE, PARQUET_AVAILABLE, cell_seed, run_sweep

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
needs_dask = pytest.mark.skipif(not DASK_AVAILABLE, reason="dask.distributed is not installed")
GRID = {"mu": [0.0, 1.0, 2.0], "n": [10, 1000]}


@pytest.fixture
def worker_path(monkeypatch):
    """Worker processes find the test cell module and this checkout first."""
    parts = [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in parts if p))


def test_serial_sweep_rows_seeds_and_resume(tmp_path):
    res = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=3, workers=0,
                    progress=False)
    assert [(r["mu"], r["n"]) for r in res.rows] == [(m, n) for m in GRID["mu"]
                                                     for n in GRID["n"]]
    assert all(r["seed"] == cell_seed(3, {"mu": r["mu"], "n": r["n"]}) for r in res.rows)
    assert res.ran == 6 and len(list((tmp_path / "cells").glob("*.json"))) == 6
    assert abs(res.rows[-1]["mean"] - 2.0) < 0.1  # the cell computed with its parameters
    table = res.table.read_text()
    victim = sorted((tmp_path / "cells").glob("*.json"))[2]
    victim.unlink()
    again = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=3, workers=0,
                      progress=False)
    assert again.ran == 1 and again.table.read_text() == table
    other = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path / "other", seed=4, workers=0,
                      progress=False)
    assert other.table.read_text() != table  # another base seed, other draws


@pytest.mark.skipif(not PARQUET_AVAILABLE, reason="pyarrow is not installed (extra parquet)")
def test_parquet_table_holds_the_csv_rows(tmp_path):
    import pyarrow.parquet as pq

    res = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=2, workers=0,
                    progress=False)
    assert res.parquet == tmp_path / "table.parquet" and res.to_dict()["parquet"]
    table = pq.read_table(res.parquet)
    header = res.table.read_text().split("\n")[0].split(",")
    assert table.column_names == list(res.rows[0]) == header
    assert table.to_pylist() == res.rows  # typed columns, the same values in grid order
    assert str(table.schema.field("mean").type) == "double"
    assert str(table.schema.field("n").type) == "int64"


def test_sweep_refuses_bad_grids(tmp_path):
    with pytest.raises(BadInput, match="non-empty list"):
        run_sweep(sweep_cells.noisy_mean, {"mu": []}, tmp_path, workers=0)
    with pytest.raises(BadInput, match="seed"):
        run_sweep(sweep_cells.noisy_mean, {"seed": [1]}, tmp_path, workers=0)
    with pytest.raises(BadInput, match="workers"):
        run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, workers=-1)


@needs_dask
def test_one_and_two_workers_give_identical_tables(tmp_path, worker_path):
    one = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path / "w1", seed=1, workers=1,
                    progress=False)
    two = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path / "w2", seed=1, workers=2,
                    progress=False)
    serial = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path / "w0", seed=1, workers=0,
                       progress=False)
    assert one.ran == two.ran == 6
    assert one.table.read_text() == two.table.read_text() == serial.table.read_text()


@needs_dask
def test_killed_sweep_reruns_only_missing_cells(tmp_path, worker_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "sweep"
    script = textwrap.dedent(f"""
        import sweep_cells
        from _runkit.sweep import run_sweep
        if __name__ == "__main__":
            run_sweep(sweep_cells.slow_marked, {{"i": list(range(8))}}, {str(out)!r},
                      fixed={{"sleep": 1.5, "marks": {str(marks)!r}}}, workers=2,
                      progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    try:
        while len(list((out / "cells").glob("*.json"))) < 3:
            assert proc.poll() is None, "the sweep ended before it could be interrupted"
            assert time.time() < deadline
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stored = {p.name for p in (out / "cells").glob("*.json")}
    assert 3 <= len(stored) < 8
    before = {m.name.split("-")[0] for m in marks.iterdir()}
    # the same configuration (a cell's settings are part of its key: other settings rerun it)
    res = run_sweep(sweep_cells.slow_marked, {"i": list(range(8))}, out,
                    fixed={"sleep": 1.5, "marks": str(marks)}, workers=2, progress=False)
    assert res.ran == 8 - len(stored)
    runs = {}
    for m in marks.iterdir():
        runs[int(m.name.split("-")[0])] = runs.get(int(m.name.split("-")[0]), 0) + 1
    assert len(before) >= len(stored)
    # every cell stored before the kill ran exactly once (it was not run again)
    for name in stored:
        i = json.loads((out / "cells" / name).read_text())["coords"]["i"]
        assert runs[i] == 1, (i, runs)
    assert sorted(r["i"] for r in res.rows) == list(range(8))
