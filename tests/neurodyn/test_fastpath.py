"""The compiled fixed-step path against the torchdiffeq path, the fallback and the range check."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from neurodyn.activation import Logistic, Tanh
from neurodyn.dynamics import fastpath
from neurodyn.dynamics.inputs import ArrayVelocity, Constant, OrnsteinUhlenbeck, Sine, Steps
from neurodyn.dynamics.simulation import NonFiniteStateError, simulate
from neurodyn.energies import (
    FourierQuadraticEnergy,
    LearnedFourierEnergy,
    MLPEnergy,
    QuadraticEnergy,
)
from neurodyn.geometry.populations import Ring, Torus
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork, Transport

needs_numba = pytest.mark.skipif(not fastpath.AVAILABLE, reason="numba is not installed")


def _learned(g, act, seed, anchored=True):
    m = TargetManifold.bump(g, act)
    p = g.power(m.r_star(torch.zeros(1, g.dim, dtype=torch.float64)))[0]
    e = LearnedFourierEnergy(g, bandwidth=3, degree=3, scale=p.clamp(min=1e-3))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        e.coef.normal_(0, 0.5, generator=gen)
    if anchored:
        e.anchor(p, 0.5 * m.fourier_construction())
    return e, m


def _network(g, energy_kind, act, seed=0, full_gains=False):
    """A network of the given family with a non-uniform bias and a transport."""
    gen = torch.Generator().manual_seed(seed)
    m = TargetManifold.bump(g, act)
    if energy_kind == "learned":
        energy, m = _learned(g, act, seed)
    elif energy_kind == "fourier":
        energy = FourierQuadraticEnergy(g, m.fourier_construction())
    else:
        energy = QuadraticEnergy.circulant(
            g, lambda th: 0.3 * torch.cos(th).prod(0) - 0.05)
    bias = 0.1 * torch.randn(g.shape, generator=gen, dtype=torch.float64)
    transport = Transport.fit(g, m.u0, 1.0, act)
    if full_gains:  # every mode carries a gain: the transport is a full-spectrum operator
        gains = torch.randn(g.spectral_shape, generator=gen, dtype=torch.float64)
        transport = Transport(g, gains)
    return HopfieldNetwork(g, act, energy, bias, 1.0, transport, m)


def _start(net, batch, seed=1):
    gen = torch.Generator().manual_seed(seed)
    psi = net.geometry.random_phase(batch, gen)
    u = net.manifold.u_star(psi)
    return u + 0.3 * torch.randn(u.shape, generator=gen, dtype=torch.float64)


def _both(net, u0, **kw):
    a = simulate(net, u0, backend="compiled", diagnostics=False, **kw)
    b = simulate(net, u0, backend="torch", diagnostics=False, **kw)
    assert (a.backend, b.backend) == ("compiled", "torch")
    assert a.u.shape == b.u.shape and torch.equal(a.t, b.t) and a.nfe == b.nfe
    return a, b


GEOMETRIES = {"ring": lambda: Ring(48), "torus": lambda: Torus(12, 10, "hex")}


@needs_numba
@pytest.mark.parametrize("geometry", sorted(GEOMETRIES))
@pytest.mark.parametrize("family", ["learned", "fourier", "quadratic"])
@pytest.mark.parametrize("method", ["euler", "midpoint", "rk4"])
def test_compiled_matches_torchdiffeq(geometry, family, method):
    g = GEOMETRIES[geometry]()
    net = _network(g, family, Logistic(1.5, 1.0))
    u0 = _start(net, 3)
    v = Constant(0.2) if g.dim == 1 else Constant((0.2, -0.1))
    a, b = _both(net, u0, duration=6.0, dt=0.2, method=method, velocity=v, save_every=4)
    assert float((a.u - b.u).abs().max()) < 1e-10
    # the control: the compiled run moved the state, so agreement is not trivial
    assert float((a.u[-1] - a.u[0]).abs().max()) > 0.1


@needs_numba
@pytest.mark.parametrize("geometry", sorted(GEOMETRIES))
def test_compiled_euler_maruyama_same_draws(geometry):
    g = GEOMETRIES[geometry]()
    net = _network(g, "learned", Logistic())
    u0 = _start(net, 2)
    a, b = _both(net, u0, duration=4.0, dt=0.1, noise=0.2, seed=5, save_every=3)
    assert float((a.u - b.u).abs().max()) < 1e-10
    c = simulate(net, u0, 4.0, 0.1, noise=0.2, seed=6, save_every=3, backend="compiled")
    assert float((a.u - c.u).abs().max()) > 1e-3  # another seed, other draws


@needs_numba
@pytest.mark.parametrize("velocity", [
    Sine(0.3, 0.05), Steps(((0.2, 0.1), (-0.3, 0.0)), 1.3),
    OrnsteinUhlenbeck(0.3, 2.0, 0.5), "array"])
def test_compiled_velocities_torus_tanh_full_gains(velocity):
    g = Torus(10, 10, "square")
    net = _network(g, "learned", Tanh(0.8), full_gains=True)
    u0 = _start(net, 2)
    if velocity == "array":
        arr = np.random.default_rng(0).normal(0, 0.2, (41, 2, 2))
        velocity = ArrayVelocity(arr, 0.1)
    a, b = _both(net, u0, duration=4.0, dt=0.1, method="rk4", velocity=velocity, seed=2,
                 save_every=7)
    assert float((a.u - b.u).abs().max()) < 1e-10


@needs_numba
def test_compiled_float32_close_and_unanchored_energy():
    g = Ring(64)
    energy, m = _learned(g, Logistic(), 3, anchored=False)
    net = HopfieldNetwork(g, Logistic(), energy, 0.05, 2.0, None, m)
    u0 = _start(net, 2)
    a, b = _both(net, u0, duration=10.0, dt=0.1, method="rk4", save_every=25)
    assert float((a.u - b.u).abs().max()) < 1e-10
    a32 = simulate(net, u0, 10.0, 0.1, method="rk4", save_every=25, dtype=torch.float32,
                   backend="compiled", diagnostics=False)
    assert a32.u.dtype == torch.float32
    assert float((a32.u.double() - b.u).abs().max()) < 1e-4


@needs_numba
def test_plan_uses_only_interacting_modes():
    g = Torus(16, 16, "hex")
    net = _network(g, "learned", Logistic())  # bandwidth 3, fitted (fundamental) gains
    plan, _ = fastpath.plan_for(net)
    # the separable block: k1 in [-3, 3] and k2 in [0, 3], not the full 16 x 9 half spectrum
    assert plan.tables[0].shape == (7, 16) and plan.tables[2].shape == (4, 16)
    assert plan.modes == 7 * 4  # every mode of the block is in the band


def test_unsupported_runs_take_the_torch_path():
    g = Ring(32)
    act = Logistic()
    m = TargetManifold.bump(g, act)
    net = HopfieldNetwork(g, act, MLPEnergy(g, hidden=(8,)), 0.0, 1.0, None, m)
    u0 = m.u_star(torch.zeros(1, 1, dtype=torch.float64))
    assert simulate(net, u0, 1.0, 0.1).backend == "torch"
    with pytest.raises(ValueError, match="energy family 'mlp'"):
        simulate(net, u0, 1.0, 0.1, backend="compiled")
    ring = _network(g, "learned", act)
    tr = simulate(ring, u0.expand(1, 32), 1.0, 0.1, method="dopri5")
    assert tr.backend == "torch"


def test_fallback_without_numba(monkeypatch):
    net = _network(Ring(32), "learned", Logistic())
    u0 = _start(net, 2)
    monkeypatch.setattr(fastpath, "AVAILABLE", False)
    with pytest.warns(UserWarning, match="slower torch path: numba is not installed"):
        tr = simulate(net, u0, 2.0, 0.1, save_every=5)
    assert tr.backend == "torch" and tr.u.shape == (5, 2, 32)
    with pytest.raises(ValueError, match="numba is not installed"):
        simulate(net, u0, 2.0, 0.1, backend="compiled")


@needs_numba
@pytest.mark.parametrize("case", ["noise", "velocity"])
def test_threads_give_the_numbers_of_one_thread(monkeypatch, case):
    """Blocks of states in two or three threads: bit-identical saved states and failure steps
    to one thread, with per-state draws and velocities (the run is made big enough to split)."""
    monkeypatch.setattr(fastpath, "_THREAD_WORK", 1)
    g = Torus(10, 10, "square")
    net = _network(g, "learned", Tanh(0.8), full_gains=True)
    u0 = _start(net, 5)
    plan, why = fastpath.plan_for(net)
    assert plan is not None, why
    runs = []
    for threads in (1, 2, 3):
        gen = torch.Generator().manual_seed(4)
        if case == "noise":
            method, velocity, noise = "euler", None, 0.3
        else:
            arr = np.random.default_rng(0).normal(0, 0.2, (41, 5, 2))
            method, velocity, noise = "rk4", ArrayVelocity(arr, 0.1), 0.0
            velocity.prepare(4.0, 0.1, 5, 2, gen)
        runs.append(fastpath.run_plan(plan, u0, 40, 0.1, method, 7, 10, 1e6, velocity, noise,
                                      gen, threads=threads))
    assert fastpath._blocks(5, 1, 2) == [(0, 2), (2, 5)]
    for saved, fail, _ in runs[1:]:
        assert torch.equal(saved, runs[0][0]) and fail is None and runs[0][1] is None
    assert float((runs[0][0][-1] - runs[0][0][0]).abs().max()) > 0.1  # the states moved
    # one state diverges, in the second block: both report the same step and state
    big = u0.clone()
    big[4] *= 1e7
    one = fastpath.run_plan(plan, big, 40, 0.1, "euler", 7, 10, 1e6, None, 0.0, None, threads=1)
    two = fastpath.run_plan(plan, big, 40, 0.1, "euler", 7, 10, 1e6, None, 0.0, None, threads=2)
    assert one[1] == two[1] and one[1] is not None and torch.equal(one[2], two[2])


@pytest.mark.parametrize("backend", ["compiled", "torch"])
def test_range_check_names_time_step_and_dt(backend):
    if backend == "compiled" and not fastpath.AVAILABLE:
        pytest.skip("numba is not installed")
    g = Ring(32)
    act = Logistic()
    m = TargetManifold.bump(g, act)
    # a dense interaction with eigenvalue 3: Euler with dt = 2.5 amplifies by 1.5 per step
    energy = QuadraticEnergy(g, 3.0 * torch.eye(32, dtype=torch.float64))
    net = HopfieldNetwork(g, Logistic(), energy, 0.0, 1.0, None, m)
    u0 = m.u_star(torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(NonFiniteStateError) as info:
        simulate(net, u0, 2500.0, 2.5, method="euler", check_every=10, backend=backend)
    err = info.value
    assert err.step % 10 == 0 and err.time == pytest.approx(err.step * 2.5)
    assert 1e6 < err.value < math.inf
    assert "dt (now 2.5)" in str(err) and "method=" in str(err) and f"step {err.step}" in str(err)
    # the same run with a stable step stays in range (the check is not always failing)
    simulate(net, u0, 100.0, 0.1, method="euler", backend=backend, save_every=1000)


def test_cli_divergence_exits_1(tmp_path):
    from neurodyn.fitting.core import FitConfig, fit
    from neurodyn.io import save_model

    save_model(fit(FitConfig(n=32, steps=20, seed=0), progress=False).network,
               tmp_path / "m" / "model.pt")
    proc = subprocess.run(
        [sys.executable, "-m", "neurodyn.cli", "simulate", "--model", tmp_path / "m", "--out",
         tmp_path / "sim", "--method", "euler", "--dt", "10", "--duration", "1000"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "diverged" in proc.stderr and "dt (now 10)" in proc.stderr and "step" in proc.stderr


@needs_numba
def test_plan_follows_parameter_changes():
    net = _network(Ring(32), "learned", Logistic())
    u0 = _start(net, 1)
    a = simulate(net, u0, 2.0, 0.1, backend="compiled")
    assert fastpath.plan_for(net)[0] is fastpath.plan_for(net)[0]  # reused
    with torch.no_grad():
        net.energy_fn.coef.mul_(0.5)
    b = simulate(net, u0, 2.0, 0.1, backend="compiled")
    c = simulate(net, u0, 2.0, 0.1, backend="torch")
    assert float((b.u - c.u).abs().max()) < 1e-10 and float((a.u - b.u).abs().max()) > 1e-6


def _seal_network(g, act, seed=0, transport=True, variable="power"):
    """A SEAL energy with every part (spectral, pointwise, phase locking) non-trivial."""
    from neurodyn.energies import SealEnergy

    gen = torch.Generator().manual_seed(seed)
    m = TargetManifold.bump(g, act) if isinstance(act, Logistic) else None
    target = m.u0 if m is not None else 0.8 * torch.cos(g.coords()[0])
    e = SealEnergy(g, act, target, bias=0.2, phaselock=True, variable=variable)
    with torch.no_grad():
        for part in (e.pointwise, e.phaselock, e.spectral):
            part.coef.normal_(0, 0.3, generator=gen)
    tr = Transport.fit(g, target, 1.0, act) if transport else None
    net = HopfieldNetwork(g, act, e, 0.2, 1.0, tr, m)
    u0 = target.expand((3,) + g.shape) + 0.3 * torch.randn((3,) + g.shape, generator=gen,
                                                           dtype=torch.float64)
    return net, u0


SEAL_CASES = {"ring": (lambda: Ring(48), Logistic(1.5)),
              "hex": (lambda: Torus(12, 10, "hex"), Logistic()),
              "square-tanh": (lambda: Torus(8, 8, "square"), Tanh(0.8))}


@needs_numba
@pytest.mark.parametrize("case", sorted(SEAL_CASES))
@pytest.mark.parametrize("method", ["euler", "rk4"])
@pytest.mark.parametrize("variable", ["amplitude", "power"])
def test_compiled_seal_energy_matches_torchdiffeq(case, method, variable):
    g, act = SEAL_CASES[case][0](), SEAL_CASES[case][1]
    net, u0 = _seal_network(g, act, variable=variable)
    plan, reason = fastpath.plan_for(net)
    assert plan is not None, reason
    assert plan.pw.size == 4 and plan.lk_c.size >= 1  # pointwise and locking terms compiled
    v = Constant(0.2) if g.dim == 1 else Constant((0.2, -0.1))
    a, b = _both(net, u0, duration=6.0, dt=0.1, method=method, velocity=v, save_every=4)
    assert float((a.u - b.u).abs().max()) < 1e-10
    assert float((a.u[-1] - a.u[0]).abs().max()) > 0.1
    # each part matters: without the locking terms the compiled trajectory is another one
    with torch.no_grad():
        net.energy_fn.phaselock.coef.zero_()
    c = simulate(net, u0, 6.0, 0.1, method=method, velocity=v, save_every=4,
                 backend="compiled", diagnostics=False)
    assert float((a.u - c.u).abs().max()) > 1e-6


@needs_numba
@pytest.mark.parametrize("case", sorted(SEAL_CASES))
@pytest.mark.parametrize("variable", ["amplitude", "power"])
def test_compiled_seal_energy_does_not_increase(case, variable):
    g, act = SEAL_CASES[case][0](), SEAL_CASES[case][1]
    net, u0 = _seal_network(g, act, seed=3, transport=False, variable=variable)
    tr = simulate(net, u0, 20.0, 0.05, method="rk4", save_every=5, backend="compiled")
    assert tr.backend == "compiled"
    e = tr.energy.to(torch.float64)  # (T, B)
    assert float((e[1:] - e[:-1]).max()) <= 1e-10 * float(e.abs().max())
    assert float((e[0] - e[-1]).min()) > 1e-3  # it did descend


@needs_numba
@pytest.mark.parametrize("geometry", ["ring", "torus"])
def test_default_fit_runs_compiled(geometry):
    from neurodyn.fitting.core import FitConfig, fit

    n = 32 if geometry == "ring" else (12, 12)
    net = fit(FitConfig(geometry=geometry, n=n, steps=5, seed=0), progress=False).network
    assert net.energy_fn.options["variable"] == "amplitude"  # the default family
    assert fastpath.plan_for(net)[0].kind == 3
    plan, reason = fastpath.plan_for(net)
    assert plan is not None, reason
    assert (plan.lk_c.size > 0) == (geometry == "torus")  # the torus fit locks phases
    gen = torch.Generator().manual_seed(0)
    u0 = net.manifold.u_star(net.geometry.random_phase(2, gen))
    u0 = u0 + 0.2 * torch.randn(u0.shape, generator=gen, dtype=torch.float64)
    a, b = _both(net, u0, duration=5.0, dt=0.1, method="rk4", save_every=10)
    assert float((a.u - b.u).abs().max()) < 1e-10
    assert simulate(net, u0, 1.0, 0.1).backend == "compiled"  # the default backend


def test_seal_with_a_neural_term_takes_the_torch_path():
    from neurodyn.energies import SealEnergy

    g, act = Ring(16), Logistic()
    m = TargetManifold.bump(g, act)
    e = SealEnergy(g, act, m.u0, mlp_hidden=4, curvature_bandwidth=0)
    net = HopfieldNetwork(g, act, e, 0.0, 1.0, None, m)
    plan, reason = fastpath.plan_for(net)
    assert plan is None and "neural term" in reason
    assert simulate(net, m.u_star(torch.zeros(1, 1, dtype=torch.float64)), 0.5, 0.1).backend \
        == "torch"
