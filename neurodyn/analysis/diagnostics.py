"""Diagnostics of attractor networks: spectrum, connectivity, energy audit, path integration.

Diffusion of the bump (its estimate with an interval and its theory) lives in
:mod:`neurodyn.analysis.drift`.

Each diagnostic is a plain function of a network or a
:class:`~neurodyn.dynamics.simulation.SimulationResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, Result

from ..dynamics.simulation import SimulationResult
from ..network import HopfieldNetwork

__all__ = [
    "jacobian_spectrum", "SpectrumSummary", "summarize_spectrum", "ConnectivityProfile",
    "connectivity_profile", "kernel_profile", "energy_audit", "EnergyAudit", "InputEnergyAudit",
    "power_residual", "path_integration_error", "PathErrorStats", "fixed_point_residual",
]


def _manifold(network: HopfieldNetwork):
    if network.manifold is None:
        raise BadInput("network: has no target manifold; build it with one (fit does)",
                       param="network")
    return network.manifold


def fixed_point_residual(network: HopfieldNetwork, count: int = 16) -> float:
    """Largest relative field ``||tau du/dt|| / ||u*||`` over ``count`` manifold points."""
    m = _manifold(network)
    g = network.geometry
    psi = torch.linspace(0, 2 * math.pi, count + 1, dtype=torch.float64)[:-1]
    psi = psi.unsqueeze(-1).expand(count, g.dim)
    with torch.no_grad():
        res = network.field(m.u_star(psi)) * network.tau
    return float(res.flatten(1).norm(dim=-1).max() / m.norm)


def jacobian_spectrum(network: HopfieldNetwork, psi=None) -> torch.Tensor:
    """Eigenvalues of the autonomous Jacobian at the manifold point ``psi`` (default 0).

    ``J = -(I + H_F D)/tau`` is similar to the symmetric ``D^{1/2} J D^{-1/2}``, so its spectrum
    is real; it is computed from the symmetric form.

    Returns
    -------
    Tensor ``(N,)``, in units of ``1/tau``'s time unit, sorted in decreasing order.
    """
    m = _manifold(network)
    g = network.geometry
    psi = torch.zeros(g.dim, dtype=torch.float64) if psi is None else torch.as_tensor(psi)
    u = m.u_star(psi.reshape(g.dim))
    with torch.no_grad():
        jac = network.jacobian(u)
        d = network.activation.derivative(u).reshape(-1).sqrt()
        sym = d[:, None] * jac / d[None, :]
        ev = torch.linalg.eigvalsh(0.5 * (sym + sym.T))
    return ev.flip(0)


@dataclass(frozen=True)
class SpectrumSummary(Result):
    """How many eigenvalues are neutral and how fast the rest decay.

    Attributes
    ----------
    n_zero : eigenvalues with ``|lambda| <= zero_tol``.
    zero : those eigenvalues.
    slowest_nonzero : the largest remaining eigenvalue (should be ``<= -kappa_min``).
    zero_tol : the tolerance used.
    """

    n_zero: int
    zero: list[float]
    slowest_nonzero: float
    zero_tol: float


def summarize_spectrum(ev: torch.Tensor, zero_tol: float = 1e-3) -> SpectrumSummary:
    """Count neutral eigenvalues (``|lambda| <= zero_tol``) and find the slowest decaying one."""
    near = ev.abs() <= zero_tol
    rest = ev[~near]
    return SpectrumSummary(int(near.sum()), [float(x) for x in ev[near]],
                           float(rest.max()) if rest.numel() else float("nan"), zero_tol)


@dataclass(frozen=True)
class ConnectivityProfile(Result):
    """Effective connectivity ``W_eff = -Hess F`` averaged along diagonals.

    Attributes
    ----------
    kernel : weight from a neuron to the neuron at each offset, shape ``geometry.shape``.
    distance : ``(K,)`` sorted distinct offsets on the manifold (radians of phase).
    weight : ``(K,)`` mean weight at each distance.
    """

    kernel: torch.Tensor
    distance: torch.Tensor
    weight: torch.Tensor

    @property
    def at_zero(self) -> float:
        """``w(0)``, the self/nearest weight (local excitation when positive)."""
        return float(self.weight[0])

    def zero_crossings(self) -> list[float]:
        """Distances where ``w`` changes sign (linear interpolation), in ``(0, max]``."""
        w, d = self.weight, self.distance
        out = []
        for i in range(len(w) - 1):
            if (w[i] > 0) != (w[i + 1] > 0) and w[i] != 0:
                t = float(w[i] / (w[i] - w[i + 1]))
                out.append(float(d[i] + t * (d[i + 1] - d[i])))
        return out

    def min_beyond(self, start: float) -> float:
        """Most negative weight at distances ``> start`` (surround inhibition when < 0)."""
        sel = self.distance > start
        return float(self.weight[sel].min()) if sel.any() else float("nan")


def connectivity_profile(network: HopfieldNetwork, psi=None) -> ConnectivityProfile:
    """Effective connectivity at the manifold: ``W_eff = -d^2 F / dr^2`` at ``r*(psi)``.

    .. math:: w(\\delta) = \\frac{1}{N} \\sum_i W_{\\mathrm{eff}}[i, i + \\delta]

    then grouped by manifold distance ``|delta|`` (the flat metric of the sheet for a torus).
    """
    m = _manifold(network)
    g = network.geometry
    psi = torch.zeros(g.dim, dtype=torch.float64) if psi is None else torch.as_tensor(psi)
    with torch.no_grad():
        h = network.interaction_hessian(m.u_star(psi.reshape(g.dim)))
    w = -h.reshape((g.size,) + g.shape)
    idx = torch.stack(torch.meshgrid(*[torch.arange(n) for n in g.shape], indexing="ij"))
    idx = idx.reshape(g.dim, -1)
    kernel = torch.zeros(g.shape, dtype=w.dtype)
    for i in range(g.size):
        shifts = tuple(-int(idx[a, i]) for a in range(g.dim))
        kernel += torch.roll(w[i], shifts=shifts, dims=tuple(range(g.dim)))
    kernel /= g.size
    return kernel_profile(kernel, g)


def kernel_profile(kernel: torch.Tensor, geometry) -> ConnectivityProfile:
    """A kernel by offset grouped into its mean by distance on the sheet.

    Parameters
    ----------
    kernel : torch.Tensor, shape (*geometry.shape)
        ``w(delta)``, the weight from a neuron to the neuron at offset ``delta``.
    geometry : Geometry
        The ring or torus (distances from :meth:`~neurodyn.geometry.base.Geometry.neuron_distance`).

    Returns
    -------
    ConnectivityProfile
    """
    dist = geometry.neuron_distance().reshape(-1)
    key = torch.round(dist * 1e9) / 1e9
    uniq, inv = torch.unique(key, return_inverse=True)
    weight = torch.zeros(len(uniq), dtype=kernel.dtype).index_add_(0, inv, kernel.reshape(-1))
    weight /= torch.bincount(inv, minlength=len(uniq)).to(kernel.dtype)
    return ConnectivityProfile(kernel, uniq, weight)


@dataclass(frozen=True)
class EnergyAudit(Result):
    """Outcome of :func:`energy_audit`.

    Attributes
    ----------
    max_increase : float
        Largest increase of the energy between saved steps (absolute; <= 0 when it only falls).
    violations : int
        (step, run) pairs whose increase exceeds the tolerance.
    tolerance_rtol : float
        The relative tolerance ``rtol``.
    ok : bool
        No violation.
    """

    max_increase: float
    violations: int
    tolerance_rtol: float
    ok: bool


@dataclass(frozen=True)
class InputEnergyAudit(Result):
    """Outcome of :func:`energy_audit` for a run driven by an input ``I(t)``.

    Attributes
    ----------
    kind : str
        ``"static"``: a constant current, audited on ``E - I.r`` (a Lyapunov function of the
        driven dynamics); ``"power"``: a time-varying input (velocity transport or a current
        that changes), audited by the power balance at every saved step.
    max_increase : float
        ``"static"``: largest increase of ``E - I.r`` between saved steps; ``"power"``: largest
        ``|dE/dt + tau sum phi'(u) udot^2 - sum phi'(u) udot I|`` (energy per unit time).
    violations : int
        (step, run) pairs outside the tolerance.
    tolerance : float
        ``"static"``: the relative tolerance ``rtol``; ``"power"``: the absolute tolerance on
        the balance per unit time.
    ok : bool
        No violation.
    """

    kind: str
    max_increase: float
    violations: int
    tolerance: float
    ok: bool


def energy_audit(trajectory: SimulationResult, rtol: float = 1e-10,
                 network: HopfieldNetwork | None = None, power_atol: float = 1e-6,
                 ) -> EnergyAudit | InputEnergyAudit:
    """Check that the energy never increases between saved steps; input-aware for driven runs.

    Autonomous runs: ``E`` must not increase by more than ``rtol * (1 + |E|)`` (float
    rounding) between saved steps. A run with a constant current ``I`` (``trajectory.current``
    the same at every saved time, no velocity) is audited on ``E - I.r``: with
    ``tau udot = -u - grad F + b + I`` it is the Hopfield energy of the bias ``b + I``, so it
    falls. Any other input (velocity transport, a current that changes) is audited by the power
    balance at every saved step,

    .. math:: \\frac{dE}{dt} = \\nabla_u E \\cdot \\dot u
              = -\\tau \\sum_i \\phi'(u_i) \\dot u_i^2 + \\sum_i \\phi'(u_i) \\dot u_i I_i,

    with ``dE/dt`` from the energy's own gradient (autograd) and ``udot`` from the network's
    field: the two sides differ exactly when the field's ``grad F`` is not the gradient of the
    energy ``F`` it reports.

    Parameters
    ----------
    trajectory : SimulationResult
        A run of :func:`~neurodyn.dynamics.simulation.simulate` (its inputs are read from it).
    rtol : float
        Relative tolerance of the monotone checks.
    network : HopfieldNetwork or None
        The network that ran; needed for the power balance of a time-varying input.
    power_atol : float
        Tolerance of the power balance, energy per unit time.

    Returns
    -------
    EnergyAudit (autonomous run) or InputEnergyAudit (driven run)

    Raises
    ------
    BadInput
        A run with a time-varying input audited without its ``network``: the autonomous
        audit would report the input's work as violations.
    """
    e = trajectory.energy
    if e.shape[0] < 2:
        raise BadInput("trajectory: needs at least two saved steps for an energy audit",
                       param="trajectory")
    if trajectory.velocity is None and trajectory.current is None:
        inc = e[1:] - e[:-1]
        bad = inc > rtol * (1 + e[:-1].abs())
        return EnergyAudit(float(inc.max()), int(bad.sum()), rtol, not bool(bad.any()))
    static = _static_current(trajectory)
    if static is not None:
        e = e - (static * trajectory.r).flatten(2).sum(-1)
        inc = e[1:] - e[:-1]
        bad = inc > rtol * (1 + e[:-1].abs())
        return InputEnergyAudit("static", float(inc.max()), int(bad.sum()), rtol,
                                not bool(bad.any()))
    if network is None:
        raise BadInput("network: the run was driven by a time-varying input (velocity or a "
                       "changing current); pass the network that ran for the power balance "
                       "(the autonomous audit would count the input's work as violations)",
                       param="network")
    res = power_residual(network, trajectory)
    bad = res.abs() > power_atol
    return InputEnergyAudit("power", float(res.abs().max()), int(bad.sum()), power_atol,
                            not bool(bad.any()))


def _static_current(trajectory: SimulationResult) -> torch.Tensor | None:
    """The constant current of a run without velocity, ``(B, *shape)``; None otherwise."""
    if trajectory.velocity is not None:
        return None
    u = trajectory.u
    cur = [torch.as_tensor(trajectory.current(float(t)), dtype=u.dtype, device=u.device)
           .expand(u.shape[1:]) for t in trajectory.t]
    return cur[0] if all(torch.equal(c, cur[0]) for c in cur[1:]) else None


def power_residual(network: HopfieldNetwork, trajectory: SimulationResult) -> torch.Tensor:
    """Power balance ``dE/dt + tau sum phi' udot^2 - sum phi' udot I`` at every saved step.

    ``dE/dt = grad_u E . udot`` with ``grad_u E`` by autograd of
    :meth:`~neurodyn.network.HopfieldNetwork.energy` and ``udot`` the network's field with the
    run's inputs at the saved time; ``I = tau (udot - udot|_{I=0})`` is the input current
    (velocity coupling plus current).

    Parameters
    ----------
    network : HopfieldNetwork
        The network that ran.
    trajectory : SimulationResult
        Its run, ``u`` of shape ``(T, B, *shape)``.

    Returns
    -------
    torch.Tensor, shape (T, B)
        The residual, energy per unit time (zero to rounding for a consistent network).
    """
    g, u = network.geometry, trajectory.u.detach()
    times = [float(t) for t in trajectory.t]
    v = c = None
    if trajectory.velocity is not None:
        v = torch.stack([torch.as_tensor(trajectory.velocity(t), dtype=u.dtype, device=u.device)
                         .expand(u.shape[1], g.dim) for t in times])  # (T, B, dim)
    if trajectory.current is not None:
        c = torch.stack([torch.as_tensor(trajectory.current(t), dtype=u.dtype, device=u.device)
                         .expand(u.shape[1:]) for t in times])  # (T, B, *shape)
    u = u.requires_grad_(True)
    (grad_e,) = torch.autograd.grad(network.energy(u).sum(), u)
    with torch.no_grad():
        udot = network.field(u, v, current=c)
        drive = network.tau * (udot - network.field(u))  # I, whatever couples the input
        dphi = network.activation.derivative(u)
        de_dt = (grad_e * udot).flatten(-g.dim).sum(-1)
        power = (dphi * udot * (drive - network.tau * udot)).flatten(-g.dim).sum(-1)
    return de_dt - power


@dataclass(frozen=True)
class PathErrorStats(Result):
    """Outcome of :func:`path_integration_error` (radians).

    Attributes
    ----------
    rms_final : float
        RMS over runs and axes at the last saved step.
    max_final : float
        Largest absolute error at the last saved step.
    rms_over_time : list of float
        RMS per saved step.
    """

    rms_final: float
    max_final: float
    rms_over_time: list[float]


def path_integration_error(trajectory: SimulationResult) -> PathErrorStats:
    """Wrapped error between decoded phase and integrated input velocity.

    Returns
    -------
    PathErrorStats
    """
    err = trajectory.path_error()  # (T, B, dim)
    rms_t = err.pow(2).mean(dim=(1, 2)).sqrt()
    return PathErrorStats(float(rms_t[-1]), float(err[-1].abs().max()),
                          [float(x) for x in rms_t])
