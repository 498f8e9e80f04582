"""neurodyn's run files (arrays, figures) are written atomically: a writer failing mid-way
leaves the previous file under the final name, and no partial or temporary file."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from failing_writers import broken_method, broken_writer
from matplotlib.figure import Figure

from neurodyn.plotting import save_figure
from neurodyn.runs import path_integrate_run
from neurodyn.spatial.gridcells.files import write_grid_cells


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def test_save_figure_failing_keeps_the_previous_png(tmp_path, monkeypatch):
    path = tmp_path / "fig.png"
    save_figure(Figure(figsize=(1, 1)), path, dpi=20)
    before = path.read_bytes()
    monkeypatch.setattr(Figure, "savefig", broken_method)
    with pytest.raises(OSError, match="disk full"):
        save_figure(Figure(figsize=(1, 1)), path, dpi=20)
    assert path.read_bytes() == before and _leftovers(tmp_path, {"fig.png"}) == []


def test_run_arrays_failing_keep_the_previous_npz(ring_fit, tmp_path, monkeypatch):
    old = tmp_path / "trajectory.npz"
    np.savez_compressed(old, previous=np.arange(3))
    before = old.read_bytes()
    monkeypatch.setattr(np, "savez_compressed", broken_writer)
    with pytest.raises(OSError, match="disk full"):
        path_integrate_run(ring_fit.network, tmp_path, "constant:0.1", runs=2, duration=2.0,
                           dt=0.1)
    assert old.read_bytes() == before
    assert _leftovers(tmp_path, {"trajectory.npz", "path_integration.png"}) == []


def test_grid_cell_arrays_failing_keep_the_previous_npz(tmp_path, monkeypatch):
    old = tmp_path / "track.npz"
    np.savez_compressed(old, previous=np.arange(3))
    before = old.read_bytes()
    module = SimpleNamespace(phases=np.zeros((3, 2)), decoded=np.zeros((3, 2)), spacing=0.5)
    result = SimpleNamespace(t=np.zeros(3), position=np.zeros((3, 2)),
                             decoded=np.zeros((3, 2)), error=np.zeros(3), modules=[module],
                             joint=None)
    monkeypatch.setattr(np, "savez_compressed", broken_writer)
    with pytest.raises(OSError, match="disk full"):
        write_grid_cells(result, tmp_path)
    assert old.read_bytes() == before and _leftovers(tmp_path, {"track.npz"}) == []
