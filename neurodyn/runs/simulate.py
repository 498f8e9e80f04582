"""``neurodyn simulate`` and ``neurodyn manifold`` as runs: simulate a fitted network, or
survey its attractor manifold, and write the trajectory, ``metrics.json`` and figures."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from _runkit.files import atomic_savez

from ..dynamics.inputs import Velocity
from ..dynamics.simulation import simulate
from ..io import write_json
from ..network import HopfieldNetwork

__all__ = ["simulate_run", "manifold_report"]


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
    from ..analysis.survey import survey_manifold
    from ..geometry.populations import Torus
    from ..plotting import save_figure
    from ..plotting.manifold import (
        plot_activity_isomap,
        plot_activity_pca,
        plot_energy_landscape,
        plot_manifold_path,
    )

    if animate and out_dir is None:
        raise ValueError("animate=True: needs out_dir to write the GIF into")
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
