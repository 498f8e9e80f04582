"""The fit's checks: measured against the network's own attractor (and its gap to the target),
the resting correlation started away from the target, and the profiles refused before ``--out``
(more than one bump, band-edge content that pins the bump to the lattice)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch

from neurodyn.analysis.attraction import attraction_report, own_attractor
from neurodyn.cli import main
from neurodyn.dynamics.simulation import simulate
from neurodyn.experiments.capacity import resting_correlation
from neurodyn.experiments.seal import fourier_construction_network
from neurodyn.fitting.config import FitConfig
from neurodyn.fitting.plan import build_manifold, build_network, fittable_manifold
from neurodyn.fitting.profiles import band_edge_content, count_bumps, max_edge_content
from neurodyn.geometry.populations import Ring, Torus

torch.set_num_threads(1)

N = 128
THETA = 2 * np.pi * np.arange(N) / N
DIST = np.minimum(THETA, 2 * np.pi - THETA)


def gaussian(sigma: float, centre: float = 0.0) -> np.ndarray:
    """Rates ``0.05 + 0.9 exp(-d^2 / (2 sigma^2))`` on the 128-ring, ``d`` the angle to
    ``centre``."""
    d = np.abs(np.angle(np.exp(1j * (THETA - centre))))
    return 0.05 + 0.9 * np.exp(-d**2 / (2 * sigma**2))


def test_band_edge_content_and_bump_count_closed_forms():
    ring = Ring(N)
    th = ring.coords()[0]
    assert band_edge_content(ring, torch.cos(th)) < 1e-15
    for eps in (1e-5, 3e-3):  # a mode at 60/64 of the band: content eps exactly
        got = band_edge_content(ring, torch.cos(th) + eps * torch.cos(60 * th))
        assert abs(got - eps) < 1e-12
    assert band_edge_content(ring, torch.cos(th) + 0.1 * torch.cos(40 * th)) < 1e-15  # < 3/4
    assert [count_bumps(ring, torch.cos(k * (th - 0.4))) for k in (1, 2, 3)] == [1, 2, 3]
    torus = Torus(16, 16, "hex")
    t1, t2 = torus.coords()
    hexbump = torch.cos(t1) + torch.cos(t2) + torch.cos(t1 - t2)
    assert count_bumps(torus, hexbump.roll((5, 9), (0, 1))) == 1  # across the periodic edges
    assert count_bumps(torus, torch.cos(2 * t1) + 0.1 * torch.cos(t2)) == 2
    # the largest content accepted falls as 1 / n and 1 / sqrt(kappa)
    assert math.isclose(max_edge_content(Ring(64), 1.0), 2 * max_edge_content(ring, 1.0))
    assert math.isclose(max_edge_content(ring, 4.0), max_edge_content(ring, 1.0) / 2)


def _listing(path):
    return sorted((p, sorted(os.listdir(os.path.join(path, p))) if os.path.isdir(
        os.path.join(path, p)) else None) for p in os.listdir(path))


@pytest.mark.parametrize("name, text", [
    ("twobump", "2 bumps"),
    ("narrow", "band-edge content 0.035"),
])
def test_cli_refuses_unfittable_profiles_before_claiming_out(tmp_path, capsys, name, text):
    profiles = {"twobump": 0.05 + 0.9 * (np.exp(-DIST**2 / 0.5) + np.exp(
                    -(np.pi - DIST) ** 2 / 0.5)),
                "narrow": gaussian(4 / (2 * math.sqrt(2 * math.log(2))) * 2 * np.pi / N)}
    np.save(tmp_path / "p.npy", profiles[name])
    before = _listing(tmp_path)
    out = tmp_path / "run"
    code = main(["fit", "ring", "--n", str(N), "--out", str(out), "--profile",
                 str(tmp_path / "p.npy")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--profile" in err and text in err, err
    assert _listing(tmp_path) == before  # nothing written, no run folder claimed


def test_the_gaussian_bump_and_the_shipped_profiles_are_accepted():
    for kappa in (1.0, 3.0):  # the Gaussian of width 0.8 rad, on either side of its content
        cfg = FitConfig(n=N, profile=gaussian(0.8), kappa=kappa)
        m = fittable_manifold(cfg)
        assert 1e-6 < band_edge_content(m.geometry, m.u0) < max_edge_content(m.geometry, kappa)
    for geometry, n in (("ring", 128), ("torus", (32, 32))):
        for profile in ("von-mises:5", "flat-top:0.6", "asymmetric:0.5"):
            for kappa in (0.5, 2.0, 4.0):
                fittable_manifold(FitConfig(geometry=geometry, n=n, profile=profile,
                                            kappa=kappa))
    with pytest.raises(ValueError, match="band-edge content"):  # too narrow for 32 neurons
        fittable_manifold(FitConfig(n=32, profile="von-mises:300"))


@pytest.fixture(scope="module")
def offset_network():
    """The exact template network of a von Mises bump, its template moved by a smooth bump of
    relative size 1e-5: its attractor is ``u* + delta`` exactly, off the target manifold."""
    kappa = 2.0
    cfg = FitConfig(n=64, profile="von-mises:2", kappa=kappa)
    m = build_manifold(cfg)
    net = build_network(cfg, m)
    th = m.geometry.coords()[0]
    delta = 1e-5 * m.norm / 8 * torch.cos(2 * th - 1.0)
    with torch.no_grad():
        net.energy_fn.template.copy_(kappa * (m.u0 + delta))
        net.energy_fn.leak.fill_(kappa - 1)
    return net, m.u0 + delta, kappa


def test_decay_is_measured_against_the_networks_own_attractor(offset_network):
    net, rest, kappa = offset_network
    own = own_attractor(net, kappa)
    expected = float(net.manifold.distance(rest).distance)
    assert 1e-7 < expected and abs(own.gap - expected) < 1e-3 * expected
    assert own.residual < 1e-10
    report = attraction_report(net, kappa, 0.05)
    assert report.failed == [], report.failed
    assert report.decay_worst_relative < 1e-3
    assert report.to_dict()["attractor"]["gap"] == own.gap
    # control: measured against the target, the same network reads a false negative
    target = attraction_report(net, kappa, 0.05, own=False)
    assert any(f.startswith("decay") for f in target.failed)
    assert target.decay_worst_relative > 0.15


def test_resting_correlation_reads_low_where_the_target_is_only_a_fixed_point():
    cfg = FitConfig(n=64, profile="flat-top:1.5", a=-4.0, c=8.0)
    net = fourier_construction_network(build_manifold(cfg))
    m = net.manifold
    with torch.no_grad():  # every translate of the target is a fixed point ...
        assert float((net.field(m.u0)).norm() / m.norm) < 1e-9
    tr = simulate(net, m.u0[None], 10.0, 0.1, method="rk4", backend="torch", save_every=100,
                  diagnostics=False)
    r, rs = net.activation(tr.u[-1, 0]), m.r_star(torch.zeros(1, dtype=torch.float64))
    r, rs = r - r.mean(), rs - rs.mean()
    kept = float((r * rs).sum() / (r.norm() * rs.norm()))
    assert kept > 0.99999  # ... which a start on it keeps (what the old reading measured)
    assert resting_correlation(net) < 0.5  # but a start elsewhere does not reach it
    exact = build_network(FitConfig(n=64, profile="flat-top:1.5", kappa=2.0), m)
    with torch.no_grad():
        exact.energy_fn.template.copy_(2.0 * m.u0)
        exact.energy_fn.leak.fill_(1.0)
    assert resting_correlation(exact) > 0.9999  # the attractor of that bump reads high


@pytest.mark.slow
@pytest.mark.parametrize("kappa", ["1", "3"])
def test_the_gaussian_bump_fits(tmp_path, kappa):
    np.save(tmp_path / "gauss.npy", gaussian(0.8))
    out = tmp_path / "run"
    assert main(["fit", "ring", "--n", str(N), "--kappa", kappa, "--out", str(out),
                 "--profile", str(tmp_path / "gauss.npy")]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    att = metrics["attraction"]
    assert 0 < att["attractor"]["gap"] < 1e-4 and att["normal_spectrum"]["n_zero"] == 1
    assert att["decay_worst_relative"] < 0.01 and att["failed"] == []
    assert metrics["profile"]["rate_correlation"] > 0.9999
    assert (out / "model.pt").exists()
