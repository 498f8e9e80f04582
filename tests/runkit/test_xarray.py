"""``to_xarray()`` on the trajectory and tabular results: labelled dimensions (time, run,
neuron; step; run; row) holding the same numbers as the result, and a one-line error naming
the extra when xarray is absent."""

import sys
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import flows
import neurodyn as nd
from _runkit.results import Result
from _runkit.sweep import run_sweep

xr = pytest.importorskip("xarray")


@pytest.fixture(scope="module")
def torus():
    return nd.fit(nd.FitConfig(geometry="torus", n=(8, 10), steps=2, batch=4), progress=False)


def test_simulation_has_time_run_and_neuron(torus):
    u0 = nd.perturbed_states(torus.network.manifold, count=3, kind="noise", strength=0.2,
                             seed=0)
    run = nd.simulate(torus.network, u0, duration=1.0, dt=0.1, save_every=5)
    ds = run.to_xarray()
    assert ds["u"].dims == ("time", "run", "neuron") and ds.sizes["neuron"] == 80
    assert ds.sizes == {"time": 3, "run": 3, "neuron": 80, "axis": 2}
    assert np.allclose(ds["time"], run.t.numpy())
    # the torus sheet is flattened row by row: neuron 10 is sheet cell (1, 0)
    assert float(ds["r"].isel(time=2, run=1, neuron=10)) == float(run.r[2, 1, 1, 0])
    assert np.array_equal(ds["energy"].values, run.energy.numpy())
    assert ds.attrs["shape"] == [8, 10] and ds.attrs["method"] == run.method
    # control: the neuron that is not (1, 0)
    assert float(ds["r"].isel(time=2, run=1, neuron=1)) != float(run.r[2, 1, 1, 0])


def test_fit_train_sweep_and_results(torus, tmp_path):
    fit = torus.to_xarray()
    assert fit.sizes == {"step": 2} and set(fit.data_vars) == set(torus.history)
    res = flows.train(flows.TrainConfig(data="moons", width=8, steps=3, batch=16, n_train=32,
                                        n_eval=8), progress=False)
    loss = res.to_xarray()["loss"]
    assert loss.dims == ("step",) and np.allclose(loss.values, res.losses.numpy())
    sweep = run_sweep(lambda p: {"y": p["x"] ** 2}, {"x": [1, 2, 3]}, tmp_path, workers=0,
                      progress=False)
    table = sweep.to_xarray()
    assert table.sizes == {"run": 3} and table["y"].values.tolist() == [1, 4, 9]

    @dataclass(frozen=True)
    class Grid(Result):
        families: dict

    grid = Grid({"seal": {"rate": 1.0}, "spectral": {"rate": 0.5}}).to_xarray()
    assert grid["rate"].dims == ("row",) and list(grid["row"].values) == ["seal", "spectral"]


def test_without_xarray_the_error_names_the_extra(torus, monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match=r"FitResult.to_xarray\(\) needs xarray.*\[xarray\]"):
        torus.to_xarray()
    run = nd.simulate(torus.network, torch.zeros(1, 8, 10, dtype=torch.float64), duration=0.2,
                      dt=0.1)
    with pytest.raises(ImportError, match="pip install"):
        run.to_xarray()
