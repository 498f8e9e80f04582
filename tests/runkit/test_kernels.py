"""numba's cache of the kernels: one folder keyed on every kernel source, helpers included."""

import importlib
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

import _runkit.kernels as K

ROOT = Path(__file__).resolve().parents[2]
KERNEL_MODULES = ("flows.assignment._bits", "flows.assignment._auction_kernels",
                  "flows.assignment._matching_kernels", "neurodyn.dynamics._compiled.kernels")
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba is not installed")


def test_every_file_that_compiles_with_numba_is_a_kernel_source():
    compiles = re.compile(r"\bnjit\b|numba\.jit\b|\boverload\b|\bvectorize\b")
    library = [p for pkg in ("neurodyn", "flows") for p in (ROOT / pkg).rglob("*.py")]
    using = {p for p in library if compiles.search(p.read_text())}
    assert len(using) >= 4, "kernels not found: the search is broken"
    assert using <= set(K.kernel_files()), sorted(str(p) for p in using - set(K.kernel_files()))


def test_the_cache_folder_changes_with_any_kernel_source(tmp_path, monkeypatch):
    for path in K.kernel_files():
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, copy)
    monkeypatch.setattr(K, "_ROOT", tmp_path)
    K._sources_hash.cache_clear()
    try:
        before = K.kernel_cache_dir()
        assert before == K.kernel_cache_dir()
        helper = tmp_path / "flows" / "assignment" / "_bits.py"  # compiled into other kernels
        helper.write_text(helper.read_text() + "\n# an edit\n")
        K._sources_hash.cache_clear()
        after = K.kernel_cache_dir()
    finally:
        K._sources_hash.cache_clear()
    assert before.parent == after.parent and before != after
    assert after.name.startswith("kernels-")


def test_the_cache_base_is_numba_cache_dir_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert K.kernel_cache_dir().parent == tmp_path
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert K.kernel_cache_dir().parent == tmp_path / "xdg" / "neurodyn-flows"


def test_clear_kernel_caches_removes_only_the_keyed_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    (tmp_path / "kernels-0123").mkdir()
    (tmp_path / "kernels-4567" / "x").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    assert [p.name for p in K.clear_kernel_caches()] == ["kernels-0123", "kernels-4567"]
    assert [p.name for p in tmp_path.iterdir()] == ["other"]


@needs_numba
def test_every_kernel_is_cached_in_the_keyed_folder():
    from numba.core.registry import CPUDispatcher

    folder = str(K.kernel_cache_dir())
    seen = 0
    for name in KERNEL_MODULES:
        for obj in vars(importlib.import_module(name)).values():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name:
                assert obj._cache._cache_path.startswith(folder), (name, obj.__name__)
                seen += 1
    assert seen > 20


def test_the_makefile_compiles_the_kernels_again_when_a_kernel_source_changes():
    line = next(l for l in (ROOT / "Makefile").read_text().splitlines()
                if l.startswith("KERNELS :="))
    assert line.split("$(wildcard ", 1)[1].rstrip(")").split() == list(K.KERNEL_SOURCES)
