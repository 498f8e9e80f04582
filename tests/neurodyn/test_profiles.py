"""Target profiles and the learned-template energy family.

Closed forms of the template energy (gradient, Hessian, fixed points, normal spectrum), the
profiles and their checks (Python and ``neurodyn fit --profile``), a small fit that learns the
template from its samples (with the untrained template as the control), saving and loading,
and (slow) the capacity curve on the 128-neuron ring with its ablation and the per-mode
control.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neurodyn.activation import Logistic
from neurodyn.analysis.attraction import field_energy_error, normal_spectrum
from neurodyn.analysis.diagnostics import energy_audit
from neurodyn.cli import main
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies.template import TemplateEnergy, template_basis
from neurodyn.experiments.capacity import capacity_study, resting_correlation
from neurodyn.fitting import template as TF
from neurodyn.fitting import template_jacobian as TJ
from neurodyn.fitting.config import FitConfig
from neurodyn.fitting.core import fit
from neurodyn.fitting.plan import build_geometry, build_manifold, build_network
from neurodyn.fitting.profiles import profile_potentials
from neurodyn.geometry.populations import Ring, Torus
from neurodyn.io import load_model, save_model
from neurodyn.manifold import probe_directions

torch.set_num_threads(1)


def exact_network(profile, kappa, geometry="ring", n=64):
    """A template network with the closed-form solution written in (no fit)."""
    cfg = FitConfig(geometry=geometry, n=n, profile=profile, kappa=kappa)
    m = build_manifold(cfg, build_geometry(cfg))
    net = build_network(cfg, m)
    with torch.no_grad():
        net.energy_fn.template.copy_(kappa * m.u0)
        net.energy_fn.leak.fill_(kappa - 1)
    return net


@pytest.mark.parametrize("geometry", [Ring(24), Torus(8, 10)])
def test_gradient_and_hessian_match_autograd(geometry):
    act = Logistic()
    gen = torch.Generator().manual_seed(0)
    basis = template_basis(geometry, min(geometry.shape) // 2 - 1)  # band-limited, no Nyquist
    w = 3 * torch.einsum("p,p...->...", torch.randn(basis.shape[0], generator=gen,
                                                      dtype=torch.float64), basis)
    e = TemplateEnergy(geometry, act, w, leak=0.7, bias=0.3)
    r = act(torch.randn((3,) + geometry.shape, generator=gen, dtype=torch.float64))
    v = torch.randn(r.shape, generator=gen, dtype=torch.float64)
    x = r.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(e(x).sum(), x)
    assert torch.allclose(e.grad(r), auto, atol=1e-9)
    h = 1e-6  # the closed-form Hessian against central differences of the gradient
    fd = (e.grad(r + h * v) - e.grad(r - h * v)) / (2 * h)
    assert torch.allclose(e.hvp(r, v), fd, atol=1e-5 * float(fd.abs().max()))
    assert not torch.allclose(e.hvp(r, v), 0.7 * v / act.derivative(act.inverse(r)))


@pytest.mark.parametrize("profile", ["von-mises:5", "flat-top:0.6", "asymmetric:0.5"])
def test_closed_form_is_exact_and_the_zeroed_template_is_not(profile):
    net = exact_network(profile, 2.0, n=128)
    ns = normal_spectrum(net, 2.0)
    assert ns.worst_relative < 1e-10
    fe = field_energy_error(net, 2.0, count=8)
    assert fe.worst_field() < 1e-8
    with torch.no_grad():
        net.energy_fn.template.zero_()
    assert field_energy_error(net, 2.0, count=8).worst_field() > 1.0


def test_profiles_have_their_shapes():
    act, ring = Logistic(), Ring(128)
    th = ring.coords()[0]
    vm = profile_potentials(ring, act, -2.0, 4.0, "von-mises:5")
    expect = torch.exp(5 * (torch.cos(th) - 1))
    expect = -2 + 4 * (-1 + 2 * (expect - np.exp(-10)) / (1 - np.exp(-10)))
    assert torch.allclose(vm, expect, atol=1e-12)
    flat = profile_potentials(ring, act, -2.0, 4.0, "flat-top:0.6")  # u* in [-6, 2]
    dist = torch.minimum(th, 2 * np.pi - th)
    assert flat[dist <= 0.2].min() > 1.85 and flat[dist >= 0.8].max() < -5.4
    asym = profile_potentials(ring, act, -2.0, 4.0, "asymmetric:0.5")
    assert int(asym.argmax()) == 0 and float((asym - asym.roll(1).flip(0)).abs().max()) > 0.5
    torus = profile_potentials(Torus(32, 32), act, -2.0, 4.0, "von-mises:5")
    assert int(torus.argmax()) == 0 and abs(float(torus.max()) - 2) < 1e-12


@pytest.mark.parametrize("spec, text", [
    ("gauss:2", "choose cosine"), ("von-mises:-1", "concentration"),
    ("flat-top:4", "half-width"), ("asymmetric:1", "skew"), ("von-mises:x", "not a number")])
def test_bad_profile_names_are_refused(spec, text):
    with pytest.raises(ValueError, match=text):
        FitConfig(profile=spec)


def test_family_follows_the_profile():
    assert FitConfig().family == "seal"
    assert FitConfig(profile="von-mises:5").family == "template"
    assert FitConfig(profile="von-mises:5", family="seal").family == "seal"
    arr = FitConfig(n=8, profile=np.full(8, 0.5) + 0.1 * np.cos(np.arange(8)))
    assert arr.family == "template" and isinstance(arr.profile, tuple)


def test_fit_learns_the_template_from_its_samples():
    cfg = FitConfig(n=32, profile="von-mises:2", kappa=2.0, bandwidth=8, steps=1, batch=4)
    untrained = build_network(cfg, build_manifold(cfg))
    with torch.no_grad():  # the fit's starting point: leak 0, a plain cosine template
        untrained.energy_fn.template.copy_(torch.cos(untrained.geometry.coords()[0]))
    before = field_energy_error(untrained, 2.0, count=8).worst_field()
    net = fit(cfg).network
    e = net.energy_fn
    assert abs(float(e.leak) - 1.0) < 1e-3  # kappa - 1, learned
    assert normal_spectrum(net, 2.0).worst_relative < 1e-3
    after = field_energy_error(net, 2.0, count=8).worst_field()
    assert after < 0.02 < 0.5 < before
    assert resting_correlation(net, duration=10.0, dt=0.1) > 0.9999
    # the learned template is a translate of kappa u*, found from the residuals
    g, m = net.geometry, net.manifold
    over = torch.stack([torch.dot(e.template, g.shift(2.0 * m.u0, torch.tensor([p])))
                        for p in np.linspace(0, 2 * np.pi, 256, endpoint=False)])
    assert float(over.max()) > 0.999 * float(e.template.norm() * 2.0 * m.u0.norm())
    # relaxation on the torch path descends the energy
    u0 = m.u_star(torch.zeros(2, 1)) + 0.3 * m.norm * probe_directions(
        m, torch.zeros(2, 1), "white", torch.Generator().manual_seed(1))
    tr = simulate(net, u0, 5.0, 0.05, method="rk4", save_every=5)
    assert energy_audit(tr).ok and float(tr.distance[-1].max()) < 1e-3


def test_torus_fit_learns_the_leak_coefficient():
    cfg = FitConfig(geometry="torus", n=(10, 10), profile="asymmetric:0.5", kappa=2.0,
                    bandwidth=2, steps=1, batch=1)
    net = fit(cfg).network
    assert net.energy_fn.harmonics == 2 and abs(float(net.energy_fn.leak) - 1.0) < 0.05
    assert normal_spectrum(net, 2.0, tol=0.05).worst_relative < 0.05


def _jacobian_setup(cfg):
    """A batch, its residuals as a function of theta, and a theta off the solution."""
    from neurodyn.fitting.core import _batch, _ResidualCall

    m = build_manifold(cfg)
    net = build_network(cfg, m)
    rows = TJ.basis_rows(net.geometry, template_basis(net.geometry, net.energy_fn.harmonics))
    b = _batch(m, cfg, 0)
    call = _ResidualCall(net)
    weights = {"linear": 1.0, "field": 0.1, "energy": 0.01}

    def flat(th):
        named = {"net.energy_fn.template": (th[1:] @ rows.b).reshape(net.geometry.shape),
                 "net.energy_fn.leak": th[0]}
        return TF._flat(torch.func.functional_call(call, named, (m, cfg, b), strict=False),
                        weights)

    gen = torch.Generator().manual_seed(3)
    theta = torch.cat([torch.tensor([0.3], dtype=torch.float64), rows.b @ m.u0.reshape(-1)])
    theta = theta + 0.05 * torch.randn(theta.shape, generator=gen, dtype=torch.float64)
    return net, m, rows, b, flat, theta, weights


JACOBIAN_CASES = [
    FitConfig(n=24, profile="von-mises:2", kappa=2.0, bandwidth=6, batch=2),
    FitConfig(geometry="torus", n=(8, 8), profile="asymmetric:0.5", kappa=0.5, bandwidth=2,
              batch=1)]


def _analytic(net, rows, theta, m, kappa, b, weights, r0):
    """The weighted Jacobian ``(1 + P, M)`` of :func:`residual_jacobian` (its blocks' rows) and
    the structured normal equations with ``J probe`` for a random probe."""
    blocks = list(TJ.residual_jacobian(net.energy_fn, rows, theta, m, kappa, b))
    dense = {k: [] for k in weights}
    for blk in blocks:
        term, jac = (blk.term, blk.dense(rows)) if isinstance(blk, TJ.Block) else blk[::2]
        dense[term].append(weights[term] ** 0.5 * jac)
    count, size = b["dirs"].shape[0], net.geometry.size
    sizes = {"linear": count * size, "field": count * size, "energy": count}
    probe = torch.randn(theta.shape, generator=torch.Generator().manual_seed(1),
                        dtype=torch.float64)
    a, g, jv = TJ.normal_equations(blocks, rows, weights, sizes, r0, probe)
    return torch.cat([torch.cat(dense[k]) for k in weights]).T, a, g, jv, probe


@pytest.mark.parametrize("cfg", JACOBIAN_CASES)
def test_analytic_jacobian_matches_central_differences(cfg):
    net, m, rows, b, flat, theta, weights = _jacobian_setup(cfg)
    with torch.no_grad():
        r0 = flat(theta)
        h, eye = 1e-5, torch.eye(theta.numel(), dtype=torch.float64)
        ref = torch.stack([(flat(theta + h * e) - flat(theta - h * e)) / (2 * h) for e in eye])
        jac, a, g, jv, probe = _analytic(net, rows, theta, m, cfg.kappa, b, weights, r0)
    assert jac.shape == ref.shape
    assert float((jac - ref).norm() / ref.norm()) < 1e-8
    # the normal equations by structure are those of the rows
    assert float((a - ref @ ref.T).norm() / a.norm()) < 1e-8
    assert float((g - ref @ r0).norm() / g.norm()) < 1e-8
    assert float((jv - probe @ ref).norm() / jv.norm()) < 1e-7
    # control: the Jacobian of other residuals (kappa off by half) is far from it
    with torch.no_grad():
        other, a_other, *_ = _analytic(net, rows, theta, m, 1.5 * cfg.kappa, b, weights, r0)
    assert float((other - ref).norm() / ref.norm()) > 0.1
    assert float((a_other - ref @ ref.T).norm() / a.norm()) > 0.1


@pytest.mark.slow
@pytest.mark.parametrize("cfg", JACOBIAN_CASES)
def test_jacobian_check_falls_back_to_forward_mode(cfg):
    net, m, rows, b, flat, theta, weights = _jacobian_setup(cfg)
    with torch.no_grad():
        r0 = flat(theta)
    a_ref, g_ref = TF._forward_normal(flat, theta, r0)
    normal = TJ.AnalyticNormal(net.energy_fn, rows, m, cfg.kappa, b, weights, 0,
                               TF._forward_normal)
    a, g = normal(flat, theta, r0)
    assert normal.checked is True
    assert float((a - a_ref).norm() / a_ref.norm()) < 1e-10
    assert float((g - g_ref).norm() / g_ref.norm()) < 1e-10
    # control: a Jacobian of other residuals (kappa off by half) fails the check, and the
    # fit then takes the forward-mode one
    wrong = TJ.AnalyticNormal(net.energy_fn, rows, m, 1.5 * cfg.kappa, b, weights, 0,
                              TF._forward_normal)
    a_w, _ = wrong(flat, theta, r0)
    assert wrong.checked is False and torch.equal(a_w, a_ref)


def test_trimming_leaves_out_only_outlying_perturbed_states():
    batch = {"psi": torch.zeros(3, 1), "dirs": torch.ones(3, 4),
             "u": torch.arange(3.0).reshape(3, 1).expand(3, 4), "near": torch.zeros(3, 1),
             "us_near": torch.zeros(3, 4), "bregman": torch.ones(3)}
    field = torch.tensor([1e-6, 2e-6, 1.0]).repeat_interleave(4)  # one state far off
    out = TF._trimmed(batch, field, 4)
    assert out["u"][:, 0].tolist() == [0.0, 1.0] and len(out["bregman"]) == 2
    assert out["dirs"].shape == (3, 4)  # the probes of the normal field stay
    # control: within TRIM times the median nothing is left out
    assert TF._trimmed(batch, torch.tensor([1e-6, 2e-6, 5e-5]).repeat_interleave(4), 4) is batch


def test_template_model_round_trip(tmp_path):
    net = exact_network("asymmetric:0.5", 2.0, n=32)
    save_model(net, tmp_path / "model.pt")
    back, _ = load_model(tmp_path)
    r = net.activation(net.manifold.u0 + 0.1)
    assert back.energy_fn.family == "template"
    assert torch.allclose(back.energy_fn.grad(r), net.energy_fn.grad(r), atol=1e-12)


def test_basis_counts():
    assert template_basis(Ring(128), 8).shape[0] == 17
    assert template_basis(Torus(16, 16), 3).shape[0] == 49
    with pytest.raises(ValueError, match="harmonics"):
        template_basis(Ring(16), 8)  # Nyquist


@pytest.mark.parametrize("make, text", [
    (lambda d: ["--profile", "blob"], "--profile"),
    (lambda d: ["--profile", str(d / "short.npy")], "shape (31,)"),
    (lambda d: ["--profile", str(d / "range.npy")], "outside the activation's open range"),
    (lambda d: ["--profile", str(d / "flat.npy")], "constant"),
    (lambda d: ["--profile", str(d / "missing.npy")], "does not exist"),
    (lambda d: ["--profile", "von-mises:5", "--bandwidth", "16"], "--bandwidth"),
])
def test_cli_refuses_bad_profiles(tmp_path, capsys, make, text):
    np.save(tmp_path / "short.npy", np.full(31, 0.5))
    np.save(tmp_path / "range.npy", np.linspace(0.0, 1.0, 32))
    np.save(tmp_path / "flat.npy", np.full(32, 0.5))
    out = tmp_path / "run"
    code = main(["fit", "ring", "--n", "32", "--out", str(out), *make(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and text in err and len(err.splitlines()) == 1
    assert "profile" in err or "bandwidth" in err
    assert not out.exists()


def test_cli_fits_a_file_profile_and_records_it(tmp_path):
    th = 2 * np.pi * np.arange(16) / 16
    rates = 0.1 + 0.6 * np.exp(1.5 * (np.cos(th - 0.3) - 1))  # peak off 0: any translate
    np.save(tmp_path / "rates.npy", rates)
    out = tmp_path / "run"
    assert main(["fit", "ring", "--n", "16", "--out", str(out), "--profile",
                 str(tmp_path / "rates.npy"), "--steps", "1", "--batch", "2", "--kappa",
                 "2", "--no-kappa-check"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["attraction"]["normal_spectrum"]["worst_relative"] < 0.05
    assert metrics["profile"]["family"] == "template"
    assert metrics["profile"]["name"].endswith("rates.npy")
    assert metrics["profile"]["rate_correlation"] > 0.999
    assert "rates.npy" in (out / "config.json").read_text()


@pytest.mark.slow
def test_capacity_curve_ablation_and_control():
    res = capacity_study(FitConfig(n=128, kappa=2.0), ("von-mises:5",), (2, 4, 6, 8))
    curve = [err for _, err in res.curve("von-mises:5")]
    assert all(a >= 2 * b for a, b in zip(curve, curve[1:], strict=False)), curve
    assert all(r["ablated_field_error"] >= 5 * r["field_error"] for r in res.rows)
    assert res.control[0]["spectrum_error"] > 0.1  # the per-mode family cannot
