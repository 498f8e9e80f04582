"""What a notebook shows of results: short reprs (no module or tensor dumps), tables through
``to_pandas()`` with a clear error without pandas, and progress bars that show in a kernel and
stay when finished."""

import sys
from dataclasses import dataclass

import pytest
import torch

import _runkit.notebook as rk_notebook
import _runkit.runtime as rk_runtime
import flows
import neurodyn as nd
from _runkit.results import Result, artifact

pretty = pytest.importorskip("IPython.lib.pretty")


@pytest.fixture(scope="module")
def ring():
    return nd.fit(nd.FitConfig(n=32, steps=3, batch=4), progress=False)


def test_fit_and_train_results_print_one_short_line(ring):
    text = repr(ring)
    assert len(text) < 250 and "\n" not in text and "ring" in text and "seconds=" in text
    assert "Parameter" not in text and "tensor(" not in text
    res = flows.train(flows.TrainConfig(data="moons", width=16, steps=4, batch=32, n_train=64,
                                        n_eval=8), progress=False)
    text = repr(res)
    assert len(text) < 200 and "steps=4/4" in text and "tensor(" not in text
    assert "Linear" not in text and "Parameter" not in text


def test_results_show_short_in_ipython(ring):
    r = nd.restoration(ring.network, count=2, duration=1.0)
    shown = pretty.pretty(r)
    assert shown.startswith("RestorationResult(kinds={'noise': RestorationStats,")
    assert len(shown) <= 200 and repr(r) == shown  # print() and the notebook show the same


def test_tables(ring):
    frame = ring.to_pandas()
    assert list(frame.columns) == ["linear", "field", "energy"] and len(frame) == 3
    u0 = nd.perturbed_states(ring.network.manifold, count=3, kind="noise", strength=0.2, seed=0)
    run = nd.simulate(ring.network, u0, duration=1.0, dt=0.1, save_every=5)
    table = run.to_pandas()
    assert len(table) == 3 * 3 and list(table.columns) == ["t", "run", "energy", "distance",
                                                            "decoded"]
    assert table["energy"].tolist() == pytest.approx(run.energy.reshape(-1).tolist())
    rest = nd.restoration(ring.network, count=2, duration=1.0).to_pandas()
    assert list(rest.index) == ["noise", "shape", "amplitude", "lesion"]
    assert "energy.ok" in rest.columns and rest["energy.ok"].all()


@dataclass(frozen=True)
class _Point(Result):
    w2: float
    ok: bool
    x: torch.Tensor = artifact(default=None)


def test_one_row_and_grouped_rows():
    row = _Point(float("nan"), True, torch.zeros(3)).to_pandas()
    assert list(row.columns) == ["w2", "ok"] and len(row) == 1

    @dataclass(frozen=True)
    class Grid(Result):
        families: dict

    grid = Grid({"seal": {"1.0": {"rate": 1.0}, "2.0": {"rate": 2.0}},
                 "spectral": {"1.0": {"rate": 0.5}}}).to_pandas()
    assert list(grid.index) == [("seal", "1.0"), ("seal", "2.0"), ("spectral", "1.0")]
    assert grid["rate"].tolist() == [1.0, 2.0, 0.5]


def test_without_pandas_the_error_says_what_to_install(ring, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"FitResult.to_pandas\(\) needs pandas.*pip install"):
        ring.to_pandas()
    with pytest.raises(ImportError, match="pip install pandas"):
        _Point(1.0, True).to_pandas()


def test_progress_in_a_kernel_is_on_and_stays(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(rk_runtime, "in_notebook", lambda: True)
    bar = rk_runtime.progress(total=3, desc="fit")
    try:
        assert bar.leave is True and bar.disable is False
    finally:
        bar.close()
    monkeypatch.undo()
    assert rk_notebook.in_notebook() is False  # a test process is no kernel
