"""SEAL learning: the new energy families, the normal spectrum at any kappa, field and energy
matching, and the controls that fail when the learned part is removed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from neurodyn.activation import Logistic
from neurodyn.analysis.attraction import decay_rates, field_energy_error, normal_spectrum
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import (
    ENERGIES,
    InteractionEnergy,
    PhaseLockEnergy,
    PointwiseEnergy,
    SealEnergy,
    make_energy,
)
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.geometry.populations import Ring, Torus
from neurodyn.io import load_model, save_model
from neurodyn.manifold import TargetManifold, nearest_point, probe_directions
from neurodyn.network import HopfieldNetwork

ROOT = Path(__file__).resolve().parents[2]


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _seal(geom, seed):
    act = Logistic()
    m = TargetManifold.bump(geom, act, -2.0, 4.0)
    e = SealEnergy(geom, act, m.u0, bias=0.2, phaselock=True)
    with torch.no_grad():
        for part in (e.pointwise, e.phaselock):
            part.coef.normal_(0, 0.3, generator=_gen(seed))
        e.spectral.coef.normal_(0, 0.3, generator=_gen(seed + 1))
    return e, m


@pytest.mark.parametrize("geom", [Ring(32), Torus(8, 10, "hex"), Torus(8, 8, "square")])
def test_new_families_gradients_and_hvp_match_autograd(geom):
    act = Logistic()
    r = 0.02 + 0.96 * torch.rand((3,) + geom.shape, dtype=torch.float64, generator=_gen(0))
    v = torch.randn((3,) + geom.shape, dtype=torch.float64, generator=_gen(1))
    pw = PointwiseEnergy(geom, act, degree=3)
    pl = PhaseLockEnergy(geom)
    seal, _ = _seal(geom, 2)
    for e in (pw, pl):
        with torch.no_grad():
            e.coef.normal_(generator=_gen(3))
    for e in (pw, pl, seal):
        assert torch.allclose(e.grad(r), InteractionEnergy.grad(e, r), atol=1e-11), e.family
        assert torch.allclose(e.hvp(r, v), InteractionEnergy.hvp(e, r, v), atol=1e-9), e.family


def test_families_are_translation_invariant_and_seal_has_exact_fixed_points():
    g = Ring(64)
    e, m = _seal(g, 5)
    shifts = torch.linspace(0, 6, 7, dtype=torch.float64).unsqueeze(-1)
    r = torch.sigmoid(-1 + 3 * torch.cos(g.coords()[0]) + 0.5 * torch.cos(2 * g.coords()[0]))
    vals = e(g.shift(r, shifts)).detach()
    assert float((vals - vals[0]).abs().max()) < 1e-9 * (1 + float(vals.abs().max()))
    us = m.u_star(shifts)
    res = -us - e.grad(m.activation(us)) + 0.2
    assert float(res.detach().abs().max()) < 1e-7


def test_registry_and_roundtrip_of_every_new_family(tmp_path):
    g = Ring(16)
    e, m = _seal(g, 7)
    for energy in (e, PointwiseEnergy(g, Logistic(), 2), PhaseLockEnergy(g)):
        again = make_energy(energy.config(), g, energy.state_dict())
        r = torch.rand(2, 16, dtype=torch.float64, generator=_gen(8))
        assert torch.equal(energy(r).detach(), again(r).detach())
    with pytest.raises(ValueError, match="choose one of .*seal"):
        ENERGIES.get("nope")
    net = HopfieldNetwork(g, m.activation, e, bias=0.2, manifold=m)
    save_model(net, tmp_path / "model.pt")
    loaded, _ = load_model(tmp_path)
    u = m.u0 + 0.3
    assert torch.equal(loaded.field(u).detach(), net.field(u).detach())


@pytest.mark.parametrize("family", ["pointwise", "phaselock", "seal"])
def test_energy_descent_for_the_new_families(family):
    geom = Ring(16)
    e, _ = _seal(geom, 11)
    energy = {"seal": e, "pointwise": e.pointwise, "phaselock": e.phaselock}[family]
    net = HopfieldNetwork(geom, Logistic(), energy, bias=0.3)
    u0 = 2 * torch.randn((6,) + geom.shape, dtype=torch.float64, generator=_gen(12))
    tr = simulate(net, u0, duration=10.0, dt=0.02, method="rk4", save_every=5)
    inc = tr.energy[1:] - tr.energy[:-1]
    assert float(inc.max()) <= 1e-10 * (1 + float(tr.energy.abs().max()))
    assert float((tr.energy[0] - tr.energy[-1]).min()) > 0


@pytest.fixture(scope="module")
def ring_fits():
    cfgs = {k: FitConfig(n=48, kappa=k, steps=3, batch=8) for k in (0.5, 2.0)}
    fits = {("seal", k): fit(c) for k, c in cfgs.items()}
    fits[("spectral", 2.0)] = fit(FitConfig(n=48, kappa=2.0, steps=3, batch=8,
                                            family="spectral"))
    return fits


@pytest.mark.parametrize("kappa", [0.5, 2.0])
def test_fitted_ring_has_every_normal_eigenvalue_at_kappa(ring_fits, kappa):
    net = ring_fits[("seal", kappa)].network
    ns = normal_spectrum(net, kappa, tol=0.05)
    assert ns.worst_relative <= 0.05 and ns.n_zero == 1, ns
    # the learned pointwise coefficient is the closed form kappa - 1 of the derivation
    assert abs(float(net.energy_fn.pointwise.coef[0].detach()) - (kappa - 1)) < 0.02 * kappa


def test_control_spectral_family_leaves_phase_directions_at_the_leak(ring_fits):
    full = normal_spectrum(ring_fits[("seal", 2.0)].network, 2.0)
    spectral = normal_spectrum(ring_fits[("spectral", 2.0)].network, 2.0)
    assert abs(spectral.max + 1.0) < 1e-6  # stuck at -1/tau
    assert spectral.fraction_within < 0.1
    assert abs(full.max + 2.0) < 0.1


def test_control_removing_the_learned_pointwise_term_breaks_the_spectrum(ring_fits):
    net = ring_fits[("seal", 2.0)].network
    energy = net.energy_fn
    saved = energy.pointwise.coef.detach().clone()
    try:
        with torch.no_grad():
            energy.pointwise.coef.zero_()
        ns = normal_spectrum(net, 2.0)
        assert ns.fraction_within < 0.1 and ns.worst_relative > 0.4
    finally:
        with torch.no_grad():
            energy.pointwise.coef.copy_(saved)
    assert normal_spectrum(net, 2.0).worst_relative <= 0.05


def test_small_perturbations_decay_at_kappa_with_energy_descent(ring_fits):
    net = ring_fits[("seal", 2.0)].network
    dr = decay_rates(net, 2.0, count=2)
    assert dr.worst_relative() <= 0.15, dr
    assert all(dr.energy_ok.values())
    slow = decay_rates(ring_fits[("spectral", 2.0)].network, 2.0, count=2, kinds=("odd",))
    assert abs(slow.late["odd"] - 1.0) < 0.1  # the control relaxes at the leak rate


def test_restoring_field_and_energy_match_targets(ring_fits):
    fe = field_energy_error(ring_fits[("seal", 0.5)].network, 0.5, count=16)
    assert fe.worst_field() <= 0.10, fe.field_error
    assert fe.worst_energy() <= 0.10, fe.energy_ratio
    ctrl = field_energy_error(ring_fits[("spectral", 2.0)].network, 2.0, count=16)
    assert ctrl.worst_field() > 0.3


def test_nearest_point_is_the_bregman_minimiser():
    g = Ring(48)
    m = TargetManifold.bump(g, Logistic(), -2.0, 4.0)
    psi = torch.tensor([[1.0]], dtype=torch.float64)
    u = m.u_star(psi) + 0.2 * m.norm * probe_directions(m, psi, "white", _gen(3))
    from neurodyn.manifold import bregman

    best = nearest_point(m, u)
    grid = torch.linspace(0.9, 1.1, 201, dtype=torch.float64).unsqueeze(-1)
    b = bregman(m, u.expand(201, -1), grid)
    assert abs(float(grid[b.argmin()]) - float(best)) <= 1e-3


@pytest.fixture(scope="module")
def small_torus():
    return fit(FitConfig(geometry="torus", n=(12, 12), kappa=2.0, steps=2, batch=4)).network


def test_hex_torus_needs_the_phase_lock_term(small_torus):
    off = fit(FitConfig(geometry="torus", n=(12, 12), kappa=2.0, steps=2, batch=4,
                        phaselock=False))
    a, b = normal_spectrum(small_torus, 2.0, 0.1), normal_spectrum(off.network, 2.0, 0.1)
    assert a.worst_relative <= 0.1 and a.n_zero == 2, a
    assert b.worst_relative > 0.1 and a.worst_relative < b.worst_relative / 3, (a, b)


def test_torus_restores_shrunken_and_grown_bumps_in_the_amplitude_variable(small_torus):
    # bump-height perturbations up to 0.3 ||u*|| shrink a hex bump to 45% of its height; the
    # target energy is linear in |z_k| there, which polynomials in |z_k|^2 cannot follow
    fe = field_energy_error(small_torus, 2.0, count=16, kinds=("amplitude",))
    assert fe.worst_field() <= 0.02 and fe.worst_energy() <= 0.02, fe
    power = fit(FitConfig(geometry="torus", n=(12, 12), kappa=2.0, steps=2, batch=4,
                          variable="power")).network
    ctrl = field_energy_error(power, 2.0, count=16, kinds=("amplitude",))
    assert ctrl.worst_field() > 0.1, ctrl


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "neurodyn.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _cli_in_process(*args):
    """``neurodyn ARGS`` through ``main(argv)``: exit status and stderr."""
    import contextlib
    import io

    from neurodyn.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    return code, err.getvalue()


def _differing(a, b, path: str = "") -> list[str]:
    """The JSON paths where two metrics files differ (the message of a failed comparison)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b))
                for p in _differing(a.get(k), b.get(k), f"{path}.{k}")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def test_cli_fit_is_deterministic_and_fails_loudly(tmp_path):
    # two separate processes: nothing run-to-run (hash seeds, thread timing) enters the files
    runs = []
    for name in ("a", "b"):
        p = _cli("fit", "ring", "--n", "32", "--steps", "2", "--batch", "4", "--kappa", "2",
                 "--out", str(tmp_path / name), cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        runs.append(tmp_path / name)
    one, two = ((r / "metrics.json").read_bytes() for r in runs)
    assert one == two, _differing(json.loads(one), json.loads(two))
    sa = torch.load(runs[0] / "model.pt", weights_only=True)["energy_state"]
    sb = torch.load(runs[1] / "model.pt", weights_only=True)["energy_state"]
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    metrics = json.loads((runs[0] / "metrics.json").read_text())
    ns = metrics["attraction"]["normal_spectrum"]
    assert ns["worst_relative"] <= 0.05 and metrics["attraction"]["failed"] == []
    # the spectral family cannot reach kappa = 2: exit 1 naming the measure, no model
    code, err = _cli_in_process("fit", "ring", "--n", "32", "--steps", "2", "--batch", "4",
                                "--kappa", "2", "--family", "spectral", "--out",
                                str(tmp_path / "c"))
    assert code == 1 and "normal_spectrum" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c" / "model.pt").exists()
    # a checkpoint of another config is refused with exit 2 naming the key
    code, err = _cli_in_process("fit", "ring", "--n", "32", "--steps", "2", "--batch", "4",
                                "--kappa", "3", "--out", str(runs[0]))
    assert code == 2 and "kappa" in err, err


# ---------------------------------------------------------------- acceptance (slow)
@pytest.mark.slow
@pytest.mark.parametrize("kappa", [0.25, 0.5, 2.0, 4.0])
def test_acceptance_ring_128(kappa):
    result = fit(FitConfig(n=128, kappa=kappa))
    net = result.network
    ns = normal_spectrum(net, kappa, 0.05)
    assert ns.worst_relative <= 0.05 and ns.n_zero == 1, ns
    dr = decay_rates(net, kappa)
    assert dr.worst_relative() <= 0.15 and all(dr.energy_ok.values()), dr
    fe = field_energy_error(net, kappa)
    assert fe.worst_field() <= 0.10 and fe.worst_energy() <= 0.10, fe


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [0.5, 2.0])
def test_acceptance_hex_torus_32(kappa):
    net = fit(FitConfig(geometry="torus", n=(32, 32), kappa=kappa)).network
    ns = normal_spectrum(net, kappa, 0.10)
    assert ns.worst_relative <= 0.10 and ns.n_zero == 2, ns
    dr = decay_rates(net, kappa)
    assert dr.worst_relative() <= 0.15 and all(dr.energy_ok.values()), dr
    fe = field_energy_error(net, kappa)
    assert fe.worst_field() <= 0.10 and fe.worst_energy() <= 0.10, fe


def test_fitted_mlp_energy_keeps_fixed_points_and_one_zero_mode():
    from neurodyn.analysis.recovery import restoration

    res = fit(FitConfig(n=32, family="mlp", steps=3, batch=2, hidden=8))
    net = res.network
    assert len(res.history["linear"]) == 3
    ns = normal_spectrum(net, 1.0)
    assert ns.n_zero == 1, ns
    metrics = restoration(net, count=8, threshold=0.02, duration=20.0,
                          kinds=("noise",)).to_dict()
    assert metrics["noise"]["fraction_within"] == 1.0 and metrics["noise"]["energy"]["ok"]
    again = make_energy(net.energy_fn.config(), net.geometry, net.energy_fn.state_dict())
    u = net.manifold.u0 + 0.2
    assert torch.allclose(again.grad(net.activation(u)), net.energy_fn.grad(net.activation(u)))


def test_fitted_mlp_normal_spectrum_follows_kappa():
    nets = {k: fit(FitConfig(n=32, family="mlp", steps=10, batch=2, hidden=8, kappa=k,
                             lr=1e-2)).network for k in (0.5, 2.0)}
    for kappa, net in nets.items():
        ns = normal_spectrum(net, kappa, 0.05)
        assert ns.worst_relative <= 0.05 and ns.n_zero == 1, (kappa, ns)
    # the control: without the learned leak coefficient both sit at the leak rate 1/tau
    energy = nets[2.0].energy_fn
    with torch.no_grad():
        energy.pointwise.coef.zero_()
    ns = normal_spectrum(nets[2.0], 2.0, 0.05)
    assert abs(ns.min + 1) < 0.05 and abs(ns.max + 1) < 0.05, ns


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [0.5, 2.0])
def test_acceptance_fitted_mlp_ring_at_kappa(kappa):
    net = fit(FitConfig(n=64, family="mlp", steps=120, batch=4, hidden=16, lr=1e-2,
                        kappa=kappa)).network
    ns = normal_spectrum(net, kappa, 0.05)
    assert ns.worst_relative <= 0.05 and ns.n_zero == 1, ns
    fe = field_energy_error(net, kappa, count=16)
    assert fe.worst_field() <= 0.10 and fe.worst_energy() <= 0.10, fe


@pytest.mark.slow
def test_acceptance_fitted_mlp_ring():
    from neurodyn.analysis.recovery import restoration

    net = fit(FitConfig(n=64, family="mlp", steps=120, batch=4, hidden=16, lr=1e-2)).network
    assert normal_spectrum(net, 1.0).n_zero == 1
    metrics = restoration(net, count=64, threshold=0.02, duration=20.0).to_dict()
    for kind in ("noise", "shape", "amplitude", "lesion"):
        assert metrics[kind]["fraction_within"] >= 0.99 and metrics[kind]["energy"]["ok"]


@pytest.mark.slow
def test_cli_ctrl_c_saves_a_checkpoint_and_resume_equals_uninterrupted(tmp_path):
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    # enough steps that the signal, sent once the first checkpoint exists, lands inside the
    # fit loop even on a loaded machine (a step of this ring takes ~0.2 s)
    args = ["fit", "ring", "--steps", "100", "--batch", "8", "--kappa", "2"]
    out = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-m", "neurodyn.cli", *args, "--out", str(out)],
                            env=env, stderr=subprocess.PIPE, text=True)
    while not (out / "fit_state.pt").exists() and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and "checkpoint" in err
    p = _cli(*args, "--out", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    q = _cli(*args, "--out", str(tmp_path / "whole"), cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    a = torch.load(out / "model.pt", weights_only=True)["energy_state"]
    b = torch.load(tmp_path / "whole" / "model.pt", weights_only=True)["energy_state"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    ma = json.loads((out / "metrics.json").read_text())
    # metrics.json holds only what the seed determines: the resumed run's is the same file
    assert "resumed_from_step" not in ma
    assert (out / "metrics.json").read_bytes() == (tmp_path / "whole" / "metrics.json").read_bytes()
    assert json.loads((out / "timing.json").read_text())["resumed_from_step"] > 0
    assert json.loads((tmp_path / "whole" / "timing.json").read_text())["resumed_from_step"] == 0


@pytest.mark.slow
def test_cli_ctrl_c_during_the_numba_compile_after_the_fit_exits_130_with_the_checkpoint(
        tmp_path):
    """SIGINT handled inside llvmlite's ctypes callback while numba compiles, after the fit
    loop (tests/interrupt_hook.py): its KeyboardInterrupt is dropped there, yet the run ends
    with 130, one line and the checkpoint of every step, and a rerun writes the model."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    args = ["fit", "ring", "--n", "32", "--steps", "3", "--batch", "4", "--kappa", "2",
            "--out", str(tmp_path)]
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "interrupt_hook.py"), "neurodyn",
                        "neurodyn.analysis.attraction:attraction_report", *args], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 130, p.stderr
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "after all 3 steps" in p.stderr and "fit_state.pt holds them" in p.stderr
    assert torch.load(tmp_path / "fit_state.pt", weights_only=True)["step"] == 3
    assert not (tmp_path / "model.pt").exists()
    q = _cli(*args, cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert timing["resumed_from_step"] == 3 and (tmp_path / "model.pt").exists()


def test_seal_learning_demo_quick(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "demos/seal_learning.py"), "--quick",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert p.returncode == 0, p.stderr[-2000:]
    seal = json.loads((tmp_path / "metrics.json").read_text())
    ring = seal["kappa_sweep"]["ring_summary"]
    assert ring["worst_spectrum_relative"] <= 0.05
    assert abs(ring["spectral_only_max_eigenvalue"]["2.0"] + 1.0) < 1e-3  # the control
    assert seal["ablation"]["full SEAL"]["fraction_within"] == 1.0
    assert seal["ablation"]["Fourier construction"]["fraction_within"] < 0.1
    for fig in ("kappa_sweep_ring.png", "kappa_sweep_torus.png", "capacity.png",
                "ablation.png", "spectra_kappa2.png"):
        assert (tmp_path / fig).exists()
