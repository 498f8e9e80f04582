"""Normal attraction of a network to its manifold, measured against a prescribed rate kappa.

The metric is the one the dynamics uses (see :mod:`neurodyn.energies.seal`, step 5): the
dynamics is the gradient flow of the Hopfield energy in the metric ``D = diag(phi'(u*))``, the
nearest manifold point ``psi_hat`` minimises the leak's Bregman divergence
``B(u, psi) = sum_i G(r_i) - G(r*_i) - u*_i (r_i - r*_i)`` (equivalently maximises the overlap
``<r, u*(psi)>``), and the targets are

.. math:: \\tau \\dot u^* = -\\kappa (u - u^*(\\hat\\psi)), \\qquad
          E(u) - E(M) = \\kappa B(u, \\hat\\psi) \\approx \\frac{\\kappa}{2} \\|u - u^*\\|_D^2 .

Probe directions are built at a manifold point with their tangent part removed in that metric
(``(De) . d = 0``), so that an exact network moves them at ``-kappa d / tau`` and nothing else.
A fitted network rests on its OWN attractor, which lies near the target manifold but not on it
(a learned template is exact only to the fit's precision: 3.8e-6 of ``||u*||`` for a Gaussian
rate bump of width 0.8 rad on 128 neurons at kappa 1). :func:`attraction_report` therefore
measures the spectrum, the field, the energy and the decay against that attractor
(:func:`own_attractor`: the target bump relaxed by the network's own dynamics, and its exact
translates), and reports its distance from the target manifold as a number of its own, the
``gap``: measured against the target, a perturbation of 1e-3 that decays by ``e^-6`` ends
below such a gap and its late decay rate reads as the gap's, not the network's (that fit read
30% off kappa against the target, 1.3e-5 against its attractor).

These geometric primitives (:data:`~neurodyn.manifold.PROBES`,
:func:`~neurodyn.manifold.probe_directions`, :func:`~neurodyn.manifold.nearest_point`,
:func:`~neurodyn.manifold.bregman`, :func:`~neurodyn.manifold.oblique_projection`) live in
:mod:`neurodyn.manifold`, shared with the fit; this module measures with them.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch

from _runkit import BadInput, Result, artifact

from ..dynamics.simulation import simulate
from ..manifold import PROBES, TargetManifold, bregman, nearest_point, probe_directions
from ..network import HopfieldNetwork
from .diagnostics import energy_audit, fixed_point_residual, jacobian_spectrum

__all__ = ["NormalSpectrum", "normal_spectrum", "FieldEnergyError", "field_energy_error",
           "DecayRates", "decay_rates", "OwnAttractor", "own_attractor", "AttractionReport",
           "attraction_report", "GAP_TOL", "NEUTRAL_TOL"]

#: eigenvalues (times tau) within this of 0 count as neutral in the fit's check
NEUTRAL_TOL = 1e-3

#: largest gap between the network's attractor and the target manifold (relative to
#: ``||u*||``) a fit accepts: the bump the network rests in is within 0.1% of the requested one
GAP_TOL = 1e-3


@dataclass(frozen=True)
class OwnAttractor(Result):
    """The network's own attractor near the target manifold (:func:`own_attractor`).

    Attributes
    ----------
    gap : float
        ``min_psi ||u_net - u*(psi)|| / ||u*||``: how far the bump the network rests in lies
        from the target manifold.
    residual : float
        ``max ||tau du/dt|| / ||u*||`` over 16 exact translates of the relaxed bump
        (:func:`~neurodyn.analysis.diagnostics.fixed_point_residual` on them): how nearly they
        are all fixed points (a bump pinned to the lattice has large residuals between sites).
    time : float
        The relaxation time it took (units of tau).
    manifold : TargetManifold
        The relaxed bump's translates (not in ``to_dict``).
    """

    gap: float
    residual: float
    time: float
    manifold: TargetManifold = artifact()


def own_attractor(network: HopfieldNetwork, kappa: float, tol: float = 1e-11,
                  max_time: float = 100.0) -> OwnAttractor:
    """Relax the target bump ``u*(0)`` with the network's own dynamics to its resting bump.

    RK4 with ``dt = 0.05 tau / kappa`` in chunks of ``2 tau / kappa``, until the relative
    field ``||tau du/dt|| / ||u*||`` is at most ``tol``, stops falling (by half in a chunk), or
    ``max_time / kappa`` has passed.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    kappa : float
        The prescribed normal rate (1/tau): sets the step and the time scale.
    tol : float
        The relative field at which the relaxed state counts as a fixed point.
    max_time : float
        The longest relaxation, in units of ``tau / kappa``.

    Returns
    -------
    OwnAttractor

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=2)).network
    >>> own = own_attractor(net, 1.0)
    >>> own.gap < 1e-8, own.residual < 1e-8
    (True, True)
    """
    m = network.manifold
    if m is None:
        raise BadInput("network: needs a target manifold", param="network")
    dt = 0.05 * network.tau / kappa
    u, t, last = m.u0.unsqueeze(0), 0.0, float("inf")
    with torch.no_grad():
        while True:
            res = float((network.field(u) * network.tau).norm() / m.norm)
            if res <= tol or res > 0.5 * last or t >= max_time * network.tau / kappa:
                break
            u = simulate(network, u, 40 * dt, dt, method="rk4", save_every=40,
                         diagnostics=False).u[-1]
            t, last = t + 40 * dt, res
        own = TargetManifold(network.geometry, network.activation, u[0])
        gap = float(m.distance(u[0]).distance)
    return OwnAttractor(gap, fixed_point_residual(_on_manifold(network, own)), t, own)


def _on_manifold(network: HopfieldNetwork, manifold: TargetManifold) -> HopfieldNetwork:
    """The same network (shared parameters) measured against ``manifold``."""
    view = copy.copy(network)
    view.manifold = manifold
    return view


@dataclass(frozen=True)
class NormalSpectrum(Result):
    """The Jacobian spectrum at one manifold point against ``-kappa / tau``.

    Attributes
    ----------
    kappa : prescribed rate (1/tau).
    min, max : smallest and largest normal eigenvalue, times tau.
    fraction_within : fraction of normal eigenvalues within ``tol`` (relative) of ``-kappa``.
    worst_relative : ``max |lambda tau + kappa| / kappa`` over the normal eigenvalues.
    n_zero : eigenvalues with ``|lambda tau| <= zero_tol``; ``tangent`` the ``dim`` eigenvalues
        nearest zero (the tangent ones).
    """

    kappa: float
    min: float
    max: float
    fraction_within: float
    worst_relative: float
    n_zero: int
    tangent: tuple[float, ...]
    count: int
    tol: float
    zero_tol: float

    def ok(self, dim: int) -> bool:
        """Every normal eigenvalue within ``tol`` and exactly ``dim`` near zero."""
        return self.worst_relative <= self.tol and self.n_zero == dim

    def to_dict(self) -> dict:
        """Plain dict."""
        return asdict(self)


def normal_spectrum(network: HopfieldNetwork, kappa: float, tol: float = 0.05,
                    zero_tol: float = NEUTRAL_TOL, psi=None) -> NormalSpectrum:
    """Normal eigenvalues of the Jacobian at ``u*(psi)`` compared with ``-kappa / tau``."""
    ev = jacobian_spectrum(network, psi) * network.tau
    dim = network.geometry.dim
    order = ev.abs().argsort()
    tangent, normal = ev[order[:dim]], ev[order[dim:]]
    rel = (normal + kappa).abs() / kappa
    return NormalSpectrum(float(kappa), float(normal.min()), float(normal.max()),
                          float((rel <= tol).double().mean()), float(rel.max()),
                          int((ev.abs() <= zero_tol).sum()), tuple(float(x) for x in tangent),
                          int(normal.numel()), tol, zero_tol)


@dataclass(frozen=True)
class FieldEnergyError(Result):
    """Restoring field and energy against the targets, on perturbations of one size range.

    Attributes
    ----------
    field_error : dict
        Per kind, the largest ``||tau f(u) + kappa delta|| / (kappa ||delta||)``.
    field_error_median : dict
        Per kind, the median of the same.
    energy_ratio : dict
        Per kind, ``(min, max)`` of ``(E(u) - E(M)) / (kappa B)``.
    energy_ratio_quadratic : dict
        Per kind, ``(min, max)`` of ``(E(u) - E(M)) / (kappa/2 ||delta||_D^2)``.
    strength : tuple of float
        The range of relative perturbation sizes.
    """

    field_error: dict
    field_error_median: dict
    energy_ratio: dict
    energy_ratio_quadratic: dict
    strength: tuple[float, float]
    count: int

    def worst_field(self) -> float:
        """Largest field error over kinds."""
        return max(self.field_error.values())

    def worst_energy(self) -> float:
        """Largest ``|ratio - 1|`` of the Bregman energy ratio over kinds."""
        return max(max(abs(a - 1), abs(b - 1)) for a, b in self.energy_ratio.values())

    def to_dict(self) -> dict:
        """Plain dict."""
        return asdict(self)


def field_energy_error(network: HopfieldNetwork, kappa: float, count: int = 64,
                       strength: tuple[float, float] = (0.03, 0.3), seed: int = 12345,
                       kinds: tuple[str, ...] = PROBES) -> FieldEnergyError:
    """Measure the restoring field and energy rise on held-out perturbations.

    States ``u*(psi) + s ||u*|| d`` with ``d`` from :func:`probe_directions`, ``s`` uniform in
    ``strength``; ``delta = u - u*(psi_hat)`` with the nearest point of :func:`nearest_point`.
    """
    m = network.manifold
    if m is None:
        raise BadInput("network: needs a target manifold", param="network")
    g = network.geometry
    gen = torch.Generator().manual_seed(seed)
    fe, fm, er, eq = {}, {}, {}, {}
    with torch.no_grad():
        e_m = float(network.energy(m.u0))
        for kind in kinds:
            psi = g.random_phase(count, gen)
            s = strength[0] + (strength[1] - strength[0]) * torch.rand(
                count, generator=gen, dtype=torch.float64)
            u = m.u_star(psi) + (s * m.norm).reshape((-1,) + (1,) * g.dim) * probe_directions(
                m, psi, kind, gen)
            near = nearest_point(m, u)
            us = m.u_star(near)
            delta = u - us
            f = network.field(u) * network.tau
            err = (f + kappa * delta).flatten(1).norm(dim=-1) / (
                kappa * delta.flatten(1).norm(dim=-1))
            rise = network.energy(u) - e_m
            quad = 0.5 * kappa * (network.activation.derivative(us) * delta**2).flatten(1).sum(-1)
            ratio = rise / (kappa * bregman(m, u, near))
            ratio_q = rise / quad
            fe[kind], fm[kind] = float(err.max()), float(err.median())
            er[kind] = (float(ratio.min()), float(ratio.max()))
            eq[kind] = (float(ratio_q.min()), float(ratio_q.max()))
    return FieldEnergyError(fe, fm, er, eq, tuple(strength), count)


@dataclass(frozen=True)
class DecayRates(Result):
    """Measured decay rates of small perturbations, per probe kind, in units of ``1/tau``.

    Attributes
    ----------
    early, late : per kind, the rate ``-d log dist / dt`` over ``[0, 1/kappa]`` and over
        ``[4/kappa, 6/kappa]`` (the worst of the runs, farthest from ``kappa``).
    energy_ok : per kind, whether the energy never rose (the audit of every run).
    """

    kappa: float
    early: dict
    late: dict
    energy_ok: dict
    size: float

    def worst_relative(self) -> float:
        """``max |rate - kappa| / kappa`` over kinds and both windows."""
        rates = list(self.early.values()) + list(self.late.values())
        return max(abs(r - self.kappa) / self.kappa for r in rates)

    def to_dict(self) -> dict:
        """Plain dict."""
        return asdict(self)


def decay_rates(network: HopfieldNetwork, kappa: float, count: int = 4, size: float = 1e-3,
                seed: int = 777, kinds: tuple[str, ...] = PROBES) -> DecayRates:
    """Simulate small perturbations of every kind and measure how fast they decay.

    States ``u*(psi) + size ||u*|| d`` are integrated (rk4, ``dt = 0.05 tau / kappa``) for
    ``6 tau / kappa``; the Euclidean distance to the manifold gives the rates.
    """
    m = network.manifold
    g = network.geometry
    gen = torch.Generator().manual_seed(seed)
    dt = 0.05 * network.tau / kappa
    early, late, ok = {}, {}, {}
    for kind in kinds:
        psi = g.random_phase(count, gen)
        u0 = m.u_star(psi) + size * m.norm * probe_directions(m, psi, kind, gen)
        tr = simulate(network, u0, 120 * dt, dt, method="rk4", save_every=20)
        logd = tr.distance.log()  # saved at t = k / kappa, k = 0..6
        t = tr.t
        e = (logd[0] - logd[1]) / (t[1] - t[0])
        lt = (logd[4] - logd[6]) / (t[6] - t[4])
        e, lt = e * network.tau, lt * network.tau
        early[kind] = float(e[(e - kappa).abs().argmax()])
        late[kind] = float(lt[(lt - kappa).abs().argmax()])
        ok[kind] = energy_audit(tr).ok
    return DecayRates(float(kappa), early, late, ok, size)


@dataclass(frozen=True)
class AttractionReport(Result):
    """Outcome of :func:`attraction_report`.

    Attributes
    ----------
    kappa : float
        The prescribed rate (1/tau).
    normal_spectrum : NormalSpectrum
    field_energy : FieldEnergyError
        Perturbations up to relative size 0.3.
    field_error_max, energy_ratio_error_max : float
        Their worst relative errors.
    failed : list of str
        The measures that missed ``kappa`` (the spectrum by ``tol``, the neutral count, the
        simulated rates by ``3 tol``, the energy audit), each with its numbers; empty if none.
    decay : DecayRates or None
        Simulated decay rates (None when not asked; then left out of ``to_dict``).
    decay_worst_relative : float or None
        Their worst relative distance from ``kappa``.
    attractor : OwnAttractor or None
        The network's own attractor, against which everything above is measured, and its gap
        to the target manifold (None: measured against the target itself).
    """

    kappa: float
    normal_spectrum: NormalSpectrum
    field_energy: FieldEnergyError
    field_error_max: float
    energy_ratio_error_max: float
    failed: list[str]
    decay: DecayRates | None = None
    decay_worst_relative: float | None = None
    attractor: OwnAttractor | None = None

    def to_dict(self) -> dict:
        """The fields as JSON (``decay`` entries only when measured)."""
        out = super().to_dict()
        if self.decay is None:
            del out["decay"], out["decay_worst_relative"]
        if self.attractor is None:
            del out["attractor"]
        return out


def attraction_report(network: HopfieldNetwork, kappa: float, tol: float = 0.05,
                      decay: bool = True, own: bool = True) -> AttractionReport:
    """Normal spectrum, restoring field, energy ratio and (optionally) simulated decay rates,
    measured against the network's own attractor.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    kappa : float
        The prescribed normal rate (1/tau).
    tol : float
        Relative tolerance of the normal spectrum (the simulated rates get ``3 tol``).
    decay : bool
        Simulate the decay rates.
    own : bool
        Measure against the network's own attractor (:func:`own_attractor`; its ``gap`` to the
        target manifold must be at most :data:`GAP_TOL`); False: against the target manifold.

    Returns
    -------
    AttractionReport
        With ``failed``: the names of the measures that missed ``kappa`` (the spectrum by
        ``tol``, the neutral count, the simulated rates by ``3 tol``, the energy audit, the
        gap), each with its numbers.
    """
    dim = network.geometry.dim
    attractor = own_attractor(network, kappa) if own else None
    failed = []
    if attractor is not None:
        network = _on_manifold(network, attractor.manifold)
        if not attractor.gap <= GAP_TOL:
            failed.append(f"attractor gap (the network rests {attractor.gap:.3g} of ||u*|| "
                          f"from the target manifold, more than {GAP_TOL:g})")
    ns = normal_spectrum(network, kappa, tol)
    fe = field_energy_error(network, kappa)
    if ns.worst_relative > tol:
        failed.append(f"normal_spectrum (eigenvalues in [{ns.min:.4g}, {ns.max:.4g}] tau^-1, "
                      f"{ns.fraction_within:.0%} within {tol:.0%} of -kappa = {-kappa:g})")
    if ns.n_zero != dim:
        failed.append(f"neutral eigenvalues ({ns.n_zero} within {ns.zero_tol:g} of 0, "
                      f"expected {dim})")
    dr = worst = None
    if decay:
        dr = decay_rates(network, kappa, count=2)
        worst = dr.worst_relative()
        if worst > 3 * tol:
            failed.append(f"decay (simulated rates {worst:.0%} from kappa)")
        if not all(dr.energy_ok.values()):
            failed.append("energy audit (the energy rose along a relaxation)")
    return AttractionReport(kappa, ns, fe, fe.worst_field(), fe.worst_energy(), failed, dr,
                            worst, attractor)
