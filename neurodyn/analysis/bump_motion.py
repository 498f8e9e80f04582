"""Experiments on motion along the manifold: velocity-driven path integration and noise-driven
diffusion of the bump, each against its prediction.

Both start ``runs`` states at seeded random points of the target manifold and return a typed
result (a frozen :class:`_runkit.Result`; the trajectory is an artifact, not in ``to_dict``).
Nothing here writes files (:mod:`neurodyn.runs` does). Diffusion is measured and predicted by
:mod:`neurodyn.analysis.drift`, the one home of both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, Result, artifact
from _runkit.runtime import with_threads

from ..dynamics.inputs import Velocity, parse_velocity
from ..dynamics.simulation import SimulationResult, simulate
from ..geometry.populations import wrap_angle
from ..network import HopfieldNetwork
from .diagnostics import path_integration_error
from .drift import diffusion_estimate, diffusion_tensor_theory

__all__ = ["PathIntegrationResult", "path_integration", "unwrapped_error", "DiffusionResult",
           "diffusion", "from_manifold"]


@dataclass(frozen=True)
class PathIntegrationResult(Result):
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
    path_length : float
        Distance the command travelled, ``int |v| dt`` (rad), mean over runs.
    drift_final : float
        Unwrapped error at the end (rad), RMS over runs and axes (:func:`unwrapped_error`): a
        bump that falls behind by more than a turn still counts every turn.
    tolerance : float
        Relative tolerance of ``tracked``.
    tracked : bool
        ``drift_final <= tolerance * max(path_length, 1 rad)``: the bump followed the command to
        within ``tolerance`` of the distance travelled. False for a velocity coupling driven
        above its maximum tracked speed (:mod:`neurodyn.experiments.speed`).
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
    path_length: float
    drift_final: float
    tolerance: float
    tracked: bool
    trajectory: SimulationResult = artifact()


@with_threads
def path_integration(network: HopfieldNetwork, velocity: Velocity | str = "ou:0.2:10:0.5",
                     runs: int = 64, duration: float = 200.0, dt: float = 0.1,
                     seed: int = 0, device: str = "cpu",
                     tolerance: float = 0.05) -> PathIntegrationResult:
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
    tolerance : float
        Relative tolerance of ``tracked`` (fraction of the distance travelled), in (0, 1).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    PathIntegrationResult

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=5)).network
    >>> res = path_integration(net, "constant:0.1", runs=2, duration=2.0)
    >>> res.runs, res.trajectory.decoded.shape
    (2, torch.Size([3, 2, 1]))
    """
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    if isinstance(tolerance, bool) or not (isinstance(tolerance, (int, float))
                                           and 0 < tolerance < 1):
        raise BadInput(f"tolerance={tolerance!r}: must be in (0, 1)", param="tolerance")
    tr = from_manifold(network, runs, duration, dt, seed, velocity=velocity, diagnostics=True,
                       device=device)
    err = path_integration_error(tr)
    steps = int(round(duration / dt))
    v = torch.stack([velocity(i * dt).to(torch.float64).cpu() for i in range(0, steps + 1)])
    length = float((v[:-1].norm(dim=-1).sum(0) * dt).mean())
    drift = float(unwrapped_error(tr).pow(2).mean().sqrt())
    return PathIntegrationResult(err.rms_final, err.max_final, float(v.abs().max()), runs,
                                 duration, dt, float(tr.distance.max()), length, drift,
                                 float(tolerance), bool(drift <= tolerance * max(length, 1.0)),
                                 tr)


def unwrapped_error(trajectory: SimulationResult) -> torch.Tensor:
    """Unwrapped error ``decoded - reference`` at the end of a run, ``(B, dim)`` (rad).

    The wrapped errors of the increments between saved states are summed, which is exact while
    the error grows by less than pi between two saved states.

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> tr = path_integration(fit(FitConfig(n=32, steps=5)).network, "constant:0.1", runs=2,
    ...                       duration=2.0).trajectory
    >>> bool(unwrapped_error(tr).abs().max() < 1e-3)
    True
    """
    if trajectory.reference is None:
        raise BadInput("trajectory: the run had no velocity input", param="trajectory")
    dec = trajectory.decoded.to(torch.float64)
    ref = trajectory.reference.to(torch.float64)
    step = torch.diff(dec, dim=0) - torch.diff(ref, dim=0)
    return wrap_angle(dec[0] - ref[0]) + wrap_angle(step).sum(0)


def from_manifold(network: HopfieldNetwork, runs: int, duration: float, dt: float, seed: int,
                  **kwargs) -> SimulationResult:
    """Simulate ``runs`` states started at random points of the manifold (seeded), saving about
    once per tau; ``kwargs`` go to :func:`~neurodyn.dynamics.simulation.simulate` (the result is
    returned on the CPU).

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> tr = from_manifold(fit(FitConfig(n=32, steps=5)).network, 2, 2.0, 0.1, seed=0)
    >>> tuple(tr.u.shape)
    (3, 2, 32)
    """
    if network.manifold is None:
        raise BadInput("network: needs a target manifold to start from", param="network")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise BadInput(f"runs={runs!r}: must be an integer >= 1", param="runs")
    gen = torch.Generator().manual_seed(seed)
    u0 = network.manifold.u_star(network.geometry.random_phase(runs, gen))
    return simulate(network, u0, duration, dt, seed=seed,
                    save_every=max(1, int(round(1.0 / dt))), **kwargs).cpu()


@dataclass(frozen=True)
class DiffusionResult(Result):
    """Outcome of :func:`diffusion`.

    Attributes
    ----------
    D : float
        Measured diffusion coefficient per axis (rad^2/tau).
    D_low, D_high : float
        Its bootstrap interval over runs, of coverage ``level``.
    level : float
        Coverage of ``[D_low, D_high]`` (0.95 unless asked otherwise).
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
    level: float
    D_theory: float
    ratio: float
    contains_theory: bool
    lags: list
    msd: list
    noise: float
    runs: int
    duration: float
    trajectory: SimulationResult = artifact()


def default_lags(duration: float, spacing: float) -> tuple[float, ...]:
    """The default lags of :func:`diffusion`: ``duration / 2**k`` for ``k = 6, 5, 4, 3``, each
    rounded to a whole number (>= 1) of saved steps ``spacing``; a run too short for two
    distinct lags of that kind uses one and two saved steps.

    Raises ``BadInput`` when the run has fewer than three saved steps after the start.

    Examples
    --------
    >>> default_lags(200.0, 1.0)
    (3.0, 6.0, 12.0, 25.0)
    >>> default_lags(10.0, 1.0)
    (1.0, 2.0)
    """
    steps = int(math.floor(duration / spacing + 1e-9))
    if steps < 3:
        raise BadInput(f"duration={duration!r}: a diffusion estimate needs at least three "
                       f"saved steps of {spacing:g} tau", param="duration")
    k = sorted({max(1, round(duration / 2 ** j / spacing)) for j in (6, 5, 4, 3)})
    if len(k) < 2:
        k = [1, 2]
    return tuple(float(v * spacing) for v in k)


@with_threads
def diffusion(network: HopfieldNetwork, noise: float = 0.05, runs: int = 128,
              duration: float = 200.0, dt: float = 0.05, seed: int = 0,
              lags: tuple[float, ...] | None = None, device: str = "cpu",
              level: float = 0.95) -> DiffusionResult:
    """Bump diffusion under additive noise on ``u``, against the one-neuron-noise theory.

    .. math:: \\langle (\\psi(t + \\ell) - \\psi(t))^2 \\rangle = 2 D \\ell

    ``D`` is fitted to the mean squared increments of the decoded phase at several lags, with a
    bootstrap interval over runs (:func:`neurodyn.analysis.drift.diffusion_estimate`); the theory is
    :func:`neurodyn.analysis.drift.diffusion_tensor_theory` (per axis).

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
    level : float
        Coverage of the interval, in (0, 1). When several (network, noise) cells are judged
        together, ask each for ``1 - 0.05 / cells`` so that all of them contain a correct
        theory with probability >= 95% (Bonferroni); nine 95% intervals all do so only with
        probability ``0.95**9 = 0.63``.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    DiffusionResult
    """
    if isinstance(noise, bool) or not (isinstance(noise, (int, float)) and math.isfinite(noise)
                                       and noise > 0):
        raise BadInput(f"noise={noise!r}: must be a finite number > 0", param="noise")
    tr = from_manifold(network, runs, duration, dt, seed, noise=noise, diagnostics=False,
                       device=device)
    if lags is None:
        lags = default_lags(duration, float(tr.t[1] - tr.t[0]))
    est = diffusion_estimate(tr.decoded, tr.t, lags=lags, seed=seed, level=level)
    theory = float(diffusion_tensor_theory(network, noise).trace() / network.geometry.dim)
    return DiffusionResult(est.D, est.low, est.high, est.level, theory, est.D / theory,
                           bool(est.contains(theory)), list(est.lags), list(est.msd),
                           noise, runs, duration, tr)
