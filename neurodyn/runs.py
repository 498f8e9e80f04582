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

from _runkit import BadInput, check_interrupt
from _runkit.files import atomic_savez

from .dynamics.inputs import Velocity
from .dynamics.simulation import simulate
from .fitting.core import FitConfig, fit
from .io import save_model, write_json
from .network import HopfieldNetwork

__all__ = ["fit_run", "simulate_run", "write_network_report", "restore_run",
           "path_integrate_run", "diffuse_run", "manifold_report"]


def fit_run(config: FitConfig, out: str | Path, fresh: bool = False,
            progress: bool | None = None) -> dict:
    """Fit a network and write ``model.pt``, ``metrics.json`` and the fit report's figures.

    Parameters
    ----------
    config : FitConfig
        What to fit.
    out : str or Path
        The run directory; a checkpoint ``fit_state.pt`` there is resumed unless ``fresh``.
    fresh : bool
        Ignore an existing checkpoint and start over.
    progress : bool or None
        Show a progress bar (default: only on a terminal).

    Returns
    -------
    dict
        The metrics written to ``metrics.json``, and ``resumed_from_step`` (the step this
        process resumed from, 0 for a fresh fit), written to ``timing.json`` with the wall time.
    """
    from .analysis.attraction import attraction_report
    from .fitting.core import FitFailed, FitInterrupted

    out = Path(out)
    result = fit(config, out_dir=out, resume=not fresh, progress=progress)
    if result.network.bias.device.type != "cpu":  # the report and model.pt are on the CPU
        result.network = result.network.cpu()
        result.network.manifold = result.network.manifold.to("cpu")
    # how long and from which step this process ran differ between an interrupted-and-resumed
    # fit and an uninterrupted one, so they go to timing.json, not metrics.json
    write_json({"fit_seconds": result.seconds, "resumed_from_step": result.resumed_from},
               out / "timing.json")
    metrics = {"device": config.device,
               "final_loss": {k: v[-1] for k, v in result.history.items() if v}}
    try:  # the report simulates (numba compiles): a Ctrl-C there may surface only as the flag
        check_interrupt()
        metrics.update(write_network_report(result.network, out, result.history,
                                            family=config.family, unfitted=result.unfitted))
        check_interrupt()
        report = attraction_report(result.network, config.kappa, config.tolerance)
        check_interrupt()
    except KeyboardInterrupt:
        raise FitInterrupted(f"fit interrupted after all {config.steps} steps, while its report "
                             f"was made; checkpoint {out / 'fit_state.pt'} holds them; rerun the "
                             "same command to write the model and report") from None
    metrics["attraction"] = report.to_dict()
    if config.profile != "cosine":  # the cosine default's metrics.json stays as it was
        metrics["profile"] = _profile_metrics(result.network, config)
    failed = report.failed
    write_json(metrics, out / "metrics.json")
    if failed and config.check_kappa:
        raise FitFailed(f"kappa={config.kappa:g} not reached: " + "; ".join(failed)
                        + f" (no model written; see {out / 'metrics.json'})")
    # the run directory is this command's (claimed under its lock): a rerun replaces its model
    save_model(result.network, out / "model.pt", overwrite=True)  # records the fit config
    return {"resumed_from_step": result.resumed_from, **metrics}


def _profile_metrics(network: HopfieldNetwork, config: FitConfig) -> dict:
    """The fitted profile, the family, its band-edge content
    (:func:`~neurodyn.fitting.profiles.band_edge_content`) and how well the bump the network
    rests in matches the requested rates
    (:func:`~neurodyn.experiments.capacity.resting_correlation`)."""
    from .experiments.capacity import resting_correlation
    from .fitting.profiles import band_edge_content, profile_label

    out = {"name": profile_label(config.profile), "family": config.family,
           "band_edge_content": band_edge_content(network.geometry, network.manifold.u0)}
    if config.family == "template":
        out["harmonics"] = network.energy_fn.harmonics
        out["leak"] = float(network.energy_fn.leak)
    out["rate_correlation"] = resting_correlation(network)
    return out


def simulate_run(network: HopfieldNetwork, u0: torch.Tensor, duration: float, dt: float,
                 out: str | Path, method: str | None = None, velocity: Velocity | None = None,
                 noise: float = 0.0, save_every: int = 10, seed: int = 0,
                 progress: bool | None = None, device: str = "cpu") -> dict:
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
    method : str or None
        As in :func:`neurodyn.dynamics.simulation.simulate`.
    velocity : Velocity or None
        As in :func:`neurodyn.dynamics.simulation.simulate`.
    noise : float
        As in :func:`neurodyn.dynamics.simulation.simulate`.
    save_every, seed : int
        As in :func:`neurodyn.dynamics.simulation.simulate`.
    progress : bool or None
        As in :func:`neurodyn.dynamics.simulation.simulate`.
    device : str
        As in :func:`neurodyn.dynamics.simulation.simulate`.

    Returns
    -------
    dict
        The metrics written to ``metrics.json``: field evaluations, distances to the manifold,
        the energy audit (input-aware for a velocity run: the power balance), the
        path-integration error (velocity runs); and ``seconds``, the
        wall time, written to ``timing.json`` (it differs between runs of one seed).
    """
    from .analysis.diagnostics import energy_audit, path_integration_error
    from .plotting import (
        manifold_energy,
        plot_activity,
        plot_distance,
        plot_energy,
        plot_path_integration,
        save_figure,
    )

    out = Path(out)
    start = time.perf_counter()
    tr = simulate(network, u0, duration, dt, method=method, velocity=velocity, noise=noise,
                  save_every=save_every, seed=seed, progress=progress, device=device)
    seconds = time.perf_counter() - start
    atomic_savez(out / "trajectory.npz", **tr.arrays())
    metrics = {"nfe": tr.nfe, "method": tr.method, "backend": tr.backend,
               "device": str(device), "runs": u0.shape[0],
               "distance_initial_max": float(tr.distance[0].max()),
               "distance_final_max": float(tr.distance[-1].max()),
               "distance_final_median": float(tr.distance[-1].median())}
    if noise == 0:
        # a driven run is audited input-aware: the power balance of the velocity input
        metrics["energy"] = (energy_audit(tr, network=network).to_dict() if len(tr.t) > 1
                             else None)
    if velocity is None and noise == 0:
        save_figure(plot_energy(tr, reference=manifold_energy(network)), out / "energy.png")
    if velocity is not None:
        err = path_integration_error(tr)
        metrics["path_error_rms_final"] = err.rms_final
        metrics["path_error_max_final"] = err.max_final
        save_figure(plot_path_integration(tr), out / "path_integration.png")
    save_figure(plot_distance(tr), out / "distance.png")
    if network.geometry.dim == 1:
        save_figure(plot_activity(tr), out / "activity.png")
    write_json(metrics, out / "metrics.json")
    write_json({"seconds": seconds}, out / "timing.json")
    return {"seconds": seconds, **metrics}


def write_network_report(network: HopfieldNetwork, out: str | Path,
                         history: dict | None = None, zero_tol: float = 1e-3,
                         family: str = "seal", unfitted: dict | None = None) -> dict:
    """Draw :func:`~neurodyn.analysis.report.network_report` into ``out``.

    Writes ``jacobian_spectrum.png``, ``connectivity.png``, ``bump.png`` (ring) and, given a
    loss ``history``, ``fit_loss.png`` (:func:`~neurodyn.plotting.plot_loss` with the fit's
    ``family`` and ``unfitted`` losses).

    Returns
    -------
    dict
        The report's numbers (:meth:`~neurodyn.analysis.report.NetworkReport.to_dict`).
    """
    from .analysis.report import network_report
    from .plotting import plot_bump, plot_connectivity, plot_loss, plot_spectrum, save_figure

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = network_report(network, zero_tol)
    save_figure(plot_spectrum(report.eigenvalues, zero_tol), out / "jacobian_spectrum.png")
    save_figure(plot_connectivity(report.connectivity), out / "connectivity.png")
    if network.geometry.dim == 1:
        save_figure(plot_bump(network), out / "bump.png")
    if history:
        save_figure(plot_loss(history, family=family, unfitted=unfitted), out / "fit_loss.png")
    return report.to_dict()


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
    from .analysis.report import restoration
    from .plotting import manifold_energy, plot_distance, plot_energy, save_figure

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
    from .analysis.bump_motion import path_integration
    from .network import velocity_coupling
    from .plotting import plot_path_integration, save_figure

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
    from .experiments.speed import DEFAULT_VELOCITIES, plot_speed_gain, speed_gain
    from .plotting import save_figure

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
    from .network import velocity_coupling

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
    from .analysis.bump_motion import diffusion

    metrics = diffusion(network, noise, runs, duration, dt, seed, device=device).to_dict()
    write_json(metrics, Path(out) / "metrics.json")
    return metrics


def manifold_report(network: HopfieldNetwork, out_dir: str | Path | None = None,
                    samples: int = 2000, seed: int = 0, topology: bool = True,
                    animate: bool = False, isomap_points: int = 1000,
                    max_landmarks: int = 250) -> dict:
    """Survey a network's attractor manifold and write the figures and ``activity.npz``.

    Runs :func:`~neurodyn.analysis.survey.survey_manifold` and draws ``pca.png``, ``isomap.png``,
    ``barcode.png`` (with ``topology``), ``energy_landscape.png``, ``path.png`` and, with
    ``animate``, ``ring_bump.gif`` or ``sheet_bump.gif``.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and transport.
    out_dir : str or Path or None
        The run directory; nothing is written when ``None``.
    samples, seed : int
        As in :func:`~neurodyn.analysis.survey.survey_manifold`.
    topology : bool
        As in :func:`~neurodyn.analysis.survey.survey_manifold`.
    isomap_points, max_landmarks : int
        As in :func:`~neurodyn.analysis.survey.survey_manifold`.
    animate : bool
        Also write the bump GIF (needs ``out_dir``).

    Returns
    -------
    dict
        The survey's metrics, with ``seconds`` (per step, ``figures``, ``total``).
    """
    from .analysis.survey import survey_manifold
    from .geometry.populations import Torus
    from .plotting import save_figure
    from .plotting.manifold import (
        plot_activity_isomap,
        plot_activity_pca,
        plot_energy_landscape,
        plot_manifold_path,
    )

    if animate and out_dir is None:
        raise BadInput("animate=True: needs out_dir to write the GIF into", param="animate")
    start = time.perf_counter()
    survey = survey_manifold(network, samples=samples, seed=seed, topology=topology,
                             isomap_points=isomap_points, max_landmarks=max_landmarks)
    seconds = dict(survey.seconds)
    clock = time.perf_counter()
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        act, tr = survey.activity, survey.path
        if survey.homology is not None:
            from .plotting.topology import plot_barcode

            fig = plot_barcode(survey.homology, units="rate")
            fig.suptitle(f"persistent homology of activity: Betti {tuple(survey.metrics['betti'])}")
            save_figure(fig, out / "barcode.png")
        save_figure(plot_energy_landscape(survey.landscape), out / "energy_landscape.png")
        save_figure(plot_manifold_path(tr), out / "path.png")
        steps = min(61, len(tr.t))  # the first 60 tau of the first run
        path_rates = tr.r[:steps, 0].detach().cpu().numpy().reshape(steps, -1)
        save_figure(plot_activity_pca(act, survey.pca, path=path_rates), out / "pca.png")
        save_figure(plot_activity_isomap(act, survey.isomap, survey.isomap_index),
                    out / "isomap.png")
        atomic_savez(out / "activity.npz", rates=act.rates.astype(np.float32),
                     decoded=act.decoded, distance=act.distance, pca=survey.pca.coords[:, :3])
        seconds["figures"] = time.perf_counter() - clock
        if animate:
            from .plotting.animation import animate_ring_bump, animate_sheet_bump

            clock = time.perf_counter()
            g = network.geometry
            if g.dim == 1:
                animate_ring_bump(tr, out / "ring_bump.gif")
            else:
                lattice = g.lattice if isinstance(g, Torus) else "square"
                animate_sheet_bump(tr, out / "sheet_bump.gif", lattice=lattice)
            seconds["animation"] = time.perf_counter() - clock
    seconds["total"] = time.perf_counter() - start
    return {**survey.metrics, "seconds": seconds}
