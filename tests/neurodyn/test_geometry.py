import math

import numpy as np
import pytest
import torch

from neurodyn.fitting.core import FitConfig
from neurodyn.fitting.plan import build_manifold
from neurodyn.geometry.populations import Ring, Torus, make_geometry, sheet_corners, wrap_angle
from neurodyn.spatial.phases import wave_vectors


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


def test_hex_neuron_distance_uses_axes_at_120_degrees():
    g = Torus(12, 12, "hex")
    d = g.neuron_distance()
    step = 2 * math.pi / 12
    # with e2 at 120 degrees to e1, (1, 0), (0, 1) and (1, 1) are nearest neighbours;
    # (1, -1) = e1 - e2 is sqrt(3) away
    assert math.isclose(float(d[1, 0]), step, rel_tol=1e-12)
    assert math.isclose(float(d[0, 1]), step, rel_tol=1e-12)
    assert math.isclose(float(d[1, 1]), step, rel_tol=1e-12)
    assert math.isclose(float(d[1, 11]), math.sqrt(3) * step, rel_tol=1e-12)


@pytest.mark.parametrize("c, equal", [(-0.5, True), (0.5, False)])
def test_hex_triad_is_the_short_dual_triad_of_the_metric(c, equal):
    # reciprocal length^2 of mode k is k^T G^-1 k; the DFT triad needs the axes at 120 degrees
    # (control: the axes at 60 degrees make (1, -1) three times longer than (1, 0))
    g = Torus(16, 16, "hex")
    gram = g.metric() if c < 0 else torch.tensor([[1.0, c], [c, 1.0]], dtype=torch.float64)
    ginv = torch.linalg.inv(gram)
    lengths = [float(torch.tensor(k, dtype=torch.float64) @ ginv
                     @ torch.tensor(k, dtype=torch.float64)) for k in g.fundamental_modes()]
    assert (max(lengths) - min(lengths) <= 1e-12) == equal
    if not equal:
        assert math.isclose(lengths[2] / lengths[0], 3.0, rel_tol=1e-12)


def test_sheet_corners_and_offsets_share_the_metric():
    g = Torus(12, 12, "hex")
    x, y = sheet_corners(g.shape, "hex")
    centres = np.stack([(x[:-1, :-1] + x[1:, 1:]) / 2, (y[:-1, :-1] + y[1:, 1:]) / 2])
    e1, e2 = centres[:, 1, 0] - centres[:, 0, 0], centres[:, 0, 1] - centres[:, 0, 0]
    gram = np.array([[e1 @ e1, e1 @ e2], [e2 @ e1, e2 @ e2]])
    assert np.allclose(gram, g.metric().numpy(), atol=1e-12)
    p = g.sheet_offsets().numpy() * 12 / (2 * math.pi)  # neuron spacings
    assert np.allclose(p[:, 1, 0], e1, atol=1e-12) and np.allclose(p[:, 0, 1], e2, atol=1e-12)


def test_hex_bump_is_isotropic_on_the_sheet():
    # the resting bump's second moment on the drawn sheet: round with the axes at 120 degrees
    g = Torus(32, 32, "hex")
    r = build_manifold(FitConfig(geometry="torus", n=(32, 32))).r_star(
        torch.zeros(2, dtype=torch.float64))
    w = (r - r.min()).reshape(-1)
    p = g.sheet_offsets().reshape(2, -1)
    q = p - (w * p).sum(1, keepdim=True) / w.sum()
    ev = torch.linalg.eigvalsh((w * q) @ q.T)
    assert float(ev[-1] / ev[0]) <= 1.01


def test_grid_phases_map_space_to_the_sheet_by_a_similarity():
    # physical position x has lattice phases psi = K x; on the sheet the neuron preferring psi
    # sits at psi_1 e1 + psi_2 e2: the composite map must be a rotation times a scale
    g = Torus(16, 16, "hex")
    k = wave_vectors(0.5, 0.3, "hex")[:2]  # (2, 2), rows k1, k2
    axes = np.array([[1.0, -0.5], [0.0, math.sqrt(3) / 2]])  # columns e1, e2 of the metric
    assert np.allclose(axes.T @ axes, g.metric().numpy(), atol=1e-12)
    a = axes @ k
    gram = a.T @ a
    assert np.allclose(gram, gram[0, 0] * np.eye(2), atol=1e-9 * gram[0, 0])
    # control: the axes at 60 degrees shear space
    bad = np.array([[1.0, 0.5], [0.0, math.sqrt(3) / 2]]) @ k
    assert not np.allclose(bad.T @ bad, (bad.T @ bad)[0, 0] * np.eye(2), rtol=0.1)


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
