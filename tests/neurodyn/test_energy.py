"""Energy families: closed forms, gradients, and energy descent for every family."""

import pytest
import torch

from neurodyn.activation import Logistic, Tanh, make_activation
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import (
    FourierQuadraticEnergy,
    InteractionEnergy,
    LearnedFourierEnergy,
    MLPEnergy,
    ModuleEnergy,
    QuadraticEnergy,
    make_energy,
)
from neurodyn.geometry.populations import Ring, Torus
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork


def _gen(seed):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("act", [Logistic(1.3, 2.0), Tanh(0.7)])
def test_activation_integral_is_antiderivative_of_inverse(act):
    u = torch.linspace(-4, 4, 41, dtype=torch.float64, requires_grad=True)
    g = act.integral(u)
    (dg,) = torch.autograd.grad(g.sum(), u)
    # dG/du = phi^{-1}(phi(u)) phi'(u) = u phi'(u)
    assert torch.allclose(dg, u.detach() * act.derivative(u.detach()), atol=1e-10)


def test_activation_integral_zero_at_zero_rate():
    act = Logistic(1.0, 1.0)
    assert abs(float(act.integral(torch.tensor(-60.0, dtype=torch.float64)))) < 1e-20
    assert float(Tanh(1.0).integral(torch.tensor(0.0, dtype=torch.float64))) == 0.0


def test_make_activation_rejects_unknown():
    with pytest.raises(ValueError,
                       match="activation='relu' is not allowed; choose one of logistic, tanh"):
        make_activation({"name": "relu"})
    with pytest.raises(ValueError, match="unknown keys"):
        make_activation({"name": "logistic", "slope": 1})
    with pytest.raises(ValueError, match="gain"):
        Logistic(gain=-1.0)


def test_fourier_energy_equals_dense_circulant():
    g = Ring(32)
    w = torch.randn(g.spectral_shape, dtype=torch.float64, generator=_gen(1))
    e = FourierQuadraticEnergy(g, w)
    dense = QuadraticEnergy(g, e.dense())
    r = torch.rand(4, 32, dtype=torch.float64, generator=_gen(2))
    assert torch.allclose(e(r), dense(r), atol=1e-12)
    assert torch.allclose(e.grad(r), dense.grad(r), atol=1e-12)
    # the circulant's eigenvalues are the spectrum
    ev = torch.linalg.eigvalsh(e.dense())
    full = torch.cat([w, w[1:-1]])
    assert torch.allclose(ev.sort().values, full.sort().values, atol=1e-10)


def test_circulant_constructor_matches_kernel():
    g = Ring(16)
    e = QuadraticEnergy.circulant(g, lambda d: torch.cos(d[0]))
    th = g.coords()[0]
    assert torch.allclose(e.weights[3], torch.cos(th - th[3]), atol=1e-12)


@pytest.mark.parametrize("geom", [Ring(32), Torus(8, 10, "hex")])
def test_learned_energy_gradient_and_hvp_match_autograd(geom):
    e = LearnedFourierEnergy(geom, bandwidth=3, degree=3)
    with torch.no_grad():
        e.coef.normal_(generator=_gen(3))
    r = torch.rand((3,) + geom.shape, dtype=torch.float64, generator=_gen(4))
    v = torch.randn((3,) + geom.shape, dtype=torch.float64, generator=_gen(5))
    assert torch.allclose(e.grad(r), InteractionEnergy.grad(e, r), atol=1e-12)
    assert torch.allclose(e.hvp(r, v), InteractionEnergy.hvp(e, r, v), atol=1e-11)


def test_learned_energy_is_rotation_invariant():
    g = Ring(64)
    e = LearnedFourierEnergy(g, bandwidth=4, degree=3, cross_hidden=8, seed=1)
    with torch.no_grad():
        e.coef.normal_(generator=_gen(6))
    th = g.coords()[0]
    r = torch.sigmoid(-2 + 4 * torch.cos(th))
    shifted = g.shift(r, torch.linspace(0, 6, 7, dtype=torch.float64).unsqueeze(-1))
    vals = e(shifted).detach()
    assert torch.allclose(vals, vals[0].expand_as(vals), atol=1e-9 * (1 + float(vals.abs().max())))


def _families(geom, seed):
    gen = _gen(seed)
    n = geom.size
    a = torch.randn(n, n, dtype=torch.float64, generator=gen) / n**0.5
    learned = LearnedFourierEnergy(geom, bandwidth=3, degree=3, cross_hidden=6, seed=seed)
    with torch.no_grad():
        learned.coef.normal_(generator=gen)
    mlp = MLPEnergy(geom, hidden=(32,), scale=2.0, seed=seed)
    module = ModuleEnergy(geom, torch.nn.Sequential(torch.nn.Flatten(-geom.dim), mlp.net,
                                                    torch.nn.Flatten(-2)))
    return {
        "quadratic": QuadraticEnergy(geom, 3 * (a + a.T)),
        "fourier": FourierQuadraticEnergy(geom, 5 * torch.randn(geom.spectral_shape,
                                                                dtype=torch.float64,
                                                                generator=gen)),
        "learned": learned,
        "mlp": mlp,
        "module": module,
    }


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("family", ["quadratic", "fourier", "learned", "mlp", "module"])
def test_energy_descent_for_every_family(family, seed):
    geom = Ring(16) if seed % 2 == 0 else Torus(8, 8, "hex")
    energy = _families(geom, seed)[family]
    act = Logistic(1.0 + 0.5 * seed, 1.0)
    net = HopfieldNetwork(geom, act, energy, bias=0.3 * (seed - 2), tau=1.0)
    u0 = 2 * torch.randn((8,) + geom.shape, dtype=torch.float64, generator=_gen(100 + seed))
    tr = simulate(net, u0, duration=10.0, dt=0.02, method="rk4", save_every=5)
    inc = tr.energy[1:] - tr.energy[:-1]
    tol = 1e-10 * (1 + tr.energy.abs().max())
    assert float(inc.max()) <= tol, f"energy rose by {float(inc.max())}"
    # and something actually happened: the energy fell
    assert float((tr.energy[0] - tr.energy[-1]).min()) > 0


def test_energy_rate_matches_closed_form():
    geom = Ring(16)
    energy = _families(geom, 3)["learned"]
    act = Logistic()
    net = HopfieldNetwork(geom, act, energy, bias=0.1, tau=2.0)
    u = torch.randn(4, 16, dtype=torch.float64, generator=_gen(9)).requires_grad_(True)
    e = net.energy(u)
    (de_du,) = torch.autograd.grad(e.sum(), u)
    du = net.field(u.detach())
    rate = (de_du * du).sum(-1)
    expect = -net.tau * (act.derivative(u.detach()) * du**2).sum(-1)
    assert torch.allclose(rate, expect, rtol=1e-9, atol=1e-12)


def test_energy_config_roundtrip():
    g = Ring(16)
    for name, e in _families(g, 0).items():
        if name == "module":
            with pytest.raises(TypeError, match="cannot be rebuilt"):
                e.config()
            continue
        e2 = make_energy(e.config(), g, e.state_dict())
        r = torch.rand(2, 16, dtype=torch.float64)
        assert torch.allclose(e(r), e2(r))
    with pytest.raises(ValueError, match="family='hopfield'"):
        make_energy({"family": "hopfield"}, g)


def test_quadratic_energy_validates_weights():
    g = Ring(8)
    with pytest.raises(ValueError, match="symmetric"):
        QuadraticEnergy(g, torch.triu(torch.ones(8, 8)))
    with pytest.raises(ValueError, match="shape"):
        QuadraticEnergy(g, torch.ones(7, 7))


def test_fourier_construction_makes_target_a_fixed_point():
    g = Ring(64)
    act = Logistic()
    m = TargetManifold.bump(g, act, -2.0, 4.0)
    net = HopfieldNetwork(g, act, FourierQuadraticEnergy(g, m.fourier_construction(0.5)),
                          bias=0.5, manifold=m)
    psi = torch.tensor([[0.3], [2.0]], dtype=torch.float64)
    res = net.field(m.u_star(psi))
    assert float(res.abs().max()) < 1e-9


def test_a_banded_family_must_define_its_coefficients_and_band_functions():
    """The banded base class is abstract: a family missing its hooks cannot be built."""
    from neurodyn.energies.banded import BandedSpectralEnergy

    class Incomplete(BandedSpectralEnergy):
        def effective_coef(self):
            return None

    with pytest.raises(TypeError, match="_band_functions"):
        Incomplete.__new__(Incomplete)
