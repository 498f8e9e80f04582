"""The experiments on a fitted model as runs (``neurodyn restore``, ``path-integrate``,
``speed-gain``, ``diffuse``): each writes its figures and ``metrics.json`` into ``out``."""

from __future__ import annotations

from pathlib import Path

from _runkit.files import atomic_savez

from ..dynamics.inputs import Velocity
from ..io import write_json
from ..network import HopfieldNetwork

__all__ = ["restore_run", "path_integrate_run", "speed_gain_run", "speed_gain_network",
           "diffuse_run"]


def restore_run(network: HopfieldNetwork, out: str | Path, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0,
                device: str = "cpu") -> dict:
    """Run :func:`~neurodyn.analysis.report.restoration` (simulated on ``device``); write
    ``restoration_KIND.png``, ``energy_descent.png`` and ``metrics.json``.

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.report.RestorationResult.to_dict`).
    """
    from ..analysis.report import restoration
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
    """Run :func:`~neurodyn.analysis.report.path_integration` (simulated on ``device``); write
    ``trajectory.npz`` (without the states), ``path_integration.png`` and ``metrics.json``.

    ``coupling`` is the velocity coupling (:func:`neurodyn.network.velocity_coupling`):
    ``exact`` keeps the network's own transport (the exact one a fit makes), ``asymmetric``
    replaces it by the asymmetric coupling of kernel width ``width`` (rad).

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.report.PathIntegrationResult.to_dict`,
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
    from ..experiments.speed import DEFAULT_VELOCITIES, plot_speed_gain, speed_gain
    from ..plotting import save_figure

    out = Path(out)
    network = speed_gain_network(network, coupling, width)
    res = speed_gain(network, DEFAULT_VELOCITIES if velocities is None else velocities,
                     duration, tolerance, dt_max=dt_max)
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
    """Run :func:`~neurodyn.analysis.report.diffusion` (simulated on ``device``) and write
    ``metrics.json``.

    Returns
    -------
    dict
        The metrics written (:meth:`~neurodyn.analysis.report.DiffusionResult.to_dict`).
    """
    from ..analysis.bump_motion import diffusion

    metrics = diffusion(network, noise, runs, duration, dt, seed, device=device).to_dict()
    write_json(metrics, Path(out) / "metrics.json")
    return metrics
