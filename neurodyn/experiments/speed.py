"""Speed physics of a velocity coupling: speed gain, maximum tracked speed, lag and bump shape.

A bump started at rest at ``psi = 0`` is driven by a constant velocity ``v`` along manifold axis 0
for ``duration`` (tau), and measured as follows (all on the decoded phase, unwrapped):

- **speed** ``s``: least-squares slope of the decoded phase over the second half of the run;
  **gain** ``s / v``.
- **tracked**: ``|gain - 1| <= tolerance`` (default 5%): the bump keeps the commanded speed
  to within the tolerance (a gain of 0.95 misplaces the bump by 5% of every distance travelled).
- **v_max**: the largest velocity tracked together with every grid velocity below it; between
  the last tracked and the first untracked grid velocity it is refined by bisection in ``log v``
  (``refine`` halvings of the log-interval). ``v_max_bounded`` is False when every grid velocity
  is tracked (then ``v_max`` is the largest one tried: a lower bound).
- **lag**: commanded minus bump phase at the end of the run (rad; grows without bound when the
  gain is below 1).
- **shape**: the final rates shifted back to phase 0 by their decoded phase, against the
  resting rates ``r*(0)``: Pearson ``correlation`` and ``amplitude`` ratio of ``max - min``;
  ``distance``: relative distance of the final state to the manifold.

The step adapts to the speed (the coupling is an advection: ``dt <= 0.5 / (v c)`` with
``c = max_k |k| |h_k| max phi'(u*) / tau``, at most ``dt_max``), and states are saved so that
the bump moves at most 0.5 rad between saved states (and at least 40 are saved).

Theory (``Transport.asymmetric``): the coupling's drive ``v T(r*)`` has a part off the tangent
that the attraction relaxes at rate ``kappa``, so the deformation and the gain depend on
``v / kappa``; where the whole autonomous field scales with ``kappa`` (as fitted energies do),
``gain(v, kappa) = G(v / kappa)`` and ``v_max`` is proportional to ``kappa``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.figure import Figure

from _runkit import BadInput, Result

from ..dynamics.inputs import Constant
from ..dynamics.simulation import simulate
from ..network import HopfieldNetwork, velocity_coupling

__all__ = ["SpeedPoint", "SpeedGainResult", "SpeedStudy", "speed_point", "speed_gain",
           "speed_study", "plot_speed_gain", "DEFAULT_VELOCITIES"]

#: Default velocity grid (rad/tau): 0.01 to 40.96 by factors of 2.
DEFAULT_VELOCITIES = tuple(0.01 * 2.0**i for i in range(13))


@dataclass(frozen=True)
class SpeedPoint(Result):
    """The bump driven at one constant velocity (see the module's definitions).

    Attributes
    ----------
    v : float
        Commanded velocity (rad/tau).
    speed, gain : float
        Measured bump speed (rad/tau) and ``speed / v``.
    lag : float
        Commanded minus bump phase at the end (rad).
    correlation, amplitude, distance : float
        Shape of the final bump against the resting one, and its distance to the manifold.
    tracked : bool
        ``|gain - 1| <= tolerance``.
    dt : float
        Integration step used (tau).
    """

    v: float
    speed: float
    gain: float
    lag: float
    correlation: float
    amplitude: float
    distance: float
    tracked: bool
    dt: float


@dataclass(frozen=True)
class SpeedGainResult(Result):
    """Outcome of :func:`speed_gain`.

    Attributes
    ----------
    points : list of SpeedPoint
        One per velocity, the grid and the bisection, sorted by velocity.
    v_max : float
        Largest tracked velocity (rad/tau; see the module's definition).
    v_max_bounded : bool
        False when every grid velocity is tracked (``v_max`` is then a lower bound).
    first_untracked : float
        Smallest velocity measured above ``v_max`` (``nan`` when none).
    tolerance : float
        Tolerance on ``|gain - 1|``.
    duration : float
        Simulated time per velocity (tau).
    """

    points: list
    v_max: float
    v_max_bounded: bool
    first_untracked: float
    tolerance: float
    duration: float

    def to_dict(self) -> dict:
        """JSON-ready fields, ``points`` as a list of dicts."""
        out = super().to_dict()
        out["points"] = [p.to_dict() for p in self.points]
        return out


def _advection_rate(network: HopfieldNetwork) -> float:
    """``c = max_k |k| |h_k| max phi'(u*) / tau``: the transport's fastest rate per unit speed."""
    g = network.geometry
    k = g.wavevectors().norm(dim=0)
    h = network.transport.gains.detach().cpu().abs()
    slope = float(network.activation.derivative(network.manifold.u0.detach().cpu()).max())
    return float((k * h).max()) * slope / network.tau


def _schedule(network: HopfieldNetwork, v: float, duration: float, dt_max: float
              ) -> tuple[float, int, int]:
    """The step, the number of steps and the steps between saved states of
    :func:`speed_point` at velocity ``v``."""
    dt = min(dt_max, 0.5 / (v * max(_advection_rate(network), 1e-12)))
    steps = math.ceil(duration / dt - 1e-9)
    return duration / steps, steps, max(1, min(int(0.5 / (v * duration / steps)), steps // 40))


def saved_states(network: HopfieldNetwork, velocities, duration: float = 40.0,
                 dt_max: float = 0.05) -> int:
    """The most states :func:`speed_gain` saves in one simulation (the bisection's velocities
    lie between the given ones), for a memory estimate before it runs.

    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=1)).network
    >>> saved_states(net, (0.1, 0.2), duration=10.0) < saved_states(net, (0.1, 0.2), 1e4)
    True
    """
    counts = []
    for v in velocities:
        _, steps, every = _schedule(network, float(v), duration, dt_max)
        counts.append(steps // every + 2)
    return max(counts)


def speed_point(network: HopfieldNetwork, v: float, duration: float = 40.0,
                tolerance: float = 0.05, dt_max: float = 0.05) -> SpeedPoint:
    """Drive the resting bump at constant velocity ``v`` along axis 0 and measure it.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and a transport.
    v : float
        Velocity, > 0 (rad/tau).
    duration : float
        Simulated time (tau); the speed is fitted on its second half.
    tolerance : float
        Tolerance on ``|gain - 1|`` for ``tracked``.
    dt_max : float
        Largest integration step (tau).

    Returns
    -------
    SpeedPoint

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> p = speed_point(fit(FitConfig(n=32, steps=5)).network, 0.1, duration=10.0)
    >>> abs(p.gain - 1) < 1e-3, p.tracked
    (True, True)
    """
    if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
        raise BadInput(f"v={v!r}: must be a finite number > 0", param="v")
    if network.manifold is None or network.transport is None:
        raise BadInput("network: needs a target manifold and a transport", param="network")
    g = network.geometry
    dt, steps, save_every = _schedule(network, v, duration, dt_max)
    u0 = network.manifold.u0.detach().cpu()[None]
    value = (float(v),) + (0.0,) * (g.dim - 1)
    with torch.no_grad():
        tr = simulate(network, u0, duration, dt, velocity=Constant(value),
                      save_every=save_every)
    t = tr.t.numpy()
    psi = np.unwrap(tr.decoded[:, 0, 0].numpy())
    psi = psi - psi[0]
    half = t >= t[-1] / 2
    speed = float(np.polyfit(t[half], psi[half], 1)[0])
    back = g.shift(tr.r[-1, 0], -tr.decoded[-1, 0])
    rest = network.manifold.r_star(torch.zeros(g.dim, dtype=torch.float64))
    corr = float(torch.corrcoef(torch.stack([back.reshape(-1), rest.reshape(-1)]))[0, 1])
    amp = float((back.max() - back.min()) / (rest.max() - rest.min()))
    gain = speed / v
    return SpeedPoint(float(v), speed, gain, float(v * t[-1] - psi[-1]), corr, amp,
                      float(tr.distance[-1, 0]), bool(abs(gain - 1) <= tolerance), dt)


def speed_gain(network: HopfieldNetwork, velocities=DEFAULT_VELOCITIES, duration: float = 40.0,
               tolerance: float = 0.05, refine: int = 5,
               dt_max: float = 0.05) -> SpeedGainResult:
    """Speed-gain curve of a network's velocity coupling and its maximum tracked speed.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and a transport (e.g. from
        :func:`neurodyn.network.velocity_coupling`).
    velocities : sequence of float
        Grid of velocities (rad/tau, > 0), increasing.
    duration : float
        Simulated time per velocity (tau).
    tolerance : float
        Tolerance on ``|gain - 1|``, in (0, 1).
    refine : int
        Bisection steps in ``log v`` between the last tracked and first untracked velocity.
    dt_max : float
        Largest integration step (tau).

    Returns
    -------
    SpeedGainResult

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> res = speed_gain(fit(FitConfig(n=32, steps=5)).network, (0.1, 0.2), duration=10.0)
    >>> res.v_max, res.v_max_bounded
    (0.2, False)
    """
    vs = [float(v) for v in velocities]
    if not vs or any(not (math.isfinite(v) and v > 0) for v in vs) or vs != sorted(set(vs)):
        raise BadInput(f"velocities={velocities!r}: give increasing finite numbers > 0",
                       param="velocities")
    if not 0 < tolerance < 1:
        raise BadInput(f"tolerance={tolerance!r}: must be in (0, 1)", param="tolerance")
    points = []
    for v in vs:
        points.append(speed_point(network, v, duration, tolerance, dt_max))
        if not points[-1].tracked:
            break
    if points[-1].tracked:
        return SpeedGainResult(points, vs[-1], False, float("nan"), tolerance, duration)
    lo = points[-2].v if len(points) > 1 else None
    hi = points[-1].v
    if lo is not None:
        for _ in range(refine):
            mid = math.sqrt(lo * hi)
            p = speed_point(network, mid, duration, tolerance, dt_max)
            points.append(p)
            lo, hi = (mid, hi) if p.tracked else (lo, mid)
    above = max(p.v for p in points)
    points += [speed_point(network, v, duration, tolerance, dt_max) for v in vs if v > above]
    points.sort(key=lambda p: p.v)
    v_max = lo if lo is not None else 0.0
    return SpeedGainResult(points, v_max, True, hi, tolerance, duration)


@dataclass(frozen=True)
class SpeedStudy(Result):
    """Outcome of :func:`speed_study`: one fitted ring per ``kappa``, each coupling measured.

    Attributes
    ----------
    kappas : list of float
        The prescribed normal rates.
    coupling, width : str, float
        The coupling studied and its kernel width (rad).
    curves : list of SpeedGainResult
        The studied coupling's curve per ``kappa``.
    controls : list of SpeedGainResult
        The ``exact`` coupling's curve per ``kappa`` (the control that tracks every speed).
    v_max : list of float
        ``v_max`` per ``kappa`` (the studied coupling).
    v_max_per_kappa : list of float
        ``v_max / kappa``: constant when ``v_max`` is proportional to ``kappa``.
    """

    kappas: list
    coupling: str
    width: float
    curves: list
    controls: list
    v_max: list
    v_max_per_kappa: list

    def to_dict(self) -> dict:
        """JSON-ready fields, the curves as lists of dicts."""
        out = super().to_dict()
        out["curves"] = [c.to_dict() for c in self.curves]
        out["controls"] = [c.to_dict() for c in self.controls]
        return out

    def figure(self) -> Figure:
        """Speed gain against speed per ``kappa`` with ``v_max`` marked, the exact controls
        included."""
        pairs = zip(self.kappas, self.curves, self.controls, strict=True)
        curves, controls = {}, {}
        for k, curve, control in pairs:
            curves[f"{self.coupling}, kappa = {k:g}"] = curve
            controls[f"exact, kappa = {k:g}"] = control
        return plot_speed_gain(curves, self.curves[0].tolerance, controls)


def speed_study(networks: dict, coupling: str = "asymmetric", width: float = 0.3,
                velocities=DEFAULT_VELOCITIES, duration: float = 40.0,
                tolerance: float = 0.05) -> SpeedStudy:
    """Speed-gain curves of one coupling and of the exact control for networks of several
    ``kappa``.

    Parameters
    ----------
    networks : dict[float, HopfieldNetwork]
        ``kappa`` to a network fitted with it (with a target manifold).
    coupling : str
        The coupling studied (:func:`neurodyn.network.velocity_coupling`).
    width : float
        Its kernel width (rad).
    velocities : sequence of float
        Grid of velocities (rad/tau), as for :func:`speed_gain`.
    duration : float
        Simulated time per velocity (tau).
    tolerance : float
        Tolerance on ``|gain - 1|``.

    Returns
    -------
    SpeedStudy

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> nets = {k: fit(FitConfig(n=32, steps=5, kappa=k)).network for k in (1.0, 2.0)}
    >>> st = speed_study(nets, velocities=(0.25, 0.5, 1.0, 2.0), duration=10.0)
    >>> round(st.v_max[1] / st.v_max[0], 1), [c.v_max_bounded for c in st.controls]
    (2.0, [False, False])
    """
    kappas = sorted(float(k) for k in networks)
    by_kappa = {float(k): net for k, net in networks.items()}
    curves, controls = [], []
    for k in kappas:
        net = by_kappa[k]
        curves.append(speed_gain(velocity_coupling(net, coupling, width), velocities, duration,
                                 tolerance))
        controls.append(speed_gain(velocity_coupling(net, "exact"), velocities, duration,
                                   tolerance))
    v_max = [c.v_max for c in curves]
    return SpeedStudy(kappas, coupling, float(width), curves, controls, v_max,
                      [v / k for v, k in zip(v_max, kappas, strict=True)])


def plot_speed_gain(curves: dict, tolerance: float = 0.05, controls: dict | None = None) -> Figure:
    """Speed gain against velocity, one curve per label, each ``v_max`` marked.

    Parameters
    ----------
    curves : dict[str, SpeedGainResult]
        Label (e.g. ``"kappa = 2"``) to its result.
    tolerance : float
        The tracked band ``1 +- tolerance``, drawn shaded.
    controls : dict[str, SpeedGainResult] or None
        Control curves (e.g. the exact coupling), drawn grey and dotted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.axhspan(1 - tolerance, 1 + tolerance, color="0.9", label=f"tracked (±{tolerance:.0%})")
    for i, (label, res) in enumerate(curves.items()):
        color = f"C{i}"
        v = [p.v for p in res.points]
        ax.semilogx(v, [p.gain for p in res.points], "o-", ms=3, color=color, label=label)
        if res.v_max_bounded:
            ax.axvline(res.v_max, color=color, ls="--", lw=1)
            ax.annotate(f"v_max {res.v_max:.3g}", (res.v_max, 1 - tolerance), color=color,
                        rotation=90, va="top", ha="right", fontsize=8)
    # hollow markers, the first largest: controls that coincide (the exact coupling tracks
    # every speed at every kappa) stay visible as nested rings
    count = len(controls or {})
    for i, (label, res) in enumerate((controls or {}).items()):
        ax.semilogx([p.v for p in res.points], [p.gain for p in res.points], ":",
                    marker="osd^"[i % 4], ms=4 + 3 * (count - 1 - i), mfc="none",
                    color="0.4", label=label)
    ax.set_xlabel("commanded speed v (rad/τ)")
    ax.set_ylabel("speed gain (bump speed / v)")
    ax.set_title("velocity coupling: speed gain and maximum tracked speed")
    ax.legend(frameon=False, fontsize=8)
    return fig
