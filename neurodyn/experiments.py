"""Standard experiments on a network: restoration, path integration, diffusion, fit report.

Each returns a metrics dict (JSON-serialisable) and, where useful, the trajectories, and can
write its figures into a directory. The command line and the demos call these functions.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from .diagnostics import (
    connectivity_profile,
    energy_audit,
    fixed_point_residual,
    jacobian_spectrum,
    path_integration_error,
    summarize_spectrum,
)
from .inputs import Velocity, parse_velocity
from .network import HopfieldNetwork
from .perturb import PERTURBATIONS, perturb, random_strengths
from .plotting import (
    plot_bump,
    plot_connectivity,
    plot_distance,
    plot_energy,
    plot_loss,
    plot_path_integration,
    plot_spectrum,
    save_figure,
)
from .simulate import SimulationResult, simulate

__all__ = ["network_report", "restoration", "path_integration", "diffusion"]


def network_report(network: HopfieldNetwork, out_dir: str | Path | None = None,
                   history: dict | None = None, zero_tol: float = 1e-3) -> dict:
    """Spectrum, connectivity and fixed-point residual of a network at its manifold.

    Returns
    -------
    dict with ``fixed_point_residual``, ``jacobian`` (``n_zero``, ``zero``, ``slowest_nonzero``)
    and ``connectivity`` (``w0``, ``min_far`` = most negative weight beyond pi/3,
    ``zero_crossings``).
    """
    ev = jacobian_spectrum(network)
    summary = summarize_spectrum(ev, zero_tol)
    prof = connectivity_profile(network)
    metrics = {
        "fixed_point_residual": fixed_point_residual(network),
        "jacobian": {"n_zero": summary.n_zero, "zero": summary.zero,
                     "slowest_nonzero": summary.slowest_nonzero, "zero_tol": zero_tol},
        "connectivity": {"w0": prof.at_zero, "min_far": prof.min_beyond(math.pi / 3),
                         "zero_crossings": prof.zero_crossings()},
    }
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        save_figure(plot_spectrum(ev, zero_tol), out / "jacobian_spectrum.png")
        save_figure(plot_connectivity(prof), out / "connectivity.png")
        if network.geometry.dim == 1:
            save_figure(plot_bump(network), out / "bump.png")
        if history:
            save_figure(plot_loss(history), out / "fit_loss.png")
    return metrics


def restoration(network: HopfieldNetwork, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0,
                out_dir: str | Path | None = None) -> tuple[dict, dict[str, SimulationResult]]:
    """Relaxation of perturbed manifold states back to the manifold.

    For each kind, ``count`` states at random manifold points are perturbed with relative
    strengths uniform in ``strength`` and simulated autonomously for ``duration``.

    Returns
    -------
    metrics : per kind: ``fraction_within`` (final distance <= threshold), ``final_max``,
        ``final_median``, ``initial_min``/``initial_max`` (measured distances), ``energy``
        (the audit).
    trajectories : per kind.
    """
    if network.manifold is None:
        raise ValueError("network: restoration needs a network with a target manifold")
    for k in kinds:
        if k not in PERTURBATIONS or k == "none":
            raise ValueError(f"kinds: {k!r} unknown; choose from {PERTURBATIONS[1:]}")
    gen = torch.Generator().manual_seed(seed)
    m = network.manifold
    metrics, trajs = {}, {}
    for kind in kinds:
        psi = network.geometry.random_phase(count, gen)
        s = random_strengths(count, strength[0], strength[1], gen)
        u0 = perturb(m, psi, kind, s, gen)
        tr = simulate(network, u0, duration, dt, save_every=max(1, int(round(1.0 / dt))))
        d = tr.distance
        metrics[kind] = {
            "fraction_within": float((d[-1] <= threshold).double().mean()),
            "final_max": float(d[-1].max()), "final_median": float(d[-1].median()),
            "initial_min": float(d[0].min()), "initial_max": float(d[0].max()),
            "energy": energy_audit(tr),
        }
        trajs[kind] = tr
    metrics["threshold"] = threshold
    metrics["duration"] = duration
    metrics["count"] = count
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for kind, tr in trajs.items():
            fig = plot_distance(tr, threshold)
            fig.axes[0].set_title(f"restoration after '{kind}' perturbations")
            save_figure(fig, out / f"restoration_{kind}.png")
        save_figure(plot_energy(trajs[kinds[0]]), out / "energy_descent.png")
    return metrics, trajs


def path_integration(network: HopfieldNetwork, velocity: Velocity | str = "ou:0.2:10:0.5",
                     runs: int = 64, duration: float = 200.0, dt: float = 0.1,
                     seed: int = 0, out_dir: str | Path | None = None
                     ) -> tuple[dict, SimulationResult]:
    """Velocity-driven bump motion compared with the integrated input velocity.

    Returns
    -------
    metrics : ``rms_final``, ``max_final`` (rad), ``max_speed`` (max |v| of the input).
    trajectory : the run.
    """
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    tr = _from_manifold(network, runs, duration, dt, seed, velocity=velocity, diagnostics=True)
    err = path_integration_error(tr)
    steps = int(round(duration / dt))
    vmax = max(float(velocity(i * dt).abs().max()) for i in range(0, steps + 1))
    metrics = {"rms_final": err["rms_final"], "max_final": err["max_final"], "max_speed": vmax,
               "runs": runs, "duration": duration, "dt": dt,
               "max_distance": float(tr.distance.max())}
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        save_figure(plot_path_integration(tr), out / "path_integration.png")
    return metrics, tr


def _from_manifold(network: HopfieldNetwork, runs: int, duration: float, dt: float, seed: int,
                   **kwargs) -> SimulationResult:
    """Simulate ``runs`` states started at random points of the manifold (seeded), saving about
    once per tau; ``kwargs`` go to :func:`~neurodyn.simulate.simulate`."""
    gen = torch.Generator().manual_seed(seed)
    u0 = network.manifold.u_star(network.geometry.random_phase(runs, gen))
    return simulate(network, u0, duration, dt, seed=seed,
                    save_every=max(1, int(round(1.0 / dt))), **kwargs)


def diffusion(network: HopfieldNetwork, noise: float = 0.05, runs: int = 128,
              duration: float = 200.0, dt: float = 0.05, seed: int = 0,
              lags: tuple[float, ...] | None = None) -> tuple[dict, SimulationResult]:
    """Bump diffusion under additive noise on ``u``, against the one-neuron-noise theory.

    ``D`` is fitted to the mean squared increments of the decoded phase at several lags, with a
    95% bootstrap interval over runs (:func:`neurodyn.drift.diffusion_estimate`); the theory is
    :func:`neurodyn.drift.diffusion_tensor_theory` (per axis).

    Returns
    -------
    metrics : ``D`` (measured, per axis), ``D_low``/``D_high`` (95% interval), ``D_theory``,
        ``ratio``, ``contains_theory``, ``lags``, ``msd``.
    """
    from .drift import diffusion_estimate, diffusion_tensor_theory

    tr = _from_manifold(network, runs, duration, dt, seed, noise=noise, diagnostics=False)
    if lags is None:
        lags = tuple(duration / 2 ** k for k in (6, 5, 4, 3))
    est = diffusion_estimate(tr.decoded, tr.t, lags=lags, seed=seed)
    theory = float(diffusion_tensor_theory(network, noise).trace() / network.geometry.dim)
    return {"D": est.D, "D_low": est.low, "D_high": est.high, "D_theory": theory,
            "ratio": est.D / theory, "contains_theory": est.contains(theory),
            "lags": list(est.lags), "msd": list(est.msd), "noise": noise,
            "runs": runs, "duration": duration}, tr
