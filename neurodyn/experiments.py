"""Standard experiments on a network: fit report, restoration, path integration, diffusion.

Each returns a typed result (a frozen dataclass with ``to_dict()`` giving the JSON-ready
numbers; trajectories are kept as attributes but left out of ``to_dict``). Nothing here writes
files: :mod:`neurodyn.runs` writes the figures and ``metrics.json`` of a run directory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .diagnostics import (
    ConnectivityProfile,
    SpectrumSummary,
    connectivity_profile,
    energy_audit,
    fixed_point_residual,
    jacobian_spectrum,
    path_integration_error,
    summarize_spectrum,
)
from .inputs import Velocity, parse_velocity
from .network import HopfieldNetwork
from .perturbations import PERTURBATIONS, perturb, random_strengths
from .simulation import SimulationResult, simulate

__all__ = ["NetworkReport", "network_report", "RestorationStats", "RestorationResult",
           "restoration", "PathIntegrationResult", "path_integration", "DiffusionResult",
           "diffusion"]


@dataclass(frozen=True)
class NetworkReport:
    """Jacobian spectrum, connectivity and fixed-point residual of a network at its manifold.

    Attributes
    ----------
    fixed_point_residual : float
        Relative residual of the fixed-point equation on the manifold.
    spectrum : SpectrumSummary
        Neutral eigenvalues and the slowest decaying one.
    eigenvalues : Tensor, shape (N,)
        The Jacobian's eigenvalues (1/tau), descending.
    connectivity : ConnectivityProfile
        The effective connectivity profile ``w(delta)``.
    """

    fixed_point_residual: float
    spectrum: SpectrumSummary
    eigenvalues: torch.Tensor = field(repr=False, compare=False)
    connectivity: ConnectivityProfile = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """``fixed_point_residual``; ``jacobian`` (``n_zero``, ``zero``, ``slowest_nonzero``,
        ``zero_tol``); ``connectivity`` (``w0``, ``min_far`` = most negative weight beyond
        pi/3, ``zero_crossings``)."""
        s, prof = self.spectrum, self.connectivity
        return {
            "fixed_point_residual": self.fixed_point_residual,
            "jacobian": {"n_zero": s.n_zero, "zero": s.zero,
                         "slowest_nonzero": s.slowest_nonzero, "zero_tol": s.zero_tol},
            "connectivity": {"w0": prof.at_zero, "min_far": prof.min_beyond(math.pi / 3),
                             "zero_crossings": prof.zero_crossings()},
        }


def network_report(network: HopfieldNetwork, zero_tol: float = 1e-3) -> NetworkReport:
    """Spectrum, connectivity and fixed-point residual of a network at its manifold.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    zero_tol : float
        Eigenvalues with ``|lambda| <= zero_tol`` count as neutral.

    Returns
    -------
    NetworkReport

    Examples
    --------
    >>> from neurodyn.fitting import FitConfig, fit
    >>> report = network_report(fit(FitConfig(n=32, steps=5)).network)
    >>> report.spectrum.n_zero, sorted(report.to_dict())
    (1, ['connectivity', 'fixed_point_residual', 'jacobian'])
    """
    ev = jacobian_spectrum(network)
    return NetworkReport(fixed_point_residual(network), summarize_spectrum(ev, zero_tol), ev,
                         connectivity_profile(network))


@dataclass(frozen=True)
class RestorationStats:
    """Restoration after one kind of perturbation.

    Attributes
    ----------
    fraction_within : float
        Fraction of states whose final distance is ``<= threshold``.
    final_max, final_median : float
        Final relative distances to the manifold.
    initial_min, initial_max : float
        Measured initial distances.
    energy : dict
        The energy audit (:func:`~neurodyn.diagnostics.energy_audit`).
    """

    fraction_within: float
    final_max: float
    final_median: float
    initial_min: float
    initial_max: float
    energy: dict

    def to_dict(self) -> dict:
        """The attributes as a dict."""
        return {"fraction_within": self.fraction_within, "final_max": self.final_max,
                "final_median": self.final_median, "initial_min": self.initial_min,
                "initial_max": self.initial_max, "energy": dict(self.energy)}


@dataclass(frozen=True)
class RestorationResult:
    """Outcome of :func:`restoration`.

    Attributes
    ----------
    kinds : dict of str to RestorationStats
        Per perturbation kind.
    threshold, duration : float
        Distance threshold and simulated time (tau).
    count : int
        States per kind.
    trajectories : dict of str to SimulationResult
        The runs, per kind (not in ``to_dict``).
    """

    kinds: dict[str, RestorationStats]
    threshold: float
    duration: float
    count: int
    trajectories: dict[str, SimulationResult] = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """One entry per kind, with ``threshold``, ``duration`` and ``count``."""
        out: dict = {k: v.to_dict() for k, v in self.kinds.items()}
        out.update(threshold=self.threshold, duration=self.duration, count=self.count)
        return out


def restoration(network: HopfieldNetwork, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0,
                device: str = "cpu") -> RestorationResult:
    """Relaxation of perturbed manifold states back to the manifold.

    For each kind, ``count`` states at random manifold points are perturbed with relative
    strengths uniform in ``strength`` and simulated autonomously for ``duration``; the result
    reports the final relative distance ``min_psi ||u - u*(psi)|| / ||u*||``.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    count : int
        States per kind, >= 1.
    kinds : tuple of str
        Perturbation kinds (:data:`~neurodyn.perturbations.PERTURBATIONS` except ``none``).
    strength : (float, float)
        Range of the relative perturbation size.
    duration, dt : float
        Simulated time and step (tau).
    threshold : float
        Distance that counts as restored.
    seed : int
        Seeds the manifold points, strengths and perturbations.
    device : str
        Where the runs are simulated (the trajectories are returned on the CPU).

    Returns
    -------
    RestorationResult

    Examples
    --------
    >>> from neurodyn.fitting import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=5)).network
    >>> res = restoration(net, count=2, kinds=("noise",), duration=2.0)
    >>> sorted(res.to_dict()), res.trajectories["noise"].u.shape
    (['count', 'duration', 'noise', 'threshold'], torch.Size([3, 2, 32]))
    """
    if network.manifold is None:
        raise ValueError("network: restoration needs a network with a target manifold")
    if not kinds:
        raise ValueError("kinds: give at least one perturbation kind")
    for k in kinds:
        if k not in PERTURBATIONS or k == "none":
            raise ValueError(f"kinds: {k!r} unknown; choose from {PERTURBATIONS[1:]}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count={count!r}: must be an integer >= 1")
    gen = torch.Generator().manual_seed(seed)
    m = network.manifold
    stats, trajs = {}, {}
    for kind in kinds:
        psi = network.geometry.random_phase(count, gen)
        s = random_strengths(count, strength[0], strength[1], gen)
        u0 = perturb(m, psi, kind, s, gen)
        tr = simulate(network, u0, duration, dt, save_every=max(1, int(round(1.0 / dt))),
                      device=device).cpu()
        d = tr.distance
        stats[kind] = RestorationStats(
            fraction_within=float((d[-1] <= threshold).double().mean()),
            final_max=float(d[-1].max()), final_median=float(d[-1].median()),
            initial_min=float(d[0].min()), initial_max=float(d[0].max()),
            energy=energy_audit(tr))
        trajs[kind] = tr
    return RestorationResult(stats, float(threshold), float(duration), count, trajs)


@dataclass(frozen=True)
class PathIntegrationResult:
    """Outcome of :func:`path_integration`.

    Attributes
    ----------
    rms_final, max_final : float
        Wrapped error ``decoded - integrated velocity`` at the end (rad), RMS and max.
    max_speed : float
        Largest ``|v|`` of the input (rad/tau).
    runs : int
        Number of runs.
    duration, dt : float
        Simulated time and step (tau).
    max_distance : float
        Largest relative distance to the manifold over the run.
    trajectory : SimulationResult
        The run (not in ``to_dict``).
    """

    rms_final: float
    max_final: float
    max_speed: float
    runs: int
    duration: float
    dt: float
    max_distance: float
    trajectory: SimulationResult = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """The numbers (the trajectory left out)."""
        return {"rms_final": self.rms_final, "max_final": self.max_final,
                "max_speed": self.max_speed, "runs": self.runs, "duration": self.duration,
                "dt": self.dt, "max_distance": self.max_distance}


def path_integration(network: HopfieldNetwork, velocity: Velocity | str = "ou:0.2:10:0.5",
                     runs: int = 64, duration: float = 200.0, dt: float = 0.1,
                     seed: int = 0, device: str = "cpu") -> PathIntegrationResult:
    """Velocity-driven bump motion compared with the integrated input velocity.

    .. math:: e(t) = \\mathrm{wrap}(\\hat\\psi(t) - \\psi(0) - \\int_0^t v(s)\\,ds)

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and a transport.
    velocity : Velocity or str
        The input velocity (rad/tau) or its spec string.
    runs : int
        Runs started at random manifold points.
    duration, dt : float
        Simulated time and step (tau).
    seed : int
        Seeds the starting points and the velocity.
    device : str
        Where the runs are simulated (the trajectory is returned on the CPU).

    Returns
    -------
    PathIntegrationResult

    Examples
    --------
    >>> from neurodyn.fitting import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=5)).network
    >>> res = path_integration(net, "constant:0.1", runs=2, duration=2.0)
    >>> res.runs, res.trajectory.decoded.shape
    (2, torch.Size([3, 2, 1]))
    """
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    tr = _from_manifold(network, runs, duration, dt, seed, velocity=velocity, diagnostics=True,
                        device=device)
    err = path_integration_error(tr)
    steps = int(round(duration / dt))
    vmax = max(float(velocity(i * dt).abs().max()) for i in range(0, steps + 1))
    return PathIntegrationResult(err["rms_final"], err["max_final"], vmax, runs, duration, dt,
                                 float(tr.distance.max()), tr)


def _from_manifold(network: HopfieldNetwork, runs: int, duration: float, dt: float, seed: int,
                   **kwargs) -> SimulationResult:
    """Simulate ``runs`` states started at random points of the manifold (seeded), saving about
    once per tau; ``kwargs`` go to :func:`~neurodyn.simulation.simulate` (the result is
    returned on the CPU)."""
    if network.manifold is None:
        raise ValueError("network: needs a target manifold to start from")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs={runs!r}: must be an integer >= 1")
    gen = torch.Generator().manual_seed(seed)
    u0 = network.manifold.u_star(network.geometry.random_phase(runs, gen))
    return simulate(network, u0, duration, dt, seed=seed,
                    save_every=max(1, int(round(1.0 / dt))), **kwargs).cpu()


@dataclass(frozen=True)
class DiffusionResult:
    """Outcome of :func:`diffusion`.

    Attributes
    ----------
    D : float
        Measured diffusion coefficient per axis (rad^2/tau).
    D_low, D_high : float
        Its 95% bootstrap interval over runs.
    D_theory : float
        Predicted coefficient (per axis).
    ratio : float
        ``D / D_theory``.
    contains_theory : bool
        The interval contains the theory.
    lags, msd : list
        Lags (tau) and mean squared increments the fit used.
    noise : float
        The noise ``sigma`` on ``u``.
    runs : int
        Number of runs.
    duration : float
        Simulated time (tau).
    trajectory : SimulationResult
        The run (not in ``to_dict``).
    """

    D: float
    D_low: float
    D_high: float
    D_theory: float
    ratio: float
    contains_theory: bool
    lags: list
    msd: list
    noise: float
    runs: int
    duration: float
    trajectory: SimulationResult = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """The numbers (the trajectory left out)."""
        return {"D": self.D, "D_low": self.D_low, "D_high": self.D_high,
                "D_theory": self.D_theory, "ratio": self.ratio,
                "contains_theory": self.contains_theory, "lags": self.lags, "msd": self.msd,
                "noise": self.noise, "runs": self.runs, "duration": self.duration}


def diffusion(network: HopfieldNetwork, noise: float = 0.05, runs: int = 128,
              duration: float = 200.0, dt: float = 0.05, seed: int = 0,
              lags: tuple[float, ...] | None = None, device: str = "cpu") -> DiffusionResult:
    """Bump diffusion under additive noise on ``u``, against the one-neuron-noise theory.

    .. math:: \\langle (\\psi(t + \\ell) - \\psi(t))^2 \\rangle = 2 D \\ell

    ``D`` is fitted to the mean squared increments of the decoded phase at several lags, with a
    95% bootstrap interval over runs (:func:`neurodyn.drift.diffusion_estimate`); the theory is
    :func:`neurodyn.drift.diffusion_tensor_theory` (per axis).

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    noise : float
        ``sigma`` of the noise on ``u``, > 0.
    runs : int
        Runs started at random manifold points.
    duration, dt : float
        Simulated time and step (tau).
    seed : int
        Seeds the starting points, the noise and the bootstrap.
    lags : tuple of float or None
        Lags (tau) of the increments; default ``duration / 2**k`` for ``k = 6, 5, 4, 3``.
    device : str
        Where the runs are simulated.

    Returns
    -------
    DiffusionResult
    """
    from .drift import diffusion_estimate, diffusion_tensor_theory

    if isinstance(noise, bool) or not (isinstance(noise, (int, float)) and math.isfinite(noise)
                                       and noise > 0):
        raise ValueError(f"noise={noise!r}: must be a finite number > 0")
    tr = _from_manifold(network, runs, duration, dt, seed, noise=noise, diagnostics=False,
                        device=device)
    if lags is None:
        lags = tuple(duration / 2 ** k for k in (6, 5, 4, 3))
    est = diffusion_estimate(tr.decoded, tr.t, lags=lags, seed=seed)
    theory = float(diffusion_tensor_theory(network, noise).trace() / network.geometry.dim)
    return DiffusionResult(est.D, est.low, est.high, theory, est.D / theory,
                           bool(est.contains(theory)), list(est.lags), list(est.msd),
                           noise, runs, duration, tr)
