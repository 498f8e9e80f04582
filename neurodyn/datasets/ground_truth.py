r"""Head-direction and grid-cell populations driven by a rat's trajectory, with their ground truth.

The generating network is an attractor in its linear-response regime around its manifold: the
population activity is a bump on a ring (head direction) or a hexagonal torus (one grid module)
at position ``psi_t``, plus normal fluctuations that relax at known rates per mode,

.. math:: r_i(t) = b_i + g_i \big[ r^*(\theta_i - \psi_t) + y(\theta_i - \psi_t, t) \big]_+,
          \qquad r^*(\phi) = e^{w (\cos\phi - 1)}

(torus: ``r* = exp(w (s(phi) - 3) / 3)`` with ``s`` the sum of the three hexagonal cosines of
the phase difference). The normal field ``y`` is a sum of bump-frame modes, each an
Ornstein-Uhlenbeck process of stationary standard deviation ``fluctuation`` and rate
``mode_rates[k] / tau``: ring ``cos(k phi)`` for ``k = 0, 1, ...`` and ``sin(k phi)`` for
``k >= 2`` (``sin phi`` is the tangent: it moves the bump and is not a normal mode); torus the
constant (``mode_rates[0]``) and the three fundamental cosines (``mode_rates[1]``). The bump
follows the true heading (or the lattice phase of the true position) with an error that
diffuses with coefficient ``D`` and is pulled back at the rate ``anchor`` (landmarks),

.. math:: d e = -a\, e\, dt + \sqrt{2 D}\, dW,\qquad \psi_t = h_t + e_t,

so the residual of the covariate has mean squared increments ``2 D L`` at lags ``L << 1/a``.
The classic CANN's unequal normal rates ``0.625 / 1 / 1.315`` (units of ``1/tau``) are the
default. The network's cells have random (non-uniform) preferred angles or phases; ``recorded``
of them are kept, each with its own gain ``g_i`` and baseline ``b_i`` (Hz), and Poisson counts
are drawn per bin of ``dt`` seconds.

The feed-forward control (``recurrent=False``) has the same tuning curves and no recurrence: the
bump follows the heading exactly, and each cell fluctuates on its own (an independent
Ornstein-Uhlenbeck process of rate ``1 / tau`` with the same variance per cell as the attractor's
normal field), so its fluctuations are not confined to a few bump-frame modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter

from _runkit import BadInput
from _runkit.files import atomic_savez
from _runkit.results import Result

from ..spatial.phases import position_to_phase
from .trajectories import RatTrajectory, rat_trajectory

__all__ = ["GroundTruth", "ActivityData", "ring_activity", "torus_activity"]

#: the classic CANN's normal relaxation rates of its three lowest modes, in units of 1/tau
CANN_RATES = (0.625, 1.0, 1.315)


@dataclass(frozen=True)
class GroundTruth(Result):
    """What generated a population's activity.

    Attributes
    ----------
    geometry : str
        ``"ring"`` or ``"torus"``.
    preferred : ndarray, shape (cells,) or (cells, 2)
        Preferred angles (ring) or lattice phases (torus) of the recorded cells, radians.
    gain, baseline : ndarray, shape (cells,)
        Hz.
    bump : ndarray, shape (T,) or (T, 2)
        The bump's position ``psi_t`` in ``[0, 2 pi)``.
    width : float
        Concentration ``w`` of the bump.
    mode_rates : tuple of float
        Normal relaxation rate of each mode in 1/s (``mode_rates[k] / tau``).
    fluctuation : float
        Stationary standard deviation of every mode's amplitude.
    tau : float
        Time constant (s).
    diffusion : float
        ``D`` of the bump about the covariate (rad^2/s, per axis).
    anchor : float
        Pull of the bump toward the covariate (1/s).
    recurrent : bool
        False for the feed-forward control.
    recorded : ndarray, shape (cells,)
        Indices of the recorded cells among the network's.
    clipped : float
        Fraction of (bin, cell) rates clipped at 0.
    spacing, orientation : float
        The grid module's spacing (m) and orientation (rad); torus only (else NaN).
    """

    geometry: str
    preferred: np.ndarray
    gain: np.ndarray
    baseline: np.ndarray
    bump: np.ndarray
    width: float
    mode_rates: tuple
    fluctuation: float
    tau: float
    diffusion: float
    anchor: float
    recurrent: bool
    recorded: np.ndarray
    clipped: float
    spacing: float = float("nan")
    orientation: float = float("nan")

    def profile(self, phi) -> np.ndarray:
        """The resting bump ``r*(phi)``, peak 1; ``phi`` of shape (...,) (ring) or (..., 2)."""
        phi = np.asarray(phi, dtype=float)
        if self.geometry == "ring":
            return np.exp(self.width * (np.cos(phi) - 1))
        s = np.cos(phi[..., 0]) + np.cos(phi[..., 1]) + np.cos(phi[..., 0] - phi[..., 1])
        return np.exp(self.width * (s - 3) / 3)


@dataclass(frozen=True)
class ActivityData(Result):
    """Spike counts per bin with their covariate and the ground truth that made them.

    Attributes
    ----------
    counts : ndarray, shape (T, cells)
        Spike counts per bin.
    dt : float
        Bin width (s).
    t : ndarray, shape (T,)
        Bin times (s).
    heading : ndarray or None, shape (T,)
        Head direction (rad); ring data.
    position : ndarray, shape (T, 2)
        Positions (m).
    truth : GroundTruth
    source : str
        Where the trajectory came from (see :class:`~.trajectories.RatTrajectory`).
    """

    counts: np.ndarray
    dt: float
    t: np.ndarray
    heading: np.ndarray | None
    position: np.ndarray
    truth: GroundTruth
    source: str

    def save(self, path, covariate: bool = True) -> None:
        """Write the data file of ``neurodyn fit-activity`` (``.npz``: ``counts``, ``dt`` and,
        with ``covariate``, ``heading`` (ring) or ``position`` (torus)).

        Parameters
        ----------
        path : str or Path
            The ``.npz`` file (written atomically).
        covariate : bool
            Include the covariate.
        """
        arrays = {"counts": self.counts, "dt": np.float64(self.dt)}
        if covariate:
            if self.truth.geometry == "ring":
                arrays["heading"] = self.heading
            else:
                arrays["position"] = self.position
        atomic_savez(path, **arrays)


def _ou(rng, steps: int, count: int, rate: float, sd: float, dt: float) -> np.ndarray:
    """``count`` stationary Ornstein-Uhlenbeck series ``(steps, count)`` sampled every ``dt``
    (exact AR(1) steps); ``rate`` 0 gives random walks from 0 with increments ``sd^2 dt``."""
    xi = rng.standard_normal((steps, count))
    if rate <= 0:
        return np.cumsum(xi * sd * np.sqrt(dt), axis=0) - xi[:1] * sd * np.sqrt(dt)
    rho = float(np.exp(-rate * dt))
    x0 = sd * xi[0]
    out = lfilter([sd * np.sqrt(1 - rho**2)], [1.0, -rho], xi[1:], axis=0, zi=(rho * x0)[None])
    return np.vstack([x0[None], out[0]])


def _cells(rng, cells: int, recorded: int, dims: int, gain, baseline):
    """Preferred coordinates of the network's cells, the recorded subset (sorted), and their
    gains and baselines."""
    if not (isinstance(recorded, int) and 3 <= recorded <= cells):
        raise BadInput(f"recorded={recorded!r}: must be an integer in 3..cells={cells}",
                       param="recorded")
    pref_all = rng.uniform(0, 2 * np.pi, size=(cells, dims) if dims > 1 else cells)
    keep = np.sort(rng.choice(cells, size=recorded, replace=False))
    g = rng.uniform(*gain, size=recorded)
    b = rng.uniform(*baseline, size=recorded)
    return pref_all[keep], keep, g, b


def _counts(rng, rates: np.ndarray, dt: float) -> tuple[np.ndarray, float]:
    clipped = float(np.mean(rates < 0))
    return rng.poisson(np.maximum(rates, 0.0) * dt).astype(np.int32), clipped


def _ring_field(rng, phi: np.ndarray, steps: int, rates: np.ndarray, fluctuation: float,
                dt: float, recurrent: bool, tau: float) -> np.ndarray:
    """The normal field ``y`` at every (bin, cell), ``phi`` the bump-frame angles (T, cells)."""
    if not recurrent:
        comps = 1 + sum(1 if k < 2 else 2 for k in range(1, len(rates)))
        per_cell = fluctuation * np.sqrt(1 + 0.5 * (comps - 1))
        return _ou(rng, steps, phi.shape[1], 1.0 / tau, per_cell, dt)
    y = np.zeros_like(phi)
    for k, rate in enumerate(rates):
        a = _ou(rng, steps, 2 if k >= 2 else 1, rate, fluctuation, dt)
        y += a[:, :1] * np.cos(k * phi)
        if k >= 2:
            y += a[:, 1:] * np.sin(k * phi)
    return y


def _trajectory(trajectory, dt: float, duration, seed: int) -> RatTrajectory:
    if isinstance(trajectory, RatTrajectory):
        return trajectory
    return rat_trajectory(trajectory, dt=dt, duration=duration, seed=seed)


def ring_activity(cells: int = 100, recorded: int = 71, trajectory="sargolini",
                  duration: float | None = None, dt: float = 0.02, tau: float = 0.1,
                  mode_rates=CANN_RATES, fluctuation: float = 0.06, diffusion: float = 0.001,
                  anchor: float = 0.1, width: float = 2.0, gain=(15.0, 45.0),
                  baseline=(3.0, 8.0), recurrent: bool = True, seed: int = 0) -> ActivityData:
    """Head-direction cells of a ring attractor driven by a rat's head direction.

    Parameters
    ----------
    cells : int
        The network's cells.
    recorded : int
        Cells kept (a random subset).
    trajectory : str or RatTrajectory
        A session name of :func:`~.trajectories.rat_trajectory` or a trajectory in bins of ``dt``.
    duration : float or None
        Seconds of the session kept (default all).
    dt : float
        Bin width (s).
    tau : float
        Time constant (s); the normal rates are ``mode_rates / tau``.
    mode_rates : sequence of float
        Normal relaxation rate of modes ``k = 0, 1, 2, ...`` in units of ``1/tau``.
    fluctuation : float
        Stationary standard deviation of each mode's amplitude (the bump's peak is 1).
    diffusion : float
        ``D`` of the bump about the heading (rad^2/s).
    anchor : float
        Pull toward the heading (1/s); 0 lets the bump drift freely.
    width : float
        Concentration ``w`` of the bump ``exp(w (cos phi - 1))``.
    gain, baseline : tuple of float
        Ranges (Hz) of the cells' uniform gains and baselines.
    recurrent : bool
        False: the feed-forward control (module docstring).
    seed : int
        Seeds every draw.

    Returns
    -------
    ActivityData

    Examples
    --------
    >>> d = ring_activity(cells=40, recorded=30, duration=20.0, seed=1,
    ...                   trajectory=rat_trajectory(dt=0.02, duration=20.0, synthetic=True))
    >>> d.counts.shape, d.truth.preferred.shape
    ((999, 30), (30,))
    """
    rng = np.random.default_rng(seed)
    tr = _trajectory(trajectory, dt, duration, seed)
    rates = np.asarray(mode_rates, dtype=float) / tau
    pref, keep, g, b = _cells(rng, cells, recorded, 1, gain, baseline)
    steps = tr.t.size
    sd = np.sqrt(diffusion / anchor) if anchor > 0 else np.sqrt(2 * diffusion)
    err = np.zeros(steps) if not recurrent else _ou(rng, steps, 1, anchor, sd, tr.dt)[:, 0]
    bump = np.mod(tr.heading + err, 2 * np.pi)
    phi = pref[None, :] - bump[:, None]
    truth = GroundTruth("ring", pref, g, b, bump, float(width),
                        tuple(rates.tolist()) if recurrent else (1.0 / tau,),
                        float(fluctuation), float(tau), float(diffusion if recurrent else 0.0),
                        float(anchor), bool(recurrent), keep, 0.0)
    y = _ring_field(rng, phi, steps, rates, fluctuation, tr.dt, recurrent, tau)
    counts, clipped = _counts(rng, b + g * (truth.profile(phi) + y), tr.dt)
    truth = GroundTruth(**{**truth.__dict__, "clipped": clipped})
    return ActivityData(counts, tr.dt, tr.t, tr.heading, tr.position, truth, tr.source)


def torus_activity(cells: int = 100, recorded: int = 71, trajectory="sargolini",
                   duration: float | None = None, dt: float = 0.02, tau: float = 0.1,
                   mode_rates=CANN_RATES[:2], fluctuation: float = 0.05,
                   diffusion: float = 0.001, anchor: float = 0.1, width: float = 3.0,
                   spacing: float = 0.5, orientation: float = 0.2, gain=(15.0, 45.0),
                   baseline=(2.0, 5.0), seed: int = 0) -> ActivityData:
    """Grid cells of one module (a hexagonal torus attractor) driven by a rat's position.

    Parameters
    ----------
    cells, recorded : int
        As in :func:`ring_activity`.
    trajectory : str or RatTrajectory
        As in :func:`ring_activity`.
    duration : float or None
        As in :func:`ring_activity`.
    dt, tau : float
        As in :func:`ring_activity`.
    mode_rates : sequence of float
        Rates (units of ``1/tau``) of the constant mode and of the three fundamental cosines.
    fluctuation, diffusion, anchor, width : float
        As in :func:`ring_activity` (``D`` and ``anchor`` per phase axis).
    spacing, orientation : float
        The module's grid spacing (m) and orientation (rad).
    gain, baseline : tuple of float
        As in :func:`ring_activity`.
    seed : int
        Seeds every draw.

    Returns
    -------
    ActivityData (``heading`` None; ``truth.preferred`` of shape (cells, 2)).
    """
    rng = np.random.default_rng(seed)
    tr = _trajectory(trajectory, dt, duration, seed)
    rates = np.asarray(mode_rates, dtype=float) / tau
    if rates.size != 2:
        raise BadInput(f"mode_rates={mode_rates!r}: a torus takes two rates (constant, "
                       "fundamental cosines)", param="mode_rates")
    pref, keep, g, b = _cells(rng, cells, recorded, 2, gain, baseline)
    steps = tr.t.size
    err = _ou(rng, steps, 2, anchor, np.sqrt(diffusion / anchor), tr.dt)
    bump = np.mod(position_to_phase(tr.position, spacing, orientation) + err, 2 * np.pi)
    phi = pref[None, :, :] - bump[:, None, :]
    a0 = _ou(rng, steps, 1, rates[0], fluctuation, tr.dt)
    a1 = _ou(rng, steps, 3, rates[1], fluctuation, tr.dt)
    y = (a0 + a1[:, :1] * np.cos(phi[..., 0]) + a1[:, 1:2] * np.cos(phi[..., 1])
         + a1[:, 2:] * np.cos(phi[..., 0] - phi[..., 1]))
    truth = GroundTruth("torus", pref, g, b, bump, float(width), tuple(rates.tolist()),
                        float(fluctuation), float(tau), float(diffusion), float(anchor), True,
                        keep, 0.0, float(spacing), float(orientation))
    counts, clipped = _counts(rng, b + g * (truth.profile(phi) + y), tr.dt)
    truth = GroundTruth(**{**truth.__dict__, "clipped": clipped})
    return ActivityData(counts, tr.dt, tr.t, None, tr.position, truth, tr.source)
