import math

import pytest
import torch

from neurodyn.geometry.populations import Ring, Torus, make_geometry, wrap_angle


def test_ring_coordinates_have_no_duplicate_neuron():
    g = Ring(16)
    th = g.coords()[0]
    assert th[0] == 0 and math.isclose(float(th[-1]), 2 * math.pi * 15 / 16)
    assert torch.unique(torch.round(torch.cos(th) * 1e12)).numel() < 16  # symmetric pairs
    assert len(set((round(math.cos(t), 9), round(math.sin(t), 9)) for t in th.tolist())) == 16


@pytest.mark.parametrize("geom", [Ring(32), Torus(12, 16, "hex"), Torus(16, 16, "square")])
def test_dft_roundtrip_and_parseval(geom):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((3,) + geom.shape, dtype=torch.float64, generator=gen)
    z = geom.dft(x)
    assert torch.allclose(geom.idft(z), x, atol=1e-12)
    m = geom.multiplicity()
    lhs = (x**2).flatten(1).sum(-1)
    rhs = geom.size * (m * (z.real**2 + z.imag**2)).flatten(1).sum(-1)
    assert torch.allclose(lhs, rhs, rtol=1e-12)


def test_ring_dft_matches_definition():
    g = Ring(12)
    x = torch.randn(12, dtype=torch.float64)
    th = g.coords()[0]
    k = 3
    direct = (x * torch.exp(-1j * k * th)).sum() / 12
    assert torch.allclose(g.dft(x)[k], direct, atol=1e-14)


def test_shift_is_exact_for_band_limited_signals_and_decodes():
    g = Ring(64)
    th = g.coords()[0]
    x = torch.cos(th) + 0.3 * torch.cos(2 * th)
    psi = 0.7123
    shifted = g.shift(x, psi)
    expect = torch.cos(th - psi) + 0.3 * torch.cos(2 * (th - psi))
    assert torch.allclose(shifted, expect, atol=1e-12)
    assert math.isclose(float(g.decode(torch.exp(torch.cos(th - psi)))[0]), psi, rel_tol=1e-12)


def test_derivative_of_cosine():
    g = Torus(16, 16, "hex")
    th = g.coords()
    x = torch.cos(th[0] - th[1])
    assert torch.allclose(g.derivative(x, 0), -torch.sin(th[0] - th[1]), atol=1e-12)
    assert torch.allclose(g.derivative(x, 1), torch.sin(th[0] - th[1]), atol=1e-12)


def test_torus_shift_and_decode_two_dimensional():
    g = Torus(16, 16, "square")
    th = g.coords()
    x = torch.exp(torch.cos(th[0]) + torch.cos(th[1]))
    psi = torch.tensor([1.3, 4.1], dtype=torch.float64)
    assert torch.allclose(g.decode(g.shift(x, psi)), psi, atol=1e-9)


def test_hex_neuron_distance_uses_sixty_degree_axes():
    g = Torus(12, 12, "hex")
    d = g.neuron_distance()
    step = 2 * math.pi / 12
    # (1, 0), (0, 1) and (1, -1) are nearest neighbours on a hex sheet; (1, 1) is sqrt(3) away
    assert math.isclose(float(d[1, 0]), step, rel_tol=1e-12)
    assert math.isclose(float(d[1, 11]), step, rel_tol=1e-12)
    assert math.isclose(float(d[1, 1]), math.sqrt(3) * step, rel_tol=1e-12)


def test_geometry_errors_name_the_parameter():
    with pytest.raises(ValueError, match="at least 8"):
        Ring(4)
    with pytest.raises(ValueError, match="lattice='tri'"):
        Torus(16, 16, "tri")
    with pytest.raises(ValueError, match="kind='sphere'"):
        make_geometry({"kind": "sphere"})
    with pytest.raises(ValueError, match="unknown keys"):
        make_geometry({"kind": "ring", "n": 16, "m": 2})
    with pytest.raises(ValueError, match="does not end with"):
        Ring(16).check_state(torch.zeros(3, 15))
    with pytest.raises(ValueError, match="non-finite"):
        Ring(16).check_state(torch.full((16,), float("nan")))


def test_wrap_angle_range():
    x = torch.linspace(-20, 20, 101)
    w = wrap_angle(x)
    assert (w >= -math.pi).all() and (w < math.pi).all()
    assert torch.allclose(torch.cos(w), torch.cos(x), atol=1e-6)
