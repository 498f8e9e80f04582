r"""Cue protocols on a head-direction ring: landmark anchoring and cue conflict.

Anchoring: the ring integrates a random angular velocity with noise on ``u``; a landmark cue
(:mod:`neurodyn.spatial.cues`) reports the true heading. Without the cue the heading error diffuses,
``RMS(t) = sqrt(2 D t)``; with it the error is an Ornstein-Uhlenbeck process that settles at
``sqrt(D / k)`` (``k`` the cue's pull rate). Both runs share the velocity and the noise, so the
cue is the only difference.

Cue conflict: the bump rests at the cue; at ``t = 0`` the cue is rotated by ``Delta``. A cue of
pull rate ``k`` drags the phase along ``dpsi/dt = -k sin(psi - phi)`` (exact for a cosine cue on
a cosine bump, to first order otherwise), so after a window ``T`` the bump has followed

.. math:: f(T) = 1 - \frac{2}{\Delta} \arctan\!\big(\tan(\Delta/2)\, e^{-k T}\big)

of the rotation: a weak cue is ignored over the window, a strong one followed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch

from _runkit import BadInput
from _runkit.results import Result

from ..analysis.drift import diffusion_tensor_theory, error_growth
from ..dynamics.inputs import ArrayVelocity, parse_velocity, reference_phase
from ..dynamics.simulation import simulate
from ..geometry.populations import wrap_angle
from ..network import HopfieldNetwork
from .cues import Landmark, cue_current, pull_rate

__all__ = ["AnchoringResult", "landmark_anchoring", "ConflictResult", "cue_conflict",
           "followed_fraction_theory"]


@dataclass(frozen=True)
class AnchoringResult(Result):
    """Heading error with and without a landmark.

    Attributes
    ----------
    t : ``(T,)`` saved times (tau).
    error_cue, error_free : ``(T, B)`` wrapped heading errors (rad) with and without the cue.
    rms_cue, rms_free : ``(T,)`` RMS over runs.
    D : theory diffusion (rad^2 / tau); ``k`` the pull rate (1 / tau).
    bound : ``sqrt(D / k)``, the stationary RMS error with the cue.
    metrics : summary numbers (JSON-serialisable).
    """

    t: np.ndarray
    error_cue: np.ndarray
    error_free: np.ndarray
    rms_cue: np.ndarray
    rms_free: np.ndarray
    D: float
    k: float
    bound: float
    metrics: dict


def _ring(network: HopfieldNetwork) -> None:
    if network.geometry.dim != 1 or network.manifold is None:
        raise BadInput("network: the cue protocols need a ring network with a target manifold",
                       param="network")


def landmark_anchoring(network: HopfieldNetwork, noise: float = 0.3, strength: float = 0.05,
                       duration: float = 2000.0, runs: int = 32, dt: float = 0.05,
                       velocity: str | None = "ou:0.05:10:0.2", save_every: int = 200,
                       seed: int = 0) -> AnchoringResult:
    """Heading integration with noise, with and without a landmark reporting the true heading.

    Parameters
    ----------
    network : HopfieldNetwork
        A ring network with transport (when ``velocity`` is given) and manifold.
    noise : float
        ``sigma`` on ``u`` (Euler-Maruyama).
    strength : float
        Landmark strength ``A``.
    duration : float
        Run length (tau).
    runs : int
        Independent runs.
    dt : float
        Integration step.
    velocity : str or None
        Angular velocity spec (:func:`neurodyn.dynamics.inputs.parse_velocity`) or None (still).
    save_every : int
        Steps between saved states.
    seed : int
        Seeds the velocity, the start headings and the noise.

    Returns
    -------
    AnchoringResult, with ``metrics``: ``D``, ``k``, ``bound``, ``rms_cue_final``,
    ``rms_cue_max_late`` (max RMS after ``5 / k``), ``rms_free_final``, ``free_predicted_final``
    (``sqrt(2 D T)``), ``free_ratio`` and its 95% interval.
    """
    _ring(network)
    gen = torch.Generator().manual_seed(seed + 1)
    psi0 = network.geometry.random_phase(runs, gen)
    vel, heading = _true_heading(velocity, psi0, duration, dt, gen)
    u0 = network.manifold.u_star(psi0)
    out = {}
    for name, a in (("free", 0.0), ("cue", float(strength))):
        cur = cue_current(network, Landmark(a), heading, dt)
        tr = simulate(network, u0, duration, dt, method="euler", velocity=vel, noise=noise,
                      save_every=save_every, seed=seed, diagnostics=False, current=cur)
        idx = np.rint(tr.t.numpy() / dt).astype(int)
        out[name] = wrap_angle(tr.decoded[..., 0] - torch.as_tensor(heading[idx, :, 0])).numpy()
        t = tr.t.numpy()
    d = float(diffusion_tensor_theory(network, noise)[0, 0])
    k = float(pull_rate(network, strength)[0, 0])
    bound = math.sqrt(d / k) if k > 0 else math.inf
    free = error_growth(out["free"], t, d_trace=d, seed=seed)
    cue = error_growth(out["cue"], t, seed=seed)
    late = t >= 5.0 / k if k > 0 else np.zeros_like(t, bool)
    metrics = {
        "noise": noise, "strength": strength, "duration": duration, "runs": runs, "D": d,
        "k": k, "bound": bound, **_error_metrics(cue, free, out["cue"], late)}
    return AnchoringResult(t, out["cue"], out["free"], cue.rms, free.rms, d, k, bound, metrics)


def _true_heading(velocity: str | None, psi0: torch.Tensor, duration: float, dt: float,
                  gen: torch.Generator) -> tuple[ArrayVelocity | None, np.ndarray]:
    """The sampled angular velocity (None without one) and the true heading ``(steps + 1,
    runs, 1)`` it integrates to from ``psi0`` ``(runs, 1)``, drawn from ``gen``."""
    steps = int(round(duration / dt))
    runs = psi0.shape[0]
    times = torch.arange(steps + 1, dtype=torch.float64) * dt
    if velocity is None:
        return None, np.broadcast_to(psi0.numpy(), (steps + 1, runs, 1))
    vel = parse_velocity(velocity).prepare(duration, dt, runs, 1, gen)
    samples = torch.stack([vel(i * dt).expand(runs, 1) for i in range(steps + 1)])
    vel = ArrayVelocity(samples, dt)
    vel.prepare(duration, dt, runs, 1)
    return vel, reference_phase(vel, times, dt, psi0).numpy()


def _error_metrics(cue, free, cue_error: np.ndarray, late: np.ndarray) -> dict:
    """The RMS heading errors with the cue (final, largest, after its pull settled: ``late``)
    and without it (final, against the diffusion theory with its interval)."""
    return {
        "rms_cue_final": float(cue.rms[-1]),
        "rms_cue_max": float(cue.rms.max()),
        "rms_cue_max_late": float(cue.rms[late].max()) if late.any() else math.nan,
        "rms_cue_late_mean": float(np.sqrt((cue_error[late] ** 2).mean()))
        if late.any() else math.nan,
        "rms_free_final": float(free.rms[-1]), "free_predicted_final": float(free.predicted[-1]),
        "free_ratio": free.ratio_final(),
        "free_ratio_low": float(free.low[-1] / free.predicted[-1]),
        "free_ratio_high": float(free.high[-1] / free.predicted[-1]),
    }


def followed_fraction_theory(k: float, rotation: float, window: float) -> float:
    """``f = 1 - (2 / Delta) arctan(tan(Delta / 2) exp(-k T))`` for ``|Delta| < pi``."""
    if not abs(rotation) < math.pi:
        raise BadInput(f"rotation={rotation!r}: must be in (-pi, pi)", param="rotation")
    return 1.0 - 2.0 / rotation * math.atan(math.tan(rotation / 2) * math.exp(-k * window))


@dataclass(frozen=True)
class ConflictResult(Result):
    """Fraction of a cue rotation the bump followed, per cue strength.

    Attributes
    ----------
    strengths : ``(S,)`` cue strengths.
    followed : ``(S,)`` mean over runs of the bump's shift over the rotation.
    followed_sd : ``(S,)`` standard deviation over runs.
    theory : ``(S,)`` :func:`followed_fraction_theory` with the linear pull rate.
    k : ``(S,)`` pull rates.
    rotation, window, noise : the protocol.
    """

    strengths: np.ndarray
    followed: np.ndarray
    followed_sd: np.ndarray
    theory: np.ndarray
    k: np.ndarray
    rotation: float
    window: float
    noise: float

    def to_dict(self) -> dict:
        """JSON-serialisable fields."""
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                for k, v in asdict(self).items()}


def cue_conflict(network: HopfieldNetwork, strengths=(0.01, 0.03, 0.1, 0.3, 1.0),
                 rotation: float = math.pi / 2, window: float = 50.0, runs: int = 8,
                 noise: float = 0.05, dt: float = 0.05, seed: int = 0) -> ConflictResult:
    """Rotate a landmark by ``rotation`` and measure how far the bump follows in ``window``.

    Each run starts on the bump at a random heading ``psi0`` with the cue at
    ``psi0 + rotation``; the shift ``wrap(psi(T) - psi0) / rotation`` is averaged over runs.

    Returns
    -------
    ConflictResult
    """
    _ring(network)
    gen = torch.Generator().manual_seed(seed + 1)
    psi0 = network.geometry.random_phase(runs, gen)
    u0 = network.manifold.u_star(psi0)
    steps = int(round(window / dt))
    fol, sd, th, ks = [], [], [], []
    for i, a in enumerate(strengths):
        cur = cue_current(network, Landmark(float(a), rotation=rotation, rotate_at=0.0),
                          psi0.numpy()[None], dt)
        tr = simulate(network, u0, window, dt, method="euler", noise=noise, seed=seed + i,
                      save_every=steps, diagnostics=False, current=cur)
        shift = wrap_angle(tr.decoded[-1, :, 0] - psi0[:, 0]).numpy() / rotation
        k = float(pull_rate(network, float(a))[0, 0])
        fol.append(shift.mean())
        sd.append(shift.std())
        ks.append(k)
        th.append(followed_fraction_theory(k, rotation, window))
    return ConflictResult(np.asarray(strengths, float), np.array(fol), np.array(sd),
                          np.array(th), np.array(ks), float(rotation), float(window),
                          float(noise))
