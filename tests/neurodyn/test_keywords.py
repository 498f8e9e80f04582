"""Keyword and config conventions shared with flows: unknown config keys raise BadInput,
the progress switch is ``progress=`` (the old ``progress_bar=`` is refused)."""

import pytest
import torch

from _runkit import BadInput
from neurodyn.activation import make_activation
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import make_energy
from neurodyn.fitting.config import FitConfig
from neurodyn.fitting.core import fit
from neurodyn.geometry.populations import Ring, make_geometry


@pytest.mark.parametrize("build", [
    lambda: FitConfig.from_dict({"n": 16, "stepz": 3}),
    lambda: make_geometry({"kind": "ring", "n": 16, "size": 2}),
    lambda: make_geometry({"kind": "torus", "n": [8, 8], "shape": "hex"}),
    lambda: make_activation({"name": "logistic", "slope": 2.0}),
    lambda: make_energy({"family": "seal", "curvature": 1}, Ring(16)),
    lambda: make_energy({"family": "phaselock", "strength": 1.0}, Ring(16)),
])
def test_unknown_config_keys_raise_bad_input(build):
    with pytest.raises(BadInput, match="unknown keys"):
        build()


def test_bad_input_is_a_value_error():
    assert issubclass(BadInput, ValueError)


@pytest.fixture(scope="module")
def net():
    return fit(FitConfig(n=16, steps=1, batch=2, check_kappa=False), progress=False).network


def test_progress_bar_keyword_is_refused(net):
    u0 = net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match="progress_bar"):
        simulate(net, u0, 0.2, 0.1, progress_bar=False)
    with pytest.raises(TypeError, match="progress_bar"):
        fit(FitConfig(n=16, steps=1), progress_bar=False)
    assert simulate(net, u0, 0.2, 0.1, progress=False).u.shape[1] == 1


def test_device_and_progress_are_keywords_of_every_run_as_in_flows():
    import inspect

    import flows

    for func in (simulate, fit, flows.train):
        params = inspect.signature(func).parameters
        assert "device" in params and "progress" in params, func.__name__
    assert "method" in inspect.signature(simulate).parameters


def test_fit_device_keyword_overrides_the_config():
    result = fit(FitConfig(n=16, steps=1, batch=2, check_kappa=False), progress=False,
                 device="cpu")
    assert result.config.device == "cpu"
    with pytest.raises(ValueError, match="device"):
        fit(FitConfig(n=16, steps=1), device="meta")
