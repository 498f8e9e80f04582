"""The learned ring attractor: fixed points, spectrum, connectivity, restoration, transport."""

import math

import numpy as np
import pytest
import torch

import neurodyn.fitting.core as fitmod
from neurodyn.analysis.bump_motion import diffusion, path_integration
from neurodyn.analysis.connectivity import effective_connectivity, fit_circulant
from neurodyn.analysis.diagnostics import (
    connectivity_profile,
    energy_audit,
    fixed_point_residual,
    jacobian_spectrum,
    summarize_spectrum,
)
from neurodyn.analysis.recovery import restoration
from neurodyn.dynamics.inputs import ArrayVelocity, Constant, OrnsteinUhlenbeck, parse_velocity
from neurodyn.dynamics.perturbations import perturb
from neurodyn.dynamics.simulation import NonFiniteStateError, simulate
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import LoadedModel, load_model, save_model


def test_fixed_points_on_the_whole_ring(ring_net):
    assert fixed_point_residual(ring_net, count=32) < 1e-9


def test_jacobian_has_one_neutral_direction(ring_net):
    s = summarize_spectrum(jacobian_spectrum(ring_net, psi=[1.1]), zero_tol=1e-3)
    assert s.n_zero == 1
    assert s.slowest_nonzero <= -0.2


def test_jacobian_spectrum_matches_finite_differences(ring_net):
    m = ring_net.manifold
    u = m.u_star(torch.tensor([0.4], dtype=torch.float64))
    jac = ring_net.jacobian(u)
    v = torch.randn(128, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    eps = 1e-6
    fd = (ring_net.field(u + eps * v) - ring_net.field(u - eps * v)) / (2 * eps)
    assert torch.allclose(jac @ v, fd.detach(), atol=1e-6)


def test_connectivity_local_excitation_surround_inhibition(ring_net):
    # judged on the best fixed circulant W, not on the diagonal average of the state-dependent
    # W_eff (the tangent's autocorrelation, which has this shape for any bump)
    fixed = fit_circulant(ring_net, count=32)
    assert fixed.w0 > 0
    assert fixed.min_far < 0
    zc = [z for z in fixed.zero_crossings if 0 < z < math.pi]
    assert len(zc) == 1
    prof = connectivity_profile(ring_net)
    assert effective_connectivity(ring_net).rank == 1 and prof.at_zero > 0


def test_restoration_every_kind_with_energy_descent(ring_net):
    metrics = restoration(ring_net, count=32, duration=20.0, dt=0.1, seed=3).to_dict()
    for kind in ("noise", "shape", "amplitude", "lesion"):
        m = metrics[kind]
        assert m["initial_max"] > 0.3, kind
        assert m["fraction_within"] == 1.0, (kind, m)
        assert m["energy"]["ok"], (kind, m["energy"])


def test_distance_to_manifold_closed_form(ring_net):
    m = ring_net.manifold
    psi = torch.tensor([[2.5]], dtype=torch.float64)
    u = m.u_star(psi)
    d = m.distance(u)
    assert float(d.distance) < 1e-10
    assert math.isclose(float(d.psi), 2.5, abs_tol=1e-9)
    # moving along the normal "mean" direction by a constant c gives ||c 1|| / ||u*||
    c = 0.37
    d2 = m.distance(u + c)
    # the nearest point can only be closer than the offset
    assert float(d2.distance) <= c * math.sqrt(128) / m.norm + 1e-12
    # a pure shift is at distance zero with the shift recovered
    d3 = m.distance(ring_net.geometry.shift(u, 1.0))
    assert float(d3.distance) < 1e-9 and math.isclose(float(d3.psi), 3.5, abs_tol=1e-8)


def test_constant_velocity_moves_bump_at_input_rate(ring_net):
    m = ring_net.manifold
    u0 = m.u_star(torch.tensor([[0.5], [3.0]], dtype=torch.float64))
    for v in (0.3, -0.2):
        tr = simulate(ring_net, u0, 20.0, 0.1, velocity=Constant(v), save_every=50)
        moved = (tr.decoded[-1, :, 0] - tr.decoded[0, :, 0] - v * 20.0 + math.pi) % (
            2 * math.pi) - math.pi
        assert float(moved.abs().max()) < 1e-4


def test_path_integration_ou_velocity(ring_net):
    metrics = path_integration(ring_net, "ou:0.2:10:0.5", runs=16, duration=100.0,
                               seed=2).to_dict()
    assert metrics["max_speed"] <= 0.5 + 1e-12
    assert metrics["rms_final"] <= 0.05


@pytest.mark.parametrize("spec", ["constant:0.1", "sine:0.3:0.02", "steps:0.2,-0.1,0.3:10"])
def test_velocity_regimes_are_tracked(ring_net, spec):
    metrics = path_integration(ring_net, spec, runs=4, duration=40.0, seed=1).to_dict()
    assert metrics["rms_final"] < 0.01


def test_array_velocity_matches_constant(ring_net):
    m = ring_net.manifold
    u0 = m.u_star(torch.tensor([[1.0]], dtype=torch.float64))
    arr = np.full(100, 0.25)
    tr = simulate(ring_net, u0, 10.0, 0.1, velocity=ArrayVelocity(arr, 0.1), save_every=100)
    assert abs(float(tr.path_error().abs().max())) < 1e-4
    with pytest.raises(ValueError, match="longer than the velocity array"):
        simulate(ring_net, u0, 20.0, 0.1, velocity=ArrayVelocity(arr, 0.1))
    with pytest.raises(ValueError, match="non-finite value at sample 3"):
        ArrayVelocity(np.array([0.0, 0.0, 0.0, np.nan]), 0.1)


def test_dopri5_agrees_with_rk4(ring_net):
    m = ring_net.manifold
    gen = torch.Generator().manual_seed(5)
    u0 = perturb(m, torch.tensor([[1.0]], dtype=torch.float64), "noise", 0.3, gen)
    a = simulate(ring_net, u0, 5.0, 0.05, method="rk4", save_every=100)
    b = simulate(ring_net, u0, 5.0, 0.05, method="dopri5", save_every=100)
    assert torch.allclose(a.u[-1], b.u[-1], atol=1e-6)
    assert b.nfe > 0


def test_diffusion_matches_one_neuron_noise_theory(ring_net):
    metrics = diffusion(ring_net, noise=0.1, runs=96, duration=100.0, dt=0.05,
                        seed=0).to_dict()
    assert 0.7 < metrics["ratio"] < 1.3, metrics


def test_noise_is_reproducible_with_seed(ring_net):
    u0 = ring_net.manifold.u_star(torch.zeros(2, 1, dtype=torch.float64))
    a = simulate(ring_net, u0, 2.0, 0.1, noise=0.1, seed=7)
    b = simulate(ring_net, u0, 2.0, 0.1, noise=0.1, seed=7)
    c = simulate(ring_net, u0, 2.0, 0.1, noise=0.1, seed=8)
    assert torch.equal(a.u, b.u) and not torch.equal(a.u, c.u)


class _Runaway(torch.nn.Module):
    """F(r) = -exp(90 (sum r - 120)): negligible at a bump, overflowing once all neurons fire."""

    def forward(self, r):
        return -torch.exp(90 * (r.sum(-1) - 120.0))


def test_non_finite_state_reports_time_and_step(ring_net):
    from neurodyn.energies import ModuleEnergy
    from neurodyn.network import HopfieldNetwork

    g = ring_net.geometry
    net = HopfieldNetwork(g, ring_net.activation, ModuleEnergy(g, _Runaway()), 8.0, 1.0)
    u0 = ring_net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(NonFiniteStateError) as info:
        simulate(net, u0, 50.0, 0.1, save_every=1000)
    err = info.value
    assert err.step > 0 and err.step * 0.1 <= err.time <= (err.step + 1) * 0.1
    assert f"step {err.step}" in str(err)


def test_simulate_argument_errors(ring_net):
    u0 = ring_net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="method='leapfrog'"):
        simulate(ring_net, u0, 1.0, 0.1, method="leapfrog")
    with pytest.raises(ValueError, match="noise > 0 needs method='euler'"):
        simulate(ring_net, u0, 1.0, 0.1, method="rk4", noise=0.1, seed=0)
    with pytest.raises(ValueError, match="u0: shape"):
        simulate(ring_net, torch.zeros(2, 64, dtype=torch.float64), 1.0, 0.1)
    with pytest.raises(ValueError, match="non-finite"):
        simulate(ring_net, u0 * float("nan"), 1.0, 0.1)
    with pytest.raises(ValueError, match="seed"):
        simulate(ring_net, u0, 1.0, 0.1, noise=0.1)
    with pytest.raises(ValueError, match="dt="):
        simulate(ring_net, u0, 1.0, -0.1)


def test_velocity_spec_errors():
    assert isinstance(parse_velocity("ou:0.2:10:0.5"), OrnsteinUhlenbeck)
    for bad in ("constant", "spin:1", "sine:0.1", "steps:a,b:1", "ou:0.2"):
        with pytest.raises(ValueError, match="velocity="):
            parse_velocity(bad)


def test_save_model_replaces_a_file_only_when_asked(ring_net, tmp_path):
    """The quickstart's save into the folder the command line wrote keeps that model unless
    overwrite=True; the refused call leaves the file's bytes as they were."""
    from _runkit import BadInput

    path = tmp_path / "model.pt"
    save_model(ring_net, path, extra={"note": "first"})
    before = path.read_bytes()
    with pytest.raises(BadInput, match="exists; save_model replaces a file only with overwrite"):
        save_model(ring_net, path, extra={"note": "second"})
    assert path.read_bytes() == before and load_model(path).extra["note"] == "first"
    save_model(ring_net, path, extra={"note": "second"}, overwrite=True)
    assert load_model(path).extra["note"] == "second"
    with pytest.raises(BadInput, match="is a directory"):
        save_model(ring_net, tmp_path, overwrite=True)


def test_save_load_roundtrip(ring_net, tmp_path):
    save_model(ring_net, tmp_path / "model.pt", extra={"note": "x"})
    loaded = load_model(tmp_path)
    assert isinstance(loaded, LoadedModel) and loaded._fields == ("network", "extra")
    net, extra = loaded  # still unpacks as the pair
    assert net is loaded.network and extra == loaded.extra and extra["note"] == "x"
    # the file records the library's version and the fit's resolved config (no null left)
    assert isinstance(extra["library_version"], str) and extra["fit"]["n"] == 128
    assert None not in extra["fit"].values()
    u = ring_net.manifold.u_star(torch.tensor([[0.3]], dtype=torch.float64)) + 0.1
    v = torch.tensor([[0.2]], dtype=torch.float64)
    assert torch.allclose(net.field(u, v), ring_net.field(u, v).detach(), atol=1e-14)
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="is not a readable torch file"):
        load_model(tmp_path / "bad.pt")


def test_fit_resumes_from_checkpoint_to_the_same_result(tmp_path, monkeypatch):
    cfg = FitConfig(n=32, steps=6, batch=4, checkpoint_every=2, seed=4, kappa=2.0)
    full = fit(cfg)
    calls = {"n": 0}
    original = fitmod._design

    def interrupted(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(*a, **k)

    monkeypatch.setattr(fitmod, "_design", interrupted)
    with pytest.raises(fitmod.FitInterrupted, match="steps 0-2"):
        fit(cfg, out_dir=tmp_path)
    monkeypatch.setattr(fitmod, "_design", original)
    resumed = fit(cfg, out_dir=tmp_path)
    assert resumed.resumed_from == 3
    # the checkpoint holds the summed normal equations: the resumed fit is bit-identical
    assert torch.equal(resumed.network.energy_fn.theta(), full.network.energy_fn.theta())
    assert resumed.history == full.history
    # a checkpoint of another config is refused, naming the differing key
    with pytest.raises(ValueError, match="kappa"):
        fit(FitConfig(n=32, steps=6, batch=4, seed=4, kappa=3.0), out_dir=tmp_path)


def test_fit_config_rejects_unknown_and_bad_values():
    with pytest.raises(ValueError, match="unknown keys \\['gamma'\\]"):
        FitConfig.from_dict({"gamma": 1})
    with pytest.raises(ValueError, match="kappa"):
        FitConfig(kappa=-1.0)
    with pytest.raises(ValueError, match="at least 8"):
        fit(FitConfig(n=4, steps=1))


def test_energy_audit_detects_an_increase(ring_net):
    u0 = ring_net.manifold.u_star(torch.zeros(1, 1, dtype=torch.float64))
    tr = simulate(ring_net, perturb(ring_net.manifold, torch.zeros(1, 1, dtype=torch.float64),
                                    "noise", 0.3, torch.Generator().manual_seed(0)), 5.0, 0.1)
    assert energy_audit(tr).ok
    tr.energy[3] += 1.0
    assert not energy_audit(tr).ok
    del u0
