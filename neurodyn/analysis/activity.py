r"""Population activity on and near an attractor manifold, sampled by simulation.

:func:`manifold_activity` drives states along the manifold with a random velocity and spreads
them around it with noise: samples that cover the manifold, for embeddings and topology.
:func:`path_on_manifold` runs path integration from random manifold points, the bump's decoded
path with the integrated input velocity as its reference.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import BadInput, check_nonnegative, check_positive
from _runkit.results import Result
from _runkit.seeds import child_seeds

from .._util import check_int, require_manifold, to_numpy
from ..dynamics.inputs import Velocity, parse_velocity
from ..dynamics.simulation import SimulationResult, simulate
from ..network import HopfieldNetwork

__all__ = ["ManifoldActivity", "manifold_activity", "path_on_manifold"]


@dataclass(frozen=True)
class ManifoldActivity(Result):
    """Samples of simulated population activity near the attractor manifold.

    Attributes
    ----------
    rates : ndarray ``(samples, N)``, rates ``r = phi(u)`` with the neuron axes flattened.
    decoded : ndarray ``(samples, dim)``, population-vector phases in ``[0, 2 pi)``.
    distance : ndarray ``(samples,)``, relative distance ``min_psi ||u - u*(psi)|| / ||u*||``.
    runs : number of simulated runs the samples come from.
    seconds : wall time of the simulation (s).
    """

    rates: np.ndarray
    decoded: np.ndarray
    distance: np.ndarray
    runs: int
    seconds: float

    @property
    def samples(self) -> int:
        """Number of samples."""
        return int(self.rates.shape[0])


def manifold_activity(network: HopfieldNetwork, samples: int = 2000, runs: int | None = None,
                      duration: float = 40.0, relax: float = 10.0, dt: float = 0.1,
                      velocity: Velocity | str | None = "ou:0.3:5:1", noise: float = 0.02,
                      settle: float = 5.0, seed: int = 0) -> ManifoldActivity:
    """Simulated population activity that covers the attractor manifold.

    1. Movement: ``runs`` states start at uniformly random manifold points ``u*(psi_b)`` and
       are driven along the manifold by an Ornstein-Uhlenbeck velocity (one component per
       manifold axis, independent per run), integrated with RK4,

       .. math:: \\tau \\dot u = -u - \\nabla F(r) + b + \\textstyle\\sum_a v_a(t)\\, T_a(r) .

       After ``relax`` time units each run is sampled at evenly spaced times up to
       ``duration``; the samples of all runs are pooled (run-major) and cut to ``samples``.
    2. Noise (when ``noise > 0``): every sample then evolves for ``settle`` time units without
       input under additive noise (Euler-Maruyama),
       ``tau du = (-u - grad F(r) + b) dt + tau sigma dW``, which spreads it around the manifold.

    The two phases are separate because the transport term is an advection: explicit Euler, which
    noise requires, amplifies its high modes, while RK4 (no noise) is stable for it.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold (and a transport when ``velocity`` is given).
    samples : int
        Number of activity vectors returned (>= 1).
    runs : int or None
        Number of runs (default ``max(1, samples // 10)``, ten samples per run).
    duration : float
        Simulated time per run (units of tau), > ``relax``.
    relax : float
        Time before the first sample (units of tau), >= 0.
    dt : float
        Integration step (units of tau).
    velocity : Velocity or str or None
        A :class:`~neurodyn.dynamics.inputs.Velocity` or spec string (``"ou:SIGMA:T[:VMAX]"``,
        radians per tau); ``None`` for none.
    noise : float
        ``sigma``, noise on ``u`` per square root of time (>= 0).
    settle : float
        Duration of the noisy phase (units of tau; > 0 when ``noise > 0``).
    seed : int
        Seeds the starting phases, the velocity and the noise.

    Returns
    -------
    ManifoldActivity
        ``rates (samples, N)``, ``decoded (samples, dim)``, ``distance (samples,)``.

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=0)).network
    >>> act = manifold_activity(net, samples=40, duration=4.0, relax=2.0, settle=1.0, seed=0)
    >>> act.rates.shape, act.decoded.shape
    ((40, 32), (40, 1))
    """
    m = require_manifold(network)
    samples = check_int(samples, "samples", 1)
    runs = max(1, samples // 10) if runs is None else check_int(runs, "runs", 1)
    duration = check_positive("duration", duration)
    relax = check_nonnegative("relax", relax)
    dt = check_positive("dt", dt)
    noise = check_nonnegative("noise", noise)
    settle = check_nonnegative("settle", settle) if noise == 0 else check_positive("settle", settle)
    if relax >= duration:
        raise BadInput(f"relax={relax}: must be < duration={duration}", param="relax")
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    if velocity is not None and network.transport is None:
        raise BadInput("velocity: the network has no transport; pass velocity=None",
                       param="velocity")
    per_run, save_every, first, total = _sampling_schedule(samples, runs, duration, relax, dt)
    s_phase, s_move, s_noise = child_seeds(seed, 3)
    g = network.geometry
    psi = g.random_phase(runs, torch.Generator().manual_seed(s_phase))
    start = time.perf_counter()
    tr = simulate(network, m.u_star(psi), total * dt, dt, method="rk4", velocity=velocity,
                  save_every=save_every, seed=s_move, progress=False, diagnostics=False)
    u = tr.u[first:first + per_run].transpose(0, 1).reshape((-1,) + g.shape)[:samples]
    if noise > 0:
        steps = max(1, int(round(settle / dt)))
        tr = simulate(network, u, steps * dt, dt, method="euler", noise=noise,
                      save_every=steps, seed=s_noise, progress=False, diagnostics=False)
        u = tr.u[-1]
    seconds = time.perf_counter() - start
    with torch.no_grad():
        r = network.rates(u)
        dec = g.decode(r)
        dist = torch.cat([m.distance(chunk).distance for chunk in torch.split(u, 256)])
    return ManifoldActivity(to_numpy(r.reshape(-1, g.size)), to_numpy(dec), to_numpy(dist), runs,
                            seconds)


def _sampling_schedule(samples: int, runs: int, duration: float, relax: float, dt: float
                       ) -> tuple[int, int, int, int]:
    """``(samples per run, steps between saved states, first saved index after the
    relaxation, steps simulated)`` so that each run's samples are evenly spaced after
    ``relax`` within ``duration``."""
    per_run = math.ceil(samples / runs)
    relax_steps = int(math.ceil(relax / dt - 1e-9))
    save_every = max(1, int(math.floor((duration / dt - relax_steps) / per_run + 1e-9)))
    first = int(math.ceil(relax_steps / save_every))  # first saved index after the relaxation
    total = max(1, first + per_run - 1) * save_every
    if first + per_run - 1 == 0:  # relax = 0 and one sample per run: the start is the sample
        first = 0
    return per_run, save_every, first, total


def path_on_manifold(network: HopfieldNetwork, runs: int = 4, duration: float = 200.0,
                     dt: float = 0.1, velocity: Velocity | str = "ou:0.2:10:0.5",
                     seed: int = 0, save_every: int | None = None) -> SimulationResult:
    """Path integration from random manifold points: the bump's decoded path and its reference.

    .. math:: \\psi_{ref}(t) = \\psi(0) + \\int_0^t v(s)\\, ds

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and a transport.
    runs : int
        Number of runs (>= 1).
    duration : float
        Simulated time (units of tau).
    dt : float
        Step (units of tau).
    velocity : Velocity or str
        A velocity or spec string (default: the ``path-integrate`` command's).
    seed : int
        Seeds the starting phases and the velocity.
    save_every : int or None
        Steps between saved states (default: one per time unit).

    Returns
    -------
    SimulationResult
        With ``decoded (T, runs, dim)`` and ``reference (T, runs, dim)``.
    """
    m = require_manifold(network)
    runs = check_int(runs, "runs", 1)
    if network.transport is None:
        raise BadInput("network: path integration needs a transport (fit makes one)",
                       param="network")
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    s_phase, s_sim = child_seeds(seed, 2)
    psi = network.geometry.random_phase(runs, torch.Generator().manual_seed(s_phase))
    every = max(1, int(round(1.0 / dt))) if save_every is None else save_every
    return simulate(network, m.u_star(psi), duration, dt, velocity=velocity, seed=s_sim,
                    save_every=every, progress=False, diagnostics=False)
