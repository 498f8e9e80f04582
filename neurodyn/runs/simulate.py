"""``neurodyn simulate`` and ``neurodyn manifold`` as runs: simulate a fitted network, or
survey its attractor manifold, and write the trajectory, ``metrics.json`` and figures.

:func:`simulate_run` and :func:`manifold_run` take a typed config (the command's options by
name), read the model and check the whole input, the memory of the saved states included,
before they claim ``out``.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from _runkit import BadInput, RunDir, check_memory
from _runkit.checks import check_installed
from _runkit.files import atomic_savez

from ..analysis.survey import MIN_SURVEY_SAMPLES, survey_manifold
from ..dynamics.inputs import ArrayVelocity, OrnsteinUhlenbeck, Velocity, parse_velocity
from ..dynamics.perturbations import perturbed_states
from ..dynamics.simulation import simulate
from ..io import load_model, load_states, load_velocity_array, write_json
from ..network import HopfieldNetwork

__all__ = ["SimulateConfig", "simulate_run", "ManifoldConfig", "manifold_run",
           "manifold_report", "simulate_into", "check_states_memory", "velocity_option"]

@dataclass(frozen=True, kw_only=True)
class SimulateConfig:
    """What ``neurodyn simulate`` runs, by the names of its options: the ``model``, the
    initial states (``init``, a file of potentials, or ``count`` states of the ``perturb``
    kind at relative sizes ``strength`` to ``strength_max``), ``duration`` and ``dt`` (tau;
    ``tau_seconds``, tau in seconds, times the NWB file), the ``method``, the ``noise``, a
    ``velocity`` spec or ``velocity_file``, ``save_every``, the ``seed``, the ``device`` and
    ``nwb`` (also write ``activity.nwb``)."""

    model: str
    init: str | None = None
    perturb: str = "noise"
    strength: float = 0.3
    strength_max: float | None = None
    count: int = 16
    velocity: str | None = None
    velocity_file: str | None = None
    duration: float = 20.0
    dt: float = 0.1
    tau_seconds: float = 0.01
    method: str | None = None
    noise: float = 0.0
    save_every: int = 10
    seed: int = 0
    nwb: bool = False
    device: str = "cpu"



def simulate_run(config: SimulateConfig, out: str | Path, arguments: dict | None = None,
                 progress: bool | None = None) -> dict:
    """Simulate ``config`` in the run directory ``out``: ``trajectory.npz``, ``metrics.json``,
    ``timing.json``, figures (:func:`simulate_into`) and, with ``nwb``, ``activity.nwb``.

    The step, the model, the initial states, the velocity and the memory of the saved
    states are checked before ``out`` is claimed; ``config.json`` records ``arguments``
    (default the config's fields) with the method and ``strength_max`` as run.
    """
    duration, dt = config.duration, config.dt
    if dt > duration:
        raise BadInput(f"--dt={dt:g}: larger than --duration={duration:g} (tau)")
    network, _ = load_model(config.model, what="--model")
    g = network.geometry
    batch = 1 if config.init is not None else config.count
    saved = math.floor(duration / dt / config.save_every) + 2
    check_states_memory("--duration/--dt/--save-every", saved, batch, g.size)
    u0 = _initial_state(config, network)
    check_states_memory("--duration/--dt/--save-every", saved, u0.shape[0], g.size)
    if config.noise > 0 and config.method not in (None, "euler"):
        raise BadInput(f"--method={config.method} with --noise={config.noise:g}: noise > 0 "
                       "needs method='euler' (Euler-Maruyama)")
    velocity = _velocity(config, duration, dt, u0.shape[0], g.dim)
    resolved = {"method": config.method or ("euler" if config.noise > 0 else "rk4"),  # as run
                "strength_max": config.strength if config.strength_max is None
                else config.strength_max}
    if config.nwb:
        check_installed("pynwb", "nwb", "--nwb (an NWB file of the activity)")
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn simulate", config={**arguments, **resolved},
                seed=config.seed) as run:
        metrics = simulate_into(network, u0, duration, dt, run.out, method=config.method,
                                velocity=velocity, noise=config.noise,
                                save_every=config.save_every, seed=config.seed,
                                progress=progress, device=config.device)
        if config.nwb:
            from ..interop import export_run_nwb

            export_run_nwb(run.out, config.tau_seconds)
        return metrics


def _initial_state(config: SimulateConfig, network: HopfieldNetwork) -> torch.Tensor:
    if config.init is not None:
        return load_states(config.init, network.geometry, name="--init")
    if network.manifold is None:
        raise BadInput("--perturb: the model has no manifold; give --init FILE.npy")
    if config.strength_max is not None and config.strength_max < config.strength:
        raise BadInput(f"--strength-max={config.strength_max}: must be >= --strength="
                       f"{config.strength}")
    return perturbed_states(network.manifold, config.count, config.perturb, config.strength,
                            config.strength_max, config.seed)


def _velocity(config: SimulateConfig, duration: float, dt: float, batch: int,
              dim: int) -> Velocity | None:
    """The velocity input of ``config`` (None without one), checked against the run."""
    if config.velocity is not None and config.velocity_file is not None:
        raise BadInput("--velocity and --velocity-file: give one, not both")
    if config.velocity is not None:
        velocity, name = velocity_option(config.velocity), "--velocity"
    elif config.velocity_file is not None:
        velocity = ArrayVelocity(load_velocity_array(config.velocity_file, "--velocity-file"),
                                 dt)
        name = "--velocity-file"
    else:
        return None
    _check_velocity(velocity, name, duration, dt, batch, dim)
    return velocity


def _check_velocity(velocity, name: str, duration: float, dt: float, batch: int,
                    dim: int) -> None:
    """Refuse a velocity that the simulation would refuse (its parameters, its shape, an array
    shorter than ``duration``), naming the option, before the run directory is claimed.

    A copy is prepared, so the velocity given is left as it was; a random (Ornstein-Uhlenbeck)
    velocity is drawn for one step only, as its checks do not depend on the duration.
    """
    span = dt if isinstance(velocity, OrnsteinUhlenbeck) else duration
    try:
        copy.copy(velocity).prepare(span, dt, batch, dim, torch.Generator().manual_seed(0))
    except BadInput as err:
        raise BadInput(f"{name}: {err}", param=name.lstrip("-").replace("-", "_")) from None


def velocity_option(spec: str, name: str = "--velocity") -> Velocity:
    """:func:`~neurodyn.dynamics.inputs.parse_velocity`, with errors naming the option."""
    if re.search(r"nan|inf", str(spec), re.IGNORECASE):
        raise BadInput(f"{name}={spec!r}: every number must be finite")
    try:
        return parse_velocity(spec)
    except BadInput as err:
        raise BadInput(f"{name}={spec!r}: {err}", param=name.lstrip("-").replace("-", "_")
                       ) from None


def check_states_memory(name: str, saved: int, batch: int, size: int) -> None:
    """Refuse a run whose saved states (``u`` and ``r``, float64) would not fit in memory,
    naming ``name``."""
    check_memory(name, 2.0 * 8.0 * float(saved) * float(batch) * float(size))


def simulate_into(network: HopfieldNetwork, u0: torch.Tensor, duration: float, dt: float,
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
    from ..analysis.diagnostics import energy_audit, path_integration_error
    from ..plotting import (
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


@dataclass(frozen=True, kw_only=True)
class ManifoldConfig:
    """What ``neurodyn manifold`` runs: the ``model``, the activity ``samples`` (at least
    :data:`~neurodyn.analysis.survey.MIN_SURVEY_SAMPLES`), the ``seed``, ``topology``
    (persistent homology, needs ripser) and ``animate`` (the bump GIF)."""

    model: str
    samples: int = 2000
    seed: int = 0
    topology: bool = True
    animate: bool = False



def manifold_run(config: ManifoldConfig, out: str | Path, arguments: dict | None = None) -> dict:
    """Survey the model's attractor manifold in the run directory ``out``
    (:func:`manifold_report`): figures, ``activity.npz``, ``metrics.json`` and, the wall
    times, ``timing.json``. ripser, the samples and their memory are checked before ``out``
    is claimed; ``config.json`` records ``arguments`` (default the config's fields)."""
    if config.topology:
        check_installed("ripser", "topology", "persistent homology (neurodyn manifold)",
                        avoid="--no-topology")
    if config.samples < MIN_SURVEY_SAMPLES:
        raise BadInput(f"--samples={config.samples}: must be >= {MIN_SURVEY_SAMPLES}")
    network, _ = load_model(config.model, what="--model")
    # pairwise distances of the Isomap landmarks and the rates of every sample (float64)
    check_memory("--samples", 8.0 * config.samples * (network.geometry.size * 4 + 2000))
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn manifold", config=arguments, seed=config.seed) as run:
        metrics = manifold_report(network, run.out, samples=config.samples, seed=config.seed,
                                  topology=config.topology, animate=config.animate)
        # wall times differ between runs of one seed: timing.json, not metrics.json
        run.write_json("metrics.json", {k: v for k, v in metrics.items() if k != "seconds"})
        run.write_json("timing.json", {"seconds": metrics["seconds"]})
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
    from ..geometry.populations import Torus
    from ..plotting import save_figure
    from ..plotting.manifold import (
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
            from ..plotting.topology import plot_barcode

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
            from ..plotting.animation import animate_ring_bump, animate_sheet_bump

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
