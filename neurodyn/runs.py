"""Run directories: each function runs one experiment and writes its files into ``out``.

A run directory holds ``metrics.json`` (the numbers), PNG figures and the run's arrays
(``model.pt``, ``trajectory.npz``). The command line calls these functions after parsing its
arguments; a script can call them the same way. ``config.json`` is written by the caller, which
knows the command line.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from .fit import FitConfig, fit
from .inputs import Velocity
from .io import save_model, write_json
from .network import HopfieldNetwork
from .simulate import simulate

__all__ = ["fit_run", "simulate_run", "restore_run", "path_integrate_run", "diffuse_run"]


def fit_run(config: FitConfig, out: str | Path, fresh: bool = False,
            progress_bar: bool | None = None) -> dict:
    """Fit a network and write ``model.pt``, ``metrics.json`` and the fit report's figures.

    Parameters
    ----------
    config : FitConfig
        What to fit.
    out : str or Path
        The run directory; a checkpoint ``fit_state.pt`` there is resumed unless ``fresh``.
    fresh : bool
        Ignore an existing checkpoint and start over.
    progress_bar : bool or None
        Show a progress bar (default: only on a terminal).

    Returns
    -------
    dict
        The metrics written to ``metrics.json``.
    """
    from .experiments import network_report

    out = Path(out)
    result = fit(config, out_dir=out, resume=not fresh, progress_bar=progress_bar)
    save_model(result.network, out / "model.pt", extra={"fit": config.to_dict()})
    metrics = {"fit_seconds": result.seconds, "resumed_from_step": result.resumed_from,
               "final_loss": {k: v[-1] for k, v in result.history.items() if v}}
    metrics.update(network_report(result.network, out, result.history))
    write_json(metrics, out / "metrics.json")
    return metrics


def simulate_run(network: HopfieldNetwork, u0: torch.Tensor, duration: float, dt: float,
                 out: str | Path, method: str | None = None, velocity: Velocity | None = None,
                 noise: float = 0.0, save_every: int = 10, seed: int = 0,
                 progress_bar: bool | None = None, device: str = "cpu") -> dict:
    """Simulate ``u0`` and write ``trajectory.npz``, ``metrics.json`` and figures into ``out``.

    Parameters
    ----------
    network : HopfieldNetwork
        The network.
    u0 : Tensor, shape (B, *population_shape)
        Initial potentials.
    duration, dt : float
        Simulated time and step, in units of tau.
    out : str or Path
        The run directory.
    method, velocity, noise, save_every, seed, progress_bar, device
        As in :func:`neurodyn.simulate.simulate`.

    Returns
    -------
    dict
        The metrics written to ``metrics.json``: wall time, field evaluations, distances to
        the manifold, the energy audit (autonomous runs) or the path-integration error.
    """
    from .diagnostics import energy_audit, path_integration_error
    from .plotting import (
        plot_activity,
        plot_distance,
        plot_energy,
        plot_path_integration,
        save_figure,
    )

    out = Path(out)
    start = time.perf_counter()
    tr = simulate(network, u0, duration, dt, method=method, velocity=velocity, noise=noise,
                  save_every=save_every, seed=seed, progress_bar=progress_bar, device=device)
    seconds = time.perf_counter() - start
    np.savez_compressed(out / "trajectory.npz", **tr.arrays())
    metrics = {"seconds": seconds, "nfe": tr.nfe, "method": tr.method, "backend": tr.backend,
               "device": str(device), "runs": u0.shape[0],
               "distance_initial_max": float(tr.distance[0].max()),
               "distance_final_max": float(tr.distance[-1].max()),
               "distance_final_median": float(tr.distance[-1].median())}
    if velocity is None and noise == 0:
        metrics["energy"] = energy_audit(tr) if len(tr.t) > 1 else None
        save_figure(plot_energy(tr), out / "energy.png")
    if velocity is not None:
        err = path_integration_error(tr)
        metrics["path_error_rms_final"] = err["rms_final"]
        metrics["path_error_max_final"] = err["max_final"]
        save_figure(plot_path_integration(tr), out / "path_integration.png")
    save_figure(plot_distance(tr), out / "distance.png")
    if network.geometry.dim == 1:
        save_figure(plot_activity(tr), out / "activity.png")
    write_json(metrics, out / "metrics.json")
    return metrics


def restore_run(network: HopfieldNetwork, out: str | Path, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0) -> dict:
    """Run :func:`neurodyn.experiments.restoration` and write its figures and ``metrics.json``."""
    from .experiments import restoration

    metrics, _ = restoration(network, count, kinds, strength, duration, dt, threshold, seed,
                             Path(out))
    write_json(metrics, Path(out) / "metrics.json")
    return metrics


def path_integrate_run(network: HopfieldNetwork, out: str | Path,
                       velocity: Velocity | str = "ou:0.2:10:0.5", runs: int = 64,
                       duration: float = 200.0, dt: float = 0.1, seed: int = 0) -> dict:
    """Run :func:`neurodyn.experiments.path_integration`; write ``trajectory.npz`` (no states),
    the figure and ``metrics.json``."""
    from .experiments import path_integration

    out = Path(out)
    metrics, tr = path_integration(network, velocity, runs, duration, dt, seed, out)
    np.savez_compressed(out / "trajectory.npz", **{k: v for k, v in tr.arrays().items()
                                                   if k not in ("u", "r")})
    write_json(metrics, out / "metrics.json")
    return metrics


def diffuse_run(network: HopfieldNetwork, out: str | Path, noise: float = 0.05, runs: int = 128,
                duration: float = 200.0, dt: float = 0.05, seed: int = 0) -> dict:
    """Run :func:`neurodyn.experiments.diffusion` and write ``metrics.json``."""
    from .experiments import diffusion

    metrics, _ = diffusion(network, noise, runs, duration, dt, seed)
    write_json(metrics, Path(out) / "metrics.json")
    return metrics
