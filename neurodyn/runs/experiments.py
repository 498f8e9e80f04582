"""The experiments on a fitted model as runs (``neurodyn restore``, ``path-integrate``,
``speed-gain``, ``diffuse``).

Each command's config (:class:`RestoreConfig`, :class:`PathIntegrateConfig`,
:class:`SpeedGainConfig`, :class:`DiffuseConfig`: its options by name) goes to
:func:`experiment_run`, which checks it, reads the model and checks the memory of the saved
states before it claims ``out``, then runs the experiment's writer (:func:`restore_run`,
:func:`path_integrate_run`, :func:`speed_gain_run`, :func:`diffuse_run`: each writes its
figures and ``metrics.json`` into a directory, and a script may call it on a network).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from _runkit import BadInput, RunDir
from _runkit.files import atomic_savez

from ..analysis.bump_motion import default_lags
from ..dynamics.inputs import Velocity
from ..dynamics.perturbations import PERTURBATIONS
from ..experiments.speed import DEFAULT_VELOCITIES, saved_states
from ..io import load_model, write_json
from ..network import HopfieldNetwork
from .simulate import check_states_memory, velocity_option

__all__ = ["RestoreConfig", "PathIntegrateConfig", "SpeedGainConfig", "DiffuseConfig",
           "experiment_run", "restore_run", "path_integrate_run", "speed_gain_run",
           "speed_gain_network", "diffuse_run"]

#: what a prepared experiment leaves to run once ``out`` is claimed: ``write(out)`` -> metrics
_Write = Callable[[Path], dict]


@dataclass(frozen=True, kw_only=True)
class _Experiment:
    """The options every experiment on a model takes: the ``model``, the simulated
    ``duration`` and step ``dt`` (tau), the ``seed`` and the ``device``."""

    command: ClassVar[str]
    model: str
    duration: float
    dt: float
    seed: int = 0
    device: str = "cpu"


    def check(self) -> object:
        """Refuse, before the model is read, what the options alone rule out; return what
        they build (handed to :meth:`prepare`)."""

    def prepare(self, network: HopfieldNetwork, built: object) -> tuple[_Write, dict]:
        """Check the options against ``network`` and the memory of the saved states; return
        the writer of the run and what ``config.json`` records beside the options."""
        raise NotImplementedError

    def steps(self) -> int:
        """The steps of a run of ``duration`` at ``dt``."""
        if self.dt > self.duration:
            raise BadInput(f"--dt={self.dt}: larger than --duration={self.duration}")
        return math.floor(self.duration / self.dt) + 1


def experiment_run(config: _Experiment, out: str | Path, arguments: dict | None = None) -> dict:
    """Run the experiment of ``config`` in the run directory ``out``; return its metrics.

    The options, the model and the memory are checked before ``out`` is claimed;
    ``config.json`` records ``arguments`` (default the config's fields) with what the run
    resolved.
    """
    built = config.check()
    network, _ = load_model(config.model, what="--model")
    write, resolved = config.prepare(network, built)
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command=f"neurodyn {config.command}", config={**arguments, **resolved},
                seed=config.seed) as run:
        return write(run.out)


@dataclass(frozen=True, kw_only=True)
class RestoreConfig(_Experiment):
    """``neurodyn restore``: ``count`` states per perturbation kind of ``kinds``
    (comma-separated), at relative sizes ``strength_min`` to ``strength_max``; restored
    within the relative distance ``threshold``."""

    command: ClassVar[str] = "restore"
    duration: float = 20.0
    dt: float = 0.1
    count: int = 256
    kinds: str = "noise,shape,amplitude,lesion"
    strength_min: float = 0.1
    strength_max: float = 0.5
    threshold: float = 0.01

    def check(self) -> tuple[str, ...]:
        kinds = tuple(k.strip() for k in self.kinds.split(",") if k.strip())
        allowed = tuple(k for k in PERTURBATIONS if k != "none")
        if not kinds or any(k not in allowed for k in kinds):
            raise BadInput(f"--kinds={self.kinds!r}: give comma-separated kinds from {allowed}")
        if self.strength_max < self.strength_min:
            raise BadInput(f"--strength-max={self.strength_max}: must be >= --strength-min="
                           f"{self.strength_min}")
        return kinds

    def prepare(self, network: HopfieldNetwork, kinds: tuple[str, ...]) -> tuple[_Write, dict]:
        saved = self.steps() // max(1, round(1.0 / self.dt)) + 2
        check_states_memory("--count/--duration", saved, self.count * len(kinds),
                            network.geometry.size)
        return (lambda out: restore_run(
            network, out, self.count, kinds, (self.strength_min, self.strength_max),
            self.duration, self.dt, self.threshold, self.seed, device=self.device)), {}


@dataclass(frozen=True, kw_only=True)
class PathIntegrateConfig(_Experiment):
    """``neurodyn path-integrate``: ``runs`` runs driven by the ``velocity`` spec, through the
    ``velocity_coupling`` (``exact`` or ``asymmetric`` of kernel width ``coupling_width``)."""

    command: ClassVar[str] = "path-integrate"
    duration: float = 200.0
    dt: float = 0.1
    velocity: str = "ou:0.2:10:0.5"
    runs: int = 64
    velocity_coupling: str = "exact"
    coupling_width: float = 0.3

    def check(self) -> Velocity:
        return velocity_option(self.velocity)

    def prepare(self, network: HopfieldNetwork, velocity: Velocity) -> tuple[_Write, dict]:
        saved = self.steps() // max(1, round(1.0 / self.dt)) + 2
        check_states_memory("--runs/--duration", saved, self.runs, network.geometry.size)
        return (lambda out: path_integrate_run(
            network, out, velocity, self.runs, self.duration, self.dt, self.seed,
            device=self.device, coupling=self.velocity_coupling,
            width=self.coupling_width)), {}


@dataclass(frozen=True, kw_only=True)
class SpeedGainConfig(_Experiment):
    """``neurodyn speed-gain``: the gain of the ``velocity_coupling`` (kernel width
    ``coupling_width``) at ``velocities`` (increasing comma-separated speeds; None:
    :data:`~neurodyn.experiments.speed.DEFAULT_VELOCITIES`), a speed tracked when
    ``|gain - 1| <= tolerance``; ``dt`` is the largest step."""

    command: ClassVar[str] = "speed-gain"
    duration: float = 40.0
    dt: float = 0.05
    velocity_coupling: str = "asymmetric"
    coupling_width: float = 0.3
    velocities: str | None = None
    tolerance: float = 0.05

    def check(self) -> tuple[float, ...] | None:
        """The speeds given (None: the defaults)."""
        vs = None if self.velocities is None else _speeds(self.velocities)
        if not 0 < self.tolerance < 1:
            raise BadInput(f"--tolerance={self.tolerance:g}: must be in (0, 1)")
        return vs

    def prepare(self, network: HopfieldNetwork,
                velocities: tuple[float, ...] | None) -> tuple[_Write, dict]:
        if network.manifold is None:
            raise BadInput("--model: the model has no target manifold to start the bump on")
        speeds = velocities or DEFAULT_VELOCITIES
        driven = speed_gain_network(network, self.velocity_coupling, self.coupling_width)
        check_states_memory("--duration/--velocities", saved_states(
            driven, speeds, self.duration, self.dt), 1, network.geometry.size)
        return (lambda out: _speed_gain_into(
            driven, out, self.velocity_coupling, self.coupling_width, speeds, self.duration,
            self.tolerance, self.dt)), {"velocities": list(speeds)}


def _speeds(text: str) -> tuple[float, ...]:
    """Increasing comma-separated speeds > 0 (rad per tau)."""
    try:
        vs = tuple(float(x) for x in text.split(","))
    except ValueError:
        vs = ()
    if not vs or any(not (math.isfinite(v) and v > 0) for v in vs) or list(vs) != sorted(set(vs)):
        raise BadInput(f"--velocities={text!r}: give increasing comma-separated speeds > 0 "
                       "(rad per tau)")
    return vs


@dataclass(frozen=True, kw_only=True)
class DiffuseConfig(_Experiment):
    """``neurodyn diffuse``: ``runs`` runs under noise ``noise`` (potential units per
    sqrt(tau))."""

    command: ClassVar[str] = "diffuse"
    duration: float = 200.0
    dt: float = 0.05
    noise: float = 0.05
    runs: int = 128

    def prepare(self, network: HopfieldNetwork, built: None) -> tuple[_Write, dict]:
        every = max(1, round(1.0 / self.dt))
        saved = self.steps() // every + 2
        try:
            default_lags(self.duration, every * self.dt)
        except BadInput:
            raise BadInput(f"--duration={self.duration:g}: too short for a diffusion estimate; "
                           f"it needs at least three saved steps of {every * self.dt:g} tau"
                           ) from None
        check_states_memory("--runs/--duration", saved, self.runs, network.geometry.size)
        return (lambda out: diffuse_run(network, out, self.noise, self.runs, self.duration,
                                        self.dt, self.seed, device=self.device)), {}


def restore_run(network: HopfieldNetwork, out: str | Path, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0,
                device: str = "cpu") -> dict:
    """Run :func:`~neurodyn.analysis.recovery.restoration` (simulated on ``device``); write
    ``restoration_KIND.png``, ``energy_descent.png`` and ``metrics.json``.

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.recovery.RestorationResult.to_dict`).
    """
    from ..analysis.recovery import restoration
    from ..plotting import manifold_energy, plot_distance, plot_energy, save_figure

    out = Path(out)
    res = restoration(network, count, kinds, strength, duration, dt, threshold, seed, device=device)
    for kind, tr in res.trajectories.items():
        fig = plot_distance(tr, threshold)
        fig.axes[0].set_title(f"restoration after '{kind}' perturbations")
        save_figure(fig, out / f"restoration_{kind}.png")
    save_figure(plot_energy(res.trajectories[kinds[0]], reference=manifold_energy(network)),
                out / "energy_descent.png")
    metrics = res.to_dict()
    write_json(metrics, out / "metrics.json")
    return metrics


def path_integrate_run(network: HopfieldNetwork, out: str | Path,
                       velocity: Velocity | str = "ou:0.2:10:0.5", runs: int = 64,
                       duration: float = 200.0, dt: float = 0.1, seed: int = 0,
                       device: str = "cpu", coupling: str = "exact",
                       width: float = 0.3) -> dict:
    """Run :func:`~neurodyn.analysis.bump_motion.path_integration` (simulated on ``device``); write
    ``trajectory.npz`` (without the states), ``path_integration.png`` and ``metrics.json``.

    ``coupling`` is the velocity coupling (:func:`neurodyn.network.velocity_coupling`):
    ``exact`` keeps the network's own transport (the exact one a fit makes), ``asymmetric``
    replaces it by the asymmetric coupling of kernel width ``width`` (rad).

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.bump_motion.PathIntegrationResult.to_dict`,
        with ``velocity_coupling`` and, for ``asymmetric``, ``coupling_width``).
    """
    from ..analysis.bump_motion import path_integration
    from ..network import velocity_coupling
    from ..plotting import plot_path_integration, save_figure

    out = Path(out)
    if coupling != "exact":
        network = velocity_coupling(network, coupling, width)
    res = path_integration(network, velocity, runs, duration, dt, seed, device=device)
    save_figure(plot_path_integration(res.trajectory), out / "path_integration.png")
    atomic_savez(out / "trajectory.npz", **{k: v for k, v in res.trajectory.arrays().items()
                                            if k not in ("u", "r")})
    metrics = res.to_dict()
    metrics["velocity_coupling"] = coupling
    if coupling != "exact":
        metrics["coupling_width"] = float(width)
    write_json(metrics, out / "metrics.json")
    return metrics


def speed_gain_run(network: HopfieldNetwork, out: str | Path, coupling: str = "asymmetric",
                   width: float = 0.3, velocities=None, duration: float = 40.0,
                   tolerance: float = 0.05, dt_max: float = 0.05) -> dict:
    """Run :func:`~neurodyn.experiments.speed.speed_gain` for a velocity coupling; write
    ``speed_gain.png`` and ``metrics.json``.

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.experiments.speed.SpeedGainResult.to_dict`, with
        ``velocity_coupling`` and ``coupling_width``).
    """
    return _speed_gain_into(speed_gain_network(network, coupling, width), out, coupling, width,
                            DEFAULT_VELOCITIES if velocities is None else velocities, duration,
                            tolerance, dt_max)


def _speed_gain_into(driven: HopfieldNetwork, out: str | Path, coupling: str, width: float,
                     velocities, duration: float, tolerance: float, dt_max: float) -> dict:
    """:func:`speed_gain_run` on the network it drives (:func:`speed_gain_network`), built
    once by the caller."""
    from ..experiments.speed import plot_speed_gain, speed_gain
    from ..plotting import save_figure

    out = Path(out)
    res = speed_gain(driven, velocities, duration, tolerance, dt_max=dt_max)
    save_figure(plot_speed_gain({coupling: res}, tolerance), out / "speed_gain.png")
    metrics = {"velocity_coupling": coupling, "coupling_width": float(width), **res.to_dict()}
    write_json(metrics, out / "metrics.json")
    return metrics


def speed_gain_network(network: HopfieldNetwork, coupling: str = "asymmetric",
                       width: float = 0.3) -> HopfieldNetwork:
    """The network :func:`speed_gain_run` drives: its own transport for ``exact`` (the one a
    fit makes), else (or without one) the named coupling
    (:func:`neurodyn.network.velocity_coupling`)."""
    from ..network import velocity_coupling

    if coupling != "exact" or network.transport is None:
        return velocity_coupling(network, coupling, width)
    return network


def diffuse_run(network: HopfieldNetwork, out: str | Path, noise: float = 0.05, runs: int = 128,
                duration: float = 200.0, dt: float = 0.05, seed: int = 0,
                device: str = "cpu") -> dict:
    """Run :func:`~neurodyn.analysis.bump_motion.diffusion` (simulated on ``device``) and write
    ``metrics.json``.

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.bump_motion.DiffusionResult.to_dict`).
    """
    from ..analysis.bump_motion import diffusion

    metrics = diffusion(network, noise, runs, duration, dt, seed, device=device).to_dict()
    write_json(metrics, Path(out) / "metrics.json")
    return metrics
