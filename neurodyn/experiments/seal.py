"""Experiments showing what SEAL's learning does: kappa sweep, capacity sweep, ablation.

Each function fits or builds networks, measures them with :mod:`neurodyn.analysis.attraction` on the
same held-out perturbations (fixed seeds), and returns a typed result
(:mod:`neurodyn.experiments.seal_results`, importable from here too) whose ``to_dict()`` is the JSON
the demo writes; the figures are drawn by :mod:`neurodyn.plotting.seal` and the demo
``demos/seal_learning.py``.
"""

from __future__ import annotations

import torch

from _runkit.runtime import with_threads

from ..analysis.attraction import decay_rates, field_energy_error, normal_spectrum
from ..analysis.diagnostics import jacobian_spectrum
from ..dynamics.simulation import simulate
from ..energies import FourierQuadraticEnergy, QuadraticEnergy
from ..fitting.core import FitConfig, fit
from ..fitting.plan import build_manifold
from ..manifold import TargetManifold
from ..network import HopfieldNetwork
from .seal_results import (
    Ablation,
    AblationMeasurement,
    CapacityMeasurement,
    CapacitySweep,
    FittedMeasurement,
    KappaSweep,
    MLPMeasurement,
    MLPSweep,
    SealMeasurement,
    VariableControl,
    VariableControlRow,
)

__all__ = ["measure", "kappa_sweep", "capacity_sweep", "ablation", "classic_cann",
           "fourier_construction_network", "mlp_sweep", "variable_control", "SealMeasurement",
           "FittedMeasurement", "CapacityMeasurement", "AblationMeasurement", "MLPMeasurement",
           "VariableControlRow", "KappaSweep", "CapacitySweep", "Ablation", "MLPSweep",
           "VariableControl"]


def measure(network: HopfieldNetwork, kappa: float, tol: float = 0.05, decay: bool = True,
            count: int = 32) -> SealMeasurement:
    """Spectrum, simulated decay, field and energy errors of one network against ``kappa``.

    ``decay=False`` skips the simulated decay rates (their fields are then None).

    Returns
    -------
    SealMeasurement
    """
    ns = normal_spectrum(network, kappa, tol)
    fe = field_energy_error(network, kappa, count=count)
    decay_fields = {}
    if decay:
        dr = decay_rates(network, kappa, count=2)
        decay_fields = {"decay_early": dr.early, "decay_late": dr.late,
                        "decay_worst_relative": dr.worst_relative(),
                        "energy_ok": all(dr.energy_ok.values())}
    return SealMeasurement(spectrum_min=ns.min, spectrum_max=ns.max,
                           fraction_within=ns.fraction_within,
                           worst_relative=ns.worst_relative, n_zero=ns.n_zero,
                           field_error=fe.worst_field(), energy_error=fe.worst_energy(),
                           **decay_fields)


@with_threads
def kappa_sweep(geometry: str = "ring", kappas=(0.25, 0.5, 1.0, 2.0, 4.0), n=None,
                families=("seal", "spectral"), seed: int = 0) -> KappaSweep:
    """Prescribed against measured normal rates for each family and kappa.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Returns
    -------
    KappaSweep
        ``families[family][str(kappa)]``: :func:`measure` of the fit and its ``fit_seconds``.
    """
    tol = 0.05 if geometry == "ring" else 0.10
    out: dict = {}
    for family in families:
        out[family] = {}
        for kappa in kappas:
            res = fit(FitConfig(geometry=geometry, n=n, kappa=kappa, family=family, seed=seed))
            m = measure(res.network, kappa, tol)
            out[family][str(kappa)] = FittedMeasurement(**m.fields(), fit_seconds=res.seconds)
    return KappaSweep(out)


CAPACITY = {
    "spectral only": {"family": "spectral"},
    "pointwise x^1..x^2": {"pointwise_inverse": False, "pointwise_degree": 2},
    "pointwise x^1..x^4": {"pointwise_inverse": False, "pointwise_degree": 4},
    "pointwise x^1..x^8": {"pointwise_inverse": False, "pointwise_degree": 8},
    "pointwise phi^-1 only": {"pointwise_degree": 0},
    "phi^-1 + x^1..x^3 (default)": {},
    "default, spectral degree 2": {"degree": 2},
    "default, spectral degree 3": {"degree": 3},
    "default, curvature bandwidth 1": {"bandwidth": 1},
    "default + phase locking": {"phaselock": True},
    "default, spectral variable |z|^2": {"variable": "power"},
}


@with_threads
def capacity_sweep(kappa: float = 2.0, n: int = 128, variants: dict | None = None,
                   seed: int = 0) -> CapacitySweep:
    """Family, basis size and degree against spectrum, field and energy errors (ring).

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Returns
    -------
    CapacitySweep
        ``variants[name]``: :func:`measure` (no decay) and the number of learned parameters.
    """
    variants = CAPACITY if variants is None else variants
    out = {}
    for name, opts in variants.items():
        res = fit(FitConfig(n=n, kappa=kappa, seed=seed, **opts))
        m = measure(res.network, kappa, decay=False)
        out[name] = CapacityMeasurement(
            **m.fields(), parameters=int(res.network.energy_fn.theta().numel()))
    return CapacitySweep(out)


def fourier_construction_network(manifold: TargetManifold, bias: float = 0.0):
    """The circulant quadratic energy solved mode-wise from the target bump (no learning)."""
    g = manifold.geometry
    e = FourierQuadraticEnergy(g, manifold.fourier_construction(bias))
    return HopfieldNetwork(g, manifold.activation, e, bias=bias, manifold=manifold)


def classic_cann(manifold: TargetManifold, j0: float = -6.0, j1: float = 9.0,
                 duration: float = 200.0) -> HopfieldNetwork:
    """A hand-wired ring CANN ``W(delta) = (J0 + 2 J1 cos delta) / N`` and its own bump.

    The bump is whatever the dynamics settle into from the target bump; the returned network
    carries that bump as its manifold.
    """
    g = manifold.geometry
    n = g.size
    e = QuadraticEnergy.circulant(g, lambda d: (j0 + 2 * j1 * torch.cos(d[0])) / n)
    net = HopfieldNetwork(g, manifold.activation, e)
    tr = simulate(net, manifold.u0.unsqueeze(0), duration, 0.1, save_every=2000,
                  diagnostics=False)
    u = tr.u[-1, 0]
    u0 = g.shift(u, -g.decode(manifold.activation(u)))
    return HopfieldNetwork(g, manifold.activation, e, manifold=TargetManifold(
        g, manifold.activation, u0))


def _leading_rate(network: HopfieldNetwork) -> float:
    ev = jacobian_spectrum(network) * network.tau
    order = ev.abs().argsort()
    return float(ev[order[network.geometry.dim:]].max())


@with_threads
def ablation(kappa: float = 2.0, n: int = 128, seed: int = 0) -> Ablation:
    """The same measurements at prescribed ``kappa`` for four ring networks.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Fourier construction (no learning), a hand-wired classic CANN, spectral SEAL (power
    spectrum fitted to ``kappa``) and full SEAL (spectral + pointwise). Each is judged on its
    own manifold with the same probe seeds.

    Returns
    -------
    Ablation
        ``networks[name]``: :func:`measure` and the slowest normal rate; ``kappa``, ``note``.
    """
    cfg = FitConfig(n=n, kappa=kappa, seed=seed)
    manifold = build_manifold(cfg)
    nets = {
        "Fourier construction": fourier_construction_network(manifold),
        "classic CANN (cosine W)": classic_cann(manifold),
        "spectral SEAL": fit(FitConfig(n=n, kappa=kappa, seed=seed, family="spectral")).network,
        "full SEAL": fit(cfg).network,
    }
    rows = {name: AblationMeasurement(**measure(net, kappa).fields(),
                                      slowest_rate=_leading_rate(net))
            for name, net in nets.items()}
    note = ("rates in 1/tau; decay_* are simulated -d log dist/dt for small white, "
            f"smooth, odd and amplitude perturbations; prescribed kappa = {kappa:g}")
    return Ablation(rows, kappa, note)


def _without(network: HopfieldNetwork, part, kappa: float) -> SealMeasurement:
    """``measure`` with one part's parameters zeroed (restored afterwards)."""
    saved = [q.detach().clone() for q in part.parameters()]
    try:
        with torch.no_grad():
            for q in part.parameters():
                q.zero_()
        network.energy_fn.refresh(force=True)
        return measure(network, kappa, decay=False, count=16)
    finally:
        with torch.no_grad():
            for q, v in zip(part.parameters(), saved, strict=True):
                q.copy_(v)
        network.energy_fn.refresh(force=True)


@with_threads
def mlp_sweep(kappas=(0.5, 2.0), n: int = 64, steps: int = 120, hidden: int = 16,
              seed: int = 0) -> MLPSweep:
    """Fitted MLP energies (family ``mlp``) at several kappa, with two ablations each.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Per kappa: :func:`measure` of the fit, the learned leak coefficient ``c0`` (the derivation's
    value is ``kappa - 1``; nothing sets it), and the measurements with the MLP's weights zeroed
    (``without_mlp``) and with ``c0`` zeroed (``without_c0``), which show which part carries the
    normal attraction.

    Returns
    -------
    MLPSweep
        ``kappas[str(kappa)]``: an :class:`MLPMeasurement`.
    """
    out = {}
    for kappa in kappas:
        res = fit(FitConfig(n=n, family="mlp", steps=steps, batch=4, hidden=hidden, lr=1e-2,
                            kappa=kappa, seed=seed))
        net = res.network
        m = measure(net, kappa, count=16)
        out[str(kappa)] = MLPMeasurement(
            **m.fields(), fit_seconds=res.seconds,
            c0=float(net.energy_fn.pointwise.coef[0].detach()),
            without_mlp=_without(net, net.energy_fn.neural, kappa),
            without_c0=_without(net, net.energy_fn.pointwise, kappa))
    return MLPSweep(out)


@with_threads
def variable_control(geometry: str = "torus", kappa: float = 2.0, n=None,
                     seed: int = 0) -> VariableControl:
    """Restoring field per perturbation kind with the spectral polynomials in ``|z_k|`` and in
    ``|z_k|^2`` (the control): shrunken and grown bumps separate the two.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Returns
    -------
    VariableControl
        ``variables["amplitude"]`` and ``variables["power"]``.
    """
    out = {}
    for variable in ("amplitude", "power"):
        res = fit(FitConfig(geometry=geometry, n=n, kappa=kappa, seed=seed, variable=variable))
        fe = field_energy_error(res.network, kappa)
        out[variable] = VariableControlRow(
            field_error=fe.field_error, field_error_median=fe.field_error_median,
            energy_ratio=fe.energy_ratio, fit_seconds=res.seconds,
            worst_relative=normal_spectrum(res.network, kappa, 0.1).worst_relative)
    return VariableControl(out)
