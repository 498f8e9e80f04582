"""A large hex torus end to end: memory check, streamed fit, float32 relaxation with its energy
audit, and the zero modes at the resting bump, each timed (CPU and wall)."""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass, field

import torch

from _runkit import BadInput, Result

from ..fitting.core import FitConfig, fit
from ..fitting.streamed import nearest_point_local
from ..manifold import probe_directions
from .field import SheetField
from .memory import check_sheet_memory
from .relaxation import SheetRun, ZeroModes, relax, zero_modes

__all__ = ["SheetReport", "large_torus"]


@dataclass(frozen=True)
class SheetReport(Result):
    """What :func:`large_torus` measured.

    Attributes
    ----------
    n : tuple of int
    run : SheetRun
        The relaxation (energy audited at every step).
    modes : ZeroModes
        The Jacobian at the fitted bump: two generators and the normal range.
    distance : tuple of float
        Relative distance ``|u - u*(psi_hat)| / |u*|`` at the start and end of the run.
    seconds : dict
        ``{"fit": (cpu, wall), "simulation": ..., "zero_modes": ...}``.
    peak_rss_mb : float
        The process's peak resident memory so far (``ru_maxrss``).
    estimate : dict
        :func:`~neurodyn.sheet.memory.sheet_memory` in bytes.
    """

    n: tuple[int, int]
    run: SheetRun
    modes: ZeroModes
    distance: tuple[float, float]
    seconds: dict = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    estimate: dict = field(default_factory=dict)


def _timed(seconds: dict, key: str, fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    seconds[key] = (time.process_time() - cpu, time.perf_counter() - wall)
    return out


def _distance(manifold, u: torch.Tensor) -> float:
    """``|u - u*(psi_hat)| / |u*|`` at the Bregman-nearest point ``psi_hat``."""
    u = u.to(torch.float64)
    psi = nearest_point_local(manifold, u)
    return float((u - manifold.u_star(psi)).norm()) / manifold.norm


def large_torus(n: int = 1024, steps: int = 1000, dt: float = 0.1,
                dtype: torch.dtype = torch.float32, fit_steps: int = 1, batch: int = 1,
                strength: float = 0.3, kappa: float = 1.0, lanczos: int = 30,
                seed: int = 0) -> SheetReport:
    """Fit an ``n x n`` hex torus, relax a perturbed bump for ``steps`` RK4 steps, audit it.

    Parameters
    ----------
    n : int
        Sheet side (``n x n`` neurons).
    steps : int
        RK4 steps.
    dt : float
        Step size (units of ``tau``).
    dtype : torch.dtype
        The relaxation's dtype (the fit and the zero modes run in float64).
    fit_steps, batch : int
        The fit's steps and states per probe kind (:class:`~neurodyn.fitting.FitConfig`).
    strength : float
        The initial perturbation's size relative to ``|u*|`` (a smooth probe direction).
    kappa : float
        The normal attraction rate the fit prescribes.
    lanczos : int
        Lanczos steps of the zero-mode check.
    seed : int
        Seeds the fit and the initial state.

    Returns
    -------
    SheetReport

    Raises
    ------
    BadInput
        When the estimated memory does not fit (before anything is allocated).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 8:
        raise BadInput(f"n={n!r}: must be an integer >= 8")
    estimate = check_sheet_memory((n, n), dtype, batch)
    seconds: dict = {}
    config = FitConfig(geometry="torus", n=(n, n), steps=fit_steps, batch=batch, kappa=kappa,
                       seed=seed)
    net = _timed(seconds, "fit", lambda: fit(config, progress=False).network)
    manifold = net.manifold
    gen = torch.Generator().manual_seed(seed + 1)
    psi = net.geometry.random_phase(1, gen)
    u0 = manifold.u_star(psi[0]) + strength * manifold.norm * probe_directions(
        manifold, psi, "smooth", gen)[0]
    start = _distance(manifold, u0)
    run = _timed(seconds, "simulation", lambda: relax(SheetField(net, dtype), u0, steps, dt))
    end = _distance(manifold, run.u)
    modes = _timed(seconds, "zero_modes", lambda: zero_modes(
        SheetField(net, torch.float64), manifold.u0, net.tau, lanczos, seed))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not math.isfinite(end):
        raise BadInput("large_torus: the final state is not finite")
    return SheetReport((n, n), run, modes, (start, end), seconds, peak, estimate)
