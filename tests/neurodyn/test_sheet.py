"""Large sheets: the streamed fit design against the dense one, the sheet's field against the
network's, the energy audit, the compiled steps against the reference steps, the matrix-free
zero modes against the dense Jacobian, and the memory estimate's refusal before allocation."""

import math
import resource

import pytest
import torch

from _runkit import BadInput, Diverged
from neurodyn.dynamics.simulation import simulate
from neurodyn.fitting import core
from neurodyn.fitting.core import TERMS, FitConfig, fit
from neurodyn.fitting.plan import build_manifold, build_network
from neurodyn.fitting.streamed import (
    nearest_point_local,
    normal_equations,
    stream_batch,
)
from neurodyn.manifold import nearest_point
from neurodyn.sheet import (
    SheetField,
    check_sheet_memory,
    large_torus,
    relax,
    rk4_steps,
    zero_modes,
)
from neurodyn.sheet.fast import AVAILABLE as COMPILED


def _dense_sums(net, manifold, cfg, batch):
    p = net.energy_fn.theta().numel()
    sums = {k: {"ata": torch.zeros(p, p, dtype=torch.float64),
                "aty": torch.zeros(p, dtype=torch.float64),
                "yty": torch.zeros((), dtype=torch.float64)} for k in TERMS}
    core._accumulate(sums, core._design(net, manifold, cfg, batch))
    return sums


def test_streamed_normal_equations_equal_the_dense_design_on_a_64_sheet():
    cfg = FitConfig(geometry="torus", n=(64, 64), batch=1)
    manifold = build_manifold(cfg)
    net = build_network(cfg, manifold)
    theta = torch.randn(net.energy_fn.theta().numel(), dtype=torch.float64,
                        generator=torch.Generator().manual_seed(3))
    net.energy_fn.set_theta(theta)  # the design must not depend on the current theta
    dense_batch = core._batch(manifold, cfg, 5)
    lazy = stream_batch(manifold, cfg, 5)
    for key, value in lazy.materialize().items():  # the same states, drawn the same way
        assert float((value - dense_batch[key]).abs().max()) < 1e-12, key
    want = _dense_sums(net, manifold, cfg, dense_batch)
    got = normal_equations(net, manifold, cfg, lazy)
    for term in TERMS:
        for key in ("ata", "aty", "yty"):
            w, g = want[term][key], got[term][key]
            assert float(w.abs().max()) > 0
            assert float((g - w).abs().max()) <= 1e-10 * float(w.abs().max()), (term, key)
    assert torch.equal(net.energy_fn.theta(), theta)  # left as it was


def test_a_streamed_fit_is_the_dense_fit():
    cfg = FitConfig(geometry="torus", n=(16, 16), steps=1, batch=1, kappa=2.0)
    dense = fit(cfg, design="dense", progress=False).network.energy_fn.theta()
    streamed = fit(cfg, design="streamed", progress=False).network.energy_fn.theta()
    assert float((dense - streamed).abs().max()) <= 1e-9 * float(dense.abs().max())
    with pytest.raises(BadInput, match="design"):
        fit(cfg, design="sparse", progress=False)


def test_local_nearest_point_is_the_oversampled_one():
    cfg = FitConfig(geometry="torus", n=(48, 40))
    m = build_manifold(cfg)
    gen = torch.Generator().manual_seed(0)
    psi = m.geometry.random_phase(6, gen)
    u = m.u_star(psi) + 0.3 * torch.randn((6, 48, 40), generator=gen, dtype=torch.float64)
    want = nearest_point(m, u)
    got = torch.stack([nearest_point_local(m, x) for x in u])
    diff = torch.remainder(got - want + math.pi, 2 * math.pi) - math.pi
    assert float(diff.abs().max()) < 1e-12


@pytest.fixture(scope="module")
def fitted():
    return fit(FitConfig(geometry="torus", n=(24, 24), steps=2, batch=1, kappa=1.5),
               design="streamed", progress=False).network


def test_sheet_field_is_the_network_in_float64_and_close_in_float32(fitted):
    net = fitted
    gen = torch.Generator().manual_seed(1)
    u = net.manifold.u0 + 0.4 * torch.randn(24, 24, dtype=torch.float64, generator=gen)
    v = torch.randn(24, 24, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        f, e = net.field(u), float(net.energy(u))
        h = net.energy_fn.hvp(net.activation(u), v)
    s64, s32 = SheetField(net, torch.float64), SheetField(net, torch.float32)
    assert float((s64.field(u) - f).abs().max()) < 1e-12 * float(f.abs().max()) + 1e-13
    assert abs(s64.energy(u) - e) < 1e-12 * abs(e)
    assert float((s64.hvp(u, v) - h).abs().max()) < 1e-12 * float(h.abs().max())
    f32 = s32.field(u.float()).double()
    assert 0 < float((f32 - f).abs().max()) < 1e-5 * float(f.abs().max())


def test_relaxation_is_rk4_on_the_network_and_its_energy_never_rises(fitted):
    net = fitted
    gen = torch.Generator().manual_seed(2)
    u0 = net.manifold.u_star(torch.tensor([1.0, 2.0], dtype=torch.float64)) + 0.5 * torch.randn(
        24, 24, dtype=torch.float64, generator=gen)
    run = relax(SheetField(net, torch.float64), u0, 60, 0.1)
    u = u0.clone()
    with torch.no_grad():
        for _ in range(60):  # classical RK4 on the network's own field
            k1 = net.field(u)
            k2 = net.field(u + 0.05 * k1)
            k3 = net.field(u + 0.05 * k2)
            k4 = net.field(u + 0.1 * k3)
            u = u + 0.1 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert float((run.u - u).abs().max()) < 1e-10
    assert run.ok and run.energy.shape == (61,)
    assert float(run.energy[0] - run.energy[-1]) > 1.0  # it did descend
    ref = simulate(net, u0[None], duration=6.0, dt=0.1, method="rk4", progress=False)
    assert float((run.u - ref.u[-1, 0]).abs().max()) < 1e-6  # the library's own run
    run32 = relax(SheetField(net, torch.float32), u0, 60, 0.1)
    assert run32.ok and float((run32.u.double() - run.u).abs().max()) < 1e-4


@pytest.fixture(scope="module")
def fitted32():
    """A fitted 32 x 32 torus: pointwise, locking and curvature-band terms all nonzero."""
    return fit(FitConfig(geometry="torus", n=(32, 32), steps=2, batch=1, kappa=1.5),
               design="streamed", progress=False).network


@pytest.mark.skipif(not COMPILED, reason="the compiled path needs numba")
def test_compiled_steps_are_the_reference_steps(fitted32):
    net = fitted32
    e = net.energy_fn
    assert e.pointwise is not None and e.phaselock is not None
    assert float(e.phaselock.coef.detach().abs().min()) > 0 and len(SheetField(net).band) > 0
    gen = torch.Generator().manual_seed(4)
    u0 = net.manifold.u_star(torch.tensor([0.7, 2.1], dtype=torch.float64)) + 0.5 * torch.randn(
        32, 32, dtype=torch.float64, generator=gen)
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        field = SheetField(net, dtype)
        fast = relax(field, u0, 40, 0.1, path="compiled")
        ref = relax(field, u0, 40, 0.1, path="torch")
        span = float(ref.u.max() - ref.u.min())
        diff = float((fast.u.double() - ref.u.double()).abs().max())
        assert diff <= tol * span, (dtype, diff)
        moved = float((ref.u.double() - u0).abs().max())
        assert moved > 1e3 * tol * span  # the runs went somewhere the tolerance can tell
        # half the steps is far outside the tolerance: the comparison can fail
        short = rk4_steps(field, u0, 20, 0.1, path="compiled").double()
        assert float((short - ref.u.double()).abs().max()) > 100 * tol * span
        de = float((fast.energy - ref.energy).abs().max())
        assert fast.ok and ref.ok and de <= 10 * tol * float(ref.energy.abs().max()), de
        assert torch.equal(rk4_steps(field, u0, 40, 0.1, path="compiled"), fast.u)
        assert float(fast.energy[0] - fast.energy[-1]) > 1.0


@pytest.mark.skipif(not COMPILED, reason="the compiled path needs numba")
def test_compiled_path_stops_where_the_state_diverges_and_refuses_other_sides(fitted, fitted32):
    field = SheetField(fitted32, torch.float32)
    with pytest.raises(Diverged, match="non-finite at step"):
        relax(field, fitted32.manifold.u0, 200, dt=60.0, path="compiled")
    with pytest.raises(Diverged, match="non-finite at step"):
        relax(field, fitted32.manifold.u0, 200, dt=60.0, path="torch")
    with pytest.raises(BadInput, match="powers of two"):  # 24 x 24: the reference only
        relax(SheetField(fitted, torch.float32), fitted.manifold.u0, 1, path="compiled")
    with pytest.raises(BadInput, match="path="):
        rk4_steps(field, fitted32.manifold.u0, 1, path="numba")


def test_zero_modes_match_the_dense_jacobian(fitted):
    net = fitted
    modes = zero_modes(SheetField(net, torch.float64), net.manifold.u0, net.tau, 40)
    with torch.no_grad():
        eig = torch.linalg.eigvals(net.jacobian(net.manifold.u0)).real.sort().values
    assert float(eig[-3]) < -0.5 and float(eig[-2]) > -1e-6  # the dense truth: two neutral
    for value, residual in zip(modes.tangent_eigenvalues, modes.tangent_residuals, strict=True):
        assert abs(value) < 1e-6 and residual < 1e-6
    lo, hi = modes.normal_range
    assert abs(hi - float(eig[-3])) < 1e-6 and abs(lo - float(eig[0])) < 1e-6
    assert modes.count(1e-6) == 2


def test_memory_estimate_refuses_an_absurd_sheet_before_allocating():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(BadInput, match="n is too large"):
        large_torus(1 << 17)
    with pytest.raises(BadInput, match="n is too large"):
        check_sheet_memory((4096, 4096), limit=2**30)
    est = check_sheet_memory((64, 64))
    assert est["peak"] > est["runtime"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024  # KiB


@pytest.mark.slow
def test_a_256_sheet_end_to_end():
    rep = large_torus(256, steps=200, lanczos=30)
    assert rep.run.ok and rep.distance[1] < 0.1 * rep.distance[0]
    assert rep.modes.count(1e-6) == 2
    assert -1.1 < rep.modes.normal_range[0] <= rep.modes.normal_range[1] < -0.9
