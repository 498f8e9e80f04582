"""Artifacts are written atomically: a writer that fails mid-way leaves no partial file under
the final name, the previous file survives, and no temporary file is left behind."""

from pathlib import Path

import numpy as np
import pytest
from failing_writers import broken_method, broken_writer
from matplotlib.figure import Figure

from _runkit.files import atomic_save_figure, atomic_savez, write_gif


def assert_kept(path: Path, before: bytes) -> None:
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_savez_failing_mid_way_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "a.npz"
    atomic_savez(path, x=np.arange(4))
    before = path.read_bytes()
    monkeypatch.setattr(np, "savez_compressed", broken_writer)
    with pytest.raises(OSError, match="disk full"):
        atomic_savez(path, x=np.zeros(10))
    assert_kept(path, before)
    assert np.load(path)["x"].tolist() == [0, 1, 2, 3]


def test_figure_failing_mid_way_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "f.png"
    atomic_save_figure(Figure(figsize=(1, 1)), path, dpi=20)
    before = path.read_bytes()
    monkeypatch.setattr(Figure, "savefig", broken_method)
    with pytest.raises(OSError, match="disk full"):
        atomic_save_figure(Figure(figsize=(1, 1)), path, dpi=20)
    assert_kept(path, before)


def test_gif_failing_mid_way_keeps_the_previous_file(tmp_path):
    path = tmp_path / "m.gif"
    path.write_bytes(b"GIF89a previous")
    fig = Figure(figsize=(1, 1))
    ax = fig.add_subplot()

    def update(i):
        if i == 2:
            raise RuntimeError("frame failed")
        ax.set_title(str(i))

    with pytest.raises(RuntimeError, match="frame failed"):
        write_gif(fig, path, 5.0, update, np.arange(4), 20)
    assert_kept(path, b"GIF89a previous")
    write_gif(fig, path, 5.0, lambda i: ax.set_title(str(i)), np.arange(2), 20)
    assert path.read_bytes()[:6] == b"GIF89a" and path.stat().st_size > 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.gif"]
