"""The batched design matrix of ``neurodyn.fit`` against the column-by-column computation it
replaced (one residual evaluation per parameter), and the phase-locking Hessian-vector product
it relies on against the double backward it replaced."""

import importlib.util
from pathlib import Path

import pytest
import torch

from neurodyn.energies.base import InteractionEnergy
from neurodyn.energies.coupling import PhaseLockEnergy
from neurodyn.fitting import core as fitting
from neurodyn.fitting.core import TERMS, FitConfig, fit
from neurodyn.fitting.plan import build_manifold, build_network
from neurodyn.geometry.populations import Ring, Torus


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_fit_design", Path(__file__).resolve().parents[2] / "bench" / "bench_fit_design.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the reference: residuals at theta = 0 and at each unit vector, one evaluation each (the
#: column-by-column design the benchmark times against the batched one)
design_by_columns = _load_bench().design_by_columns


CASES = [
    {"geometry": "ring", "n": 32, "batch": 2},
    {"geometry": "ring", "n": 16, "batch": 1, "phaselock": True, "variable": "power"},
    {"geometry": "ring", "n": 24, "batch": 2, "family": "spectral"},
    {"geometry": "torus", "n": 8, "batch": 2},
    {"geometry": "torus", "n": 8, "lattice": "square", "batch": 1},
]


@pytest.mark.parametrize("options", CASES, ids=lambda o: "-".join(map(str, o.values())))
def test_batched_design_equals_the_column_wise_one(options):
    cfg = FitConfig(**options)
    manifold = build_manifold(cfg)
    net = build_network(cfg, manifold)
    theta = torch.randn(net.energy_fn.theta().numel(), dtype=torch.float64,
                        generator=torch.Generator().manual_seed(3))
    net.energy_fn.set_theta(theta)  # the design must not depend on the current theta
    b = fitting._batch(manifold, cfg, 5)
    with torch.no_grad():
        before = fitting._residuals(net, manifold, cfg, b)
    ref = design_by_columns(net, manifold, cfg, b)
    new = fitting._design(net, manifold, cfg, b)
    assert sorted(new) == sorted(TERMS)
    for k in TERMS:
        for got, want in zip(new[k], ref[k], strict=True):
            assert got.shape == want.shape and got.dtype == torch.float64
            assert float((got - want).abs().max()) <= 1e-10 * max(1.0, float(want.abs().max()))
        a, y = new[k]
        assert a.shape[1] == theta.numel() and float(a.abs().max()) > 0  # a real design
        # affine: A theta - y is the residual at theta
        assert torch.allclose(a @ theta - y, before[k], rtol=1e-9, atol=1e-11)
    # the network is left as it was: same parameters, same residuals
    assert torch.equal(net.energy_fn.theta(), theta)
    with torch.no_grad():
        after = fitting._residuals(net, manifold, cfg, b)
    assert all(torch.equal(before[k], after[k]) for k in TERMS)


def test_fit_with_the_batched_design_is_deterministic_and_matches_the_reference(monkeypatch):
    cfg = FitConfig(geometry="torus", n=8, steps=2, batch=1, kappa=2.0)
    runs = [fit(cfg) for _ in range(2)]
    monkeypatch.setattr(fitting, "_design", design_by_columns)
    ref = fit(cfg)
    a, b = (r.network.energy_fn.theta() for r in runs)
    assert torch.equal(a, b) and runs[0].history == runs[1].history
    assert torch.allclose(a, ref.network.energy_fn.theta(), rtol=1e-9, atol=1e-12)
    for k in TERMS:
        assert runs[0].history[k] == pytest.approx(ref.history[k], rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("geometry", [Ring(24), Torus(10, 10), Torus(8, 8, "square")],
                         ids=["ring", "hex", "square"])
def test_phaselock_hvp_equals_the_double_backward(geometry):
    e = PhaseLockEnergy(geometry)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        e.coef.normal_(0, 1, generator=gen)
    r = 0.1 + 0.8 * torch.rand((3,) + geometry.shape, generator=gen, dtype=torch.float64)
    v = torch.randn((3,) + geometry.shape, generator=gen, dtype=torch.float64)
    want = InteractionEnergy.hvp(e, r, v).detach()
    got = e.hvp(r, v).detach()
    assert float(want.abs().max()) > 1e-4
    assert float((got - want).abs().max()) <= 1e-12
    # one state against a batch of directions (how network.jacobian calls it)
    eye = torch.eye(geometry.size, dtype=torch.float64).reshape((geometry.size,) + geometry.shape)
    hess = e.hvp(r[0], eye).detach()
    assert torch.allclose(hess, InteractionEnergy.hvp(e, r[0].expand_as(eye), eye).detach(),
                          atol=1e-12)
