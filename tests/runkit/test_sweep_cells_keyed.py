"""Stored sweep cells are reused only under the configuration that produced them, intact."""

import json

import sweep_cells

from _runkit.sweep import config_key, run_sweep

GRID = {"mu": [0.0, 1.0], "n": [50]}


def _table(res):
    return [(r["mu"], r["seed"], r["mean"]) for r in res.rows]


def test_other_fixed_settings_or_seed_recompute_every_cell(tmp_path):
    first = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=0, workers=0,
                      progress=False)
    same = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=0, workers=0,
                     progress=False)
    assert same.ran == 0 and _table(same) == _table(first)
    fresh = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path / "fresh", seed=7, workers=0,
                      progress=False)
    reseeded = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=7, workers=0,
                         progress=False)
    assert reseeded.ran == 2 and reseeded.stale == 2
    assert _table(reseeded) == _table(fresh) != _table(first)
    wider = run_sweep(sweep_cells.noisy_mean, {"mu": [0.0, 1.0]}, tmp_path, seed=7,
                      fixed={"n": 500}, workers=0, progress=False)
    assert wider.ran == 2 and wider.stale == 0  # other coordinates: other cell files
    again = run_sweep(sweep_cells.noisy_mean, {"mu": [0.0, 1.0]}, tmp_path, seed=7,
                      fixed={"n": 400}, workers=0, progress=False)
    assert again.ran == 2 and again.stale == 2
    assert [r["mean"] for r in again.rows] != [r["mean"] for r in wider.rows]


def test_forged_or_truncated_cells_are_computed_again(tmp_path):
    first = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=0, workers=0,
                      progress=False)
    forged, truncated = sorted((tmp_path / "cells").glob("*.json"))
    record = json.loads(forged.read_text())
    record["result"]["mean"] = 123.0
    forged.write_text(json.dumps(record))
    truncated.write_text(truncated.read_text()[:40])
    again = run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=0, workers=0,
                      progress=False)
    assert again.ran == 2 and again.stale == 2
    assert _table(again) == _table(first)
    assert "123.0" not in again.table.read_text()
    # a cell file of the old shape (no key, no checksum) is not trusted either
    for path in (tmp_path / "cells").glob("*.json"):
        rec = json.loads(path.read_text())
        path.write_text(json.dumps({k: rec[k] for k in ("coords", "seed", "result")}))
    assert run_sweep(sweep_cells.noisy_mean, GRID, tmp_path, seed=0, workers=0,
                     progress=False).ran == 2


def test_config_key_covers_the_cell_function_and_every_parameter():
    p = {"mu": 0.0, "n": 50, "seed": 3}
    assert config_key(sweep_cells.noisy_mean, p) == config_key(sweep_cells.noisy_mean, dict(p))
    assert config_key(sweep_cells.noisy_mean, p) != config_key(sweep_cells.slow_marked, p)
    assert config_key(sweep_cells.noisy_mean, p) != config_key(sweep_cells.noisy_mean,
                                                               {**p, "n": 51})
