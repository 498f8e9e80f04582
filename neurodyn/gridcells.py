r"""Grid cells: path integration of an agent's motion by a torus attractor, rate maps, gridness.

A grid module of spacing ``s`` and orientation ``theta`` maps the agent's velocity ``v`` (m/s) to
the lattice phase velocity (see :mod:`neurodyn.agent`)

.. math:: \dot\psi = K v, \qquad K = [k_1; k_2],

which drives the torus network's tangent transport. The network time unit is converted to
seconds by ``tau_seconds`` (the network's ``tau`` lasts ``tau_seconds`` seconds), so the input
velocity is ``K v * tau_seconds / tau`` radians per network time unit. The run starts from the
manifold bump at the phase ``psi(x_0) = K x_0`` of the known start position; the network's
estimate of position is recovered by integrating the decoded phase increments from ``x_0``

.. math:: \hat x_n = x_0 + \sum_{m<n} K^{-1}\, \mathrm{wrap}(\hat\psi_{m+1} - \hat\psi_m).

Several modules of different spacing share the same network: they run side by side along the
batch axis, each with its own phase velocity. Each neuron of the sheet is a grid cell; its rate
map bins its rate over the visited positions and its gridness is scored by the autocorrelogram
rotation method (:mod:`neurodyn.ratemaps`).

Between the trajectory's samples the phase velocity is interpolated linearly
(:class:`~neurodyn.inputs.ArrayVelocity`), and the network integrates on its own step, a whole
fraction of the sample interval. Long runs are simulated in consecutive segments that continue
from the last state, so memory stays bounded: only the decoded phases and the binned rates are
kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from . import agent as agent_mod
from .agent import Box, Trajectory, phase_track_to_positions, phase_velocity, position_to_phase
from .geometry import LATTICES, Torus, sheet_corners
from .inputs import ArrayVelocity
from .network import HopfieldNetwork
from .progress import progress
from .ratemaps import (
    GridScores,
    RateMaps,
    autocorrelogram,
    fraction_above,
    grid_scores,
    gridness,
    plot_autocorrelogram,
    plot_rate_maps,
    rate_maps,
)
from .simulate import simulate

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "GridCellsResult",
    "ModuleResult",
    "run_grid_cells",
    "write_grid_cells",
    "connectivity_row",
    "plot_connectivity_sheet",
    "plot_error",
    "plot_modules",
    "DEFAULT_DT_NETWORK",
    "GRIDNESS_THRESHOLD",
    "STABILITY_LIMIT",
    "network_step",
]

#: Largest network step (units of ``tau``) used by default; see :func:`run_grid_cells`.
DEFAULT_DT_NETWORK = 2.0
#: Largest ``|lambda| dt`` on the negative real axis inside each method's stability region.
STABILITY_LIMIT = {"euler": 2.0, "midpoint": 2.0, "rk4": 2.785}
#: Fraction of the stability limit a step may use.
STABILITY_MARGIN = 0.9
#: Classic gridness at or above which a cell counts as a grid cell.
GRIDNESS_THRESHOLD = 0.8
# bytes of saved states (u and r, float64) per simulated segment
_SEGMENT_BYTES = 32e6


# --------------------------------------------------------------------------------------------------
# results


@dataclass
class ModuleResult:
    """Path integration and rate maps of one grid module.

    Attributes
    ----------
    spacing : grid spacing in metres.
    phases : array (steps, 2), decoded torus phases in ``[0, 2 pi)``.
    decoded : array (steps, 2), the network's position estimate in metres.
    error : array (steps,), ``|decoded - position|`` in metres.
    maps : RateMaps of the panel of cells, ``maps.maps`` (cells, bins, bins).
    scores : GridScores of the panel, each (cells,).
    all_maps : RateMaps of every neuron of the sheet (N, bins, bins), or None.
    """

    spacing: float
    phases: np.ndarray
    decoded: np.ndarray
    error: np.ndarray
    maps: RateMaps
    scores: GridScores
    all_maps: RateMaps | None = None

    @property
    def fraction_grid(self) -> float:
        """Fraction of the panel with classic gridness ``>= GRIDNESS_THRESHOLD``."""
        return fraction_above(self.scores.classic, GRIDNESS_THRESHOLD)

    @property
    def measured_spacing(self) -> float:
        """Median spacing of the autocorrelograms' nearest peaks over the panel (m)."""
        s = self.scores.spacing[np.isfinite(self.scores.spacing)]
        return float(np.median(s)) if s.size else math.nan

    @property
    def measured_orientation(self) -> float:
        """Circular mean (period 60 deg) of the panel's peak orientations, radians in
        ``[0, pi/3)``."""
        o = self.scores.orientation[np.isfinite(self.scores.orientation)]
        if not o.size:
            return math.nan
        return float(np.angle(np.exp(6j * o).sum()) / 6.0) % (math.pi / 3.0)


@dataclass
class GridCellsResult:
    """Outcome of :func:`run_grid_cells`.

    Attributes
    ----------
    trajectory : the agent's trajectory (``t`` (steps,) s, ``position`` (steps, 2) m).
    modules : one :class:`ModuleResult` per module; the first is the primary one.
    cells : array (cells, 2), sheet indices ``(i, j)`` of the panel of cells.
    lattice : the network's lattice.
    orientation : grid orientation (angle of ``k1``) in radians.
    connectivity : array (n1, n2), ``-d^2 F / dr_0 dr_j`` at the bump centred on neuron 0.
    wall_time : seconds spent integrating the network.
    config : the parameters of the run (JSON-serialisable).
    metrics : summary numbers (JSON-serialisable); see :func:`run_grid_cells`.
    """

    trajectory: Trajectory
    modules: list[ModuleResult]
    cells: np.ndarray
    lattice: str
    orientation: float
    connectivity: np.ndarray
    wall_time: float
    config: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)

    @property
    def t(self) -> np.ndarray:
        """Sample times (steps,) in seconds."""
        return self.trajectory.t

    @property
    def position(self) -> np.ndarray:
        """True positions (steps, 2) in metres."""
        return self.trajectory.position

    @property
    def decoded(self) -> np.ndarray:
        """Decoded positions (steps, 2) in metres, primary module."""
        return self.modules[0].decoded

    @property
    def error(self) -> np.ndarray:
        """Decoding error (steps,) in metres, primary module."""
        return self.modules[0].error

    @property
    def maps(self) -> RateMaps:
        """Rate maps of the panel, primary module."""
        return self.modules[0].maps

    @property
    def scores(self) -> GridScores:
        """Grid scores of the panel, primary module."""
        return self.modules[0].scores


# --------------------------------------------------------------------------------------------------
# validation


def _positive(name: str, value, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r}: must be a finite number > 0")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}={value!r}: must be a finite number > 0")
    return value


def _check_network(network: HopfieldNetwork, lattice: str | None) -> Torus:
    if not isinstance(network, HopfieldNetwork):
        raise ValueError(f"network: expected a HopfieldNetwork, got {type(network).__name__}")
    g = network.geometry
    if not isinstance(g, Torus):
        raise ValueError(f"network: grid cells need a torus model, got {g!r}; "
                         "fit one with `neurodyn fit torus`")
    if lattice is not None:
        if lattice not in LATTICES:
            raise ValueError(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}")
        if lattice != g.lattice:
            raise ValueError(f"lattice={lattice!r}: the model's torus has lattice "
                             f"{g.lattice!r}; use a {lattice} model or lattice={g.lattice!r}")
    if network.transport is None:
        raise ValueError("network: has no velocity transport; fit one (fit does)")
    if network.manifold is None:
        raise ValueError("network: has no target manifold to start the bump from")
    return g


def _check_trajectory(trajectory: Trajectory) -> None:
    if not isinstance(trajectory, Trajectory):
        raise ValueError(f"trajectory: expected a neurodyn.agent.Trajectory, got "
                         f"{type(trajectory).__name__}; see generate_trajectory/load_positions")
    pos, t = np.asarray(trajectory.position), np.asarray(trajectory.t)
    if pos.ndim != 2 or pos.shape[1] != 2 or pos.shape[0] < 2:
        raise ValueError(f"trajectory.position: shape {pos.shape}; expected (steps, 2) with "
                         "steps >= 2")
    if t.shape != (pos.shape[0],):
        raise ValueError(f"trajectory.t: shape {t.shape}; expected ({pos.shape[0]},) like the "
                         "positions")
    vel = np.asarray(trajectory.velocity)
    if vel.shape != pos.shape:
        raise ValueError(f"trajectory.velocity: shape {vel.shape}; expected {pos.shape}")
    for name, arr in (("position", pos), ("t", t), ("velocity", vel)):
        if not np.all(np.isfinite(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr).reshape(arr.shape[0], -1).all(-1))[0])
            raise ValueError(f"trajectory.{name}: non-finite value at sample {i}")
    step = np.diff(t)
    if np.any(step <= 0):
        i = int(np.flatnonzero(step <= 0)[0])
        raise ValueError(f"trajectory.t: must be strictly increasing; t[{i}]={t[i]} then "
                         f"t[{i + 1}]={t[i + 1]}")
    if np.max(np.abs(step - trajectory.dt)) > 1e-6 * trajectory.dt:
        raise ValueError(f"trajectory.t: samples must be uniformly spaced by dt="
                         f"{trajectory.dt} s; got spacings {step.min()} to {step.max()} s")
    outside = ~trajectory.box.contains(pos)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"trajectory.position: {pos[i].tolist()} at sample {i} lies outside "
                         f"the box [0, {trajectory.box.size}] x [0, {trajectory.box.size}] m")


def _modules(spacing: float, modules) -> list[float]:
    if modules is None:
        return [_positive("spacing", spacing)]
    mods = list(modules) if not isinstance(modules, (int, float)) else [modules]
    if not mods:
        raise ValueError("modules=[]: give at least one spacing (metres), or None")
    return [_positive(f"modules[{i}]", s) for i, s in enumerate(mods)]


# --------------------------------------------------------------------------------------------------
# the run


def connectivity_row(network: HopfieldNetwork, neuron: tuple[int, int] = (0, 0)) -> np.ndarray:
    """Effective connectivity onto one neuron at the bump centred on that neuron.

    .. math:: W_{\\mathrm{eff}}[n, j] = -\\frac{\\partial^2 F}{\\partial r_n \\partial r_j}
              \\Big|_{r = r^*(\\psi_n)}

    Parameters
    ----------
    network : a torus network with a target manifold.
    neuron : sheet index ``n = (i, j)``.

    Returns
    -------
    array (n1, n2): the weights from every neuron of the sheet.
    """
    g = _check_network(network, None)
    i, j = (int(x) for x in neuron)
    if not (0 <= i < g.shape[0] and 0 <= j < g.shape[1]):
        raise ValueError(f"neuron={neuron!r}: must index the {g.shape[0]} x {g.shape[1]} sheet")
    psi = torch.tensor([2 * math.pi * i / g.shape[0], 2 * math.pi * j / g.shape[1]],
                       dtype=torch.float64)
    r = network.rates(network.manifold.u_star(psi))
    e = torch.zeros(g.shape, dtype=torch.float64)
    e[i, j] = 1.0
    with torch.no_grad():
        row = -network.energy_fn.hvp(r, e)
    return row.detach().numpy()


def network_step(network: HopfieldNetwork, sample_interval: float, dt_max: float,
                 method: str = "rk4") -> tuple[float, int, float]:
    """The network step: the largest whole fraction of the sample interval that is stable.

    ``dt_net = dt' / q`` with ``q`` the smallest integer such that ``dt' / q <= dt_max tau`` and
    ``|lambda_min| dt' / q <= 0.9 L_method``,

    with ``lambda_min`` the most negative eigenvalue of the Jacobian at the manifold
    (:func:`neurodyn.diagnostics.jacobian_spectrum`) and ``L`` the method's real-axis stability
    limit (:data:`STABILITY_LIMIT`: 2.785 for rk4, 2 for euler and midpoint).

    Parameters
    ----------
    network : a network with a target manifold.
    sample_interval : ``Delta t'``, the trajectory's sample interval in network time units.
    dt_max : largest step in units of ``tau``.
    method : ``rk4``, ``midpoint`` or ``euler``.

    Returns
    -------
    dt_net, substeps, lambda_min : the step (network time units), ``q``, and ``lambda_min``.
    """
    from .diagnostics import jacobian_spectrum

    lam = float(jacobian_spectrum(network).min())
    bound = dt_max * network.tau
    if lam < 0:
        bound = min(bound, STABILITY_MARGIN * STABILITY_LIMIT[method] / -lam)
    substeps = max(1, math.ceil(sample_interval / bound - 1e-9))
    return sample_interval / substeps, substeps, lam


def run_grid_cells(
    network: HopfieldNetwork,
    trajectory: Trajectory,
    spacing: float = 0.5,
    orientation: float = 0.0,
    modules: list[float] | None = None,
    tau_seconds: float = 0.01,
    dt_network: float | None = None,
    cells: int = 64,
    bins: int = 20,
    seed: int = 0,
    progress_bar: bool | None = None,
    *,
    all_cells: bool = False,
    lattice: str | None = None,
    method: str = "rk4",
) -> GridCellsResult:
    """Path integration of an agent's trajectory by a torus network; rate maps and gridness.

    For module ``m`` of spacing ``s_m`` the input velocity (radians per network time unit) is

    .. math:: v_m(t_n) = K(s_m, \\theta)\\, \\frac{x_{n+1} - x_n}{\\Delta t}
              \\cdot \\frac{\\tau_s}{\\tau}

    interpolated linearly between samples (its integral differs from the true displacement by
    at most ``|v_N - v_0| dt / 2`` over the whole run). The network starts at the bump
    ``u*(K x_0 mod 2 pi)`` and integrates ``tau du/dt = -u - grad F(r) + b + sum_a v_a T_a(r)``
    with ``method`` on the largest step ``dt_net`` that divides ``Delta t' = Delta t tau / tau_s``
    (the sample interval in network time units), is at most ``dt_network`` and is stable for the
    network's fastest decaying mode (:func:`network_step`). Decoded
    positions integrate the wrapped decoded phase increments from ``x_0``
    (:func:`neurodyn.agent.phase_track_to_positions`). Rate maps bin each panel cell's rate over
    the positions (``bins x bins``, no smoothing) and are scored by
    :func:`neurodyn.ratemaps.grid_scores`.

    Parameters
    ----------
    network : a fitted torus network with transport and target manifold.
    trajectory : the agent's trajectory, ``position`` (steps, 2) m sampled every ``dt`` s.
    spacing : grid spacing in metres (used when ``modules`` is None).
    orientation : angle of the wave vector ``k1`` in radians.
    modules : spacings (m) of several modules run side by side; the first is the primary one.
    tau_seconds : the duration of the network's ``tau`` in seconds (10 ms for grid cells).
    dt_network : largest network step in units of ``tau`` (default :data:`DEFAULT_DT_NETWORK`,
        2 tau: on the 32 x 32 hex sheet its decoded positions differ from those of a 0.25 tau
        run by ~1e-5 m, and the 10-minute run takes about a minute; see
        ``bench/bench_gridcells.py --study``). A stiffer network gets a smaller step.
    cells : size of the random panel of cells (sheet neurons, drawn without replacement).
    bins : rate-map bins per side.
    seed : seeds the choice of the panel.
    progress_bar : show a progress bar over the run (default: only on a terminal).
    all_cells : also bin every neuron of the sheet (``ModuleResult.all_maps``).
    lattice : expected lattice of the model (``'hex'`` or ``'square'``); a mismatch raises.
    method : fixed-step integrator of :func:`neurodyn.simulate.simulate` (``rk4``, ``midpoint``,
        ``euler``).

    Returns
    -------
    GridCellsResult
        With ``metrics``: ``final_error_m``, ``final_error_fraction`` (of the spacing),
        ``mean_error_m``, ``max_error_m``, ``fraction_grid`` (classic >= 0.8),
        ``gridness_median``, ``score_90_median``, ``measured_spacing_m``,
        ``measured_orientation_deg`` for the primary module, the same per module under
        ``modules``, and ``wall_time_s``, ``duration_s``, ``dt_network_tau``, ``nfe``.

    Raises
    ------
    ValueError
        A non-torus model or a lattice mismatch, a malformed trajectory (shape, non-monotone
        or non-uniform times, positions outside the box), non-positive parameters, a panel
        larger than the sheet, or samples so far apart that a phase increment reaches pi.

    Examples
    --------
    >>> from neurodyn.fit import FitConfig, fit
    >>> from neurodyn.agent import generate_trajectory
    >>> net = fit(FitConfig(geometry="torus", n=(16, 16), steps=20)).network
    >>> res = run_grid_cells(net, generate_trajectory(2.0, seed=0), cells=4)
    >>> res.decoded.shape, res.maps.maps.shape
    ((100, 2), (4, 20, 20))
    """
    g = _check_network(network, lattice)
    _check_trajectory(trajectory)
    spacings = _modules(spacing, modules)
    if isinstance(orientation, bool) or not isinstance(orientation, (int, float)) or not \
            math.isfinite(orientation):
        raise ValueError(f"orientation={orientation!r}: must be a finite angle in radians")
    tau_seconds = _positive("tau_seconds", tau_seconds)
    dt_max = _positive("dt_network", DEFAULT_DT_NETWORK if dt_network is None else dt_network)
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or \
            not 1 <= cells <= g.size:
        raise ValueError(f"cells={cells!r}: must be an integer in [1, {g.size}] "
                         f"(the {g.shape[0]} x {g.shape[1]} sheet)")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins={bins!r}: must be an integer >= 2")
    if method not in ("euler", "midpoint", "rk4"):
        raise ValueError(f"method={method!r}: choose a fixed-step method, one of "
                         "('euler', 'midpoint', 'rk4')")

    steps = trajectory.steps
    dt_s = float(trajectory.dt)
    unit = tau_seconds / network.tau  # seconds per network time unit
    dt_sample = dt_s / unit  # sample interval in network time units
    dt_net, substeps, lam = network_step(network, dt_sample, dt_max, method)

    # phase velocities (steps, M, 2) in rad per network time unit, and the unwrap condition
    vel = np.stack([phase_velocity(trajectory.velocity, s, orientation, g.lattice)
                    for s in spacings], axis=1)
    jump = float(np.abs(vel).max()) * dt_s
    if jump >= math.pi:
        raise ValueError(f"trajectory.dt={dt_s} s: a phase moves by {jump:.3g} rad between "
                         "samples (>= pi), so decoded phases cannot be unwrapped; sample the "
                         "positions more often")
    vel_net = torch.as_tensor(_midpoint_samples(vel * unit), dtype=torch.float64)
    batch = len(spacings)

    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(g.size, size=int(cells), replace=False))
    cell_idx = np.stack(np.unravel_index(flat, g.shape), axis=1)

    psi0 = np.stack([np.mod(position_to_phase(trajectory.position[0], s, orientation,
                                              g.lattice), 2 * math.pi) for s in spacings])
    with torch.no_grad():
        u = network.manifold.u_star(torch.as_tensor(psi0, dtype=torch.float64))

    box = trajectory.box
    acc = [_MapAccumulator(box, bins) for _ in spacings]
    acc_all = [_MapAccumulator(box, bins) for _ in spacings] if all_cells else None
    phases = np.empty((steps, batch, 2))
    seg = max(1, int(_SEGMENT_BYTES // (16 * batch * g.size)))  # samples per segment
    nfe = 0
    bar = progress(total=steps - 1, desc="grid cells", enabled=progress_bar)
    start = time.perf_counter()
    first = 0
    try:
        while first < steps - 1:
            last = min(first + seg, steps - 1)
            n = last - first
            vseg = ArrayVelocity(vel_net[2 * first:2 * last + 1], dt_sample / 2)
            tr = simulate(network, u, n * dt_sample, dt_net, method=method, velocity=vseg,
                          save_every=substeps, progress_bar=False, diagnostics=False)
            nfe += tr.nfe
            u = tr.u[-1]
            r = tr.r.reshape(tr.r.shape[0], batch, g.size)
            dec = tr.decoded.numpy()
            # after the first segment, the first saved state repeats the previous last one
            keep = slice(0 if first == 0 else 1, None)
            idx = slice(first if first == 0 else first + 1, last + 1)
            phases[idx] = dec[keep]
            rn = r[keep].numpy()
            pos = trajectory.position[idx]
            for m in range(batch):
                acc[m].add(pos, rn[:, m, flat])
                if acc_all is not None:
                    acc_all[m].add(pos, rn[:, m])
            bar.update(n)
            first = last
    finally:
        bar.close()
    wall = time.perf_counter() - start

    results = []
    for m, s in enumerate(spacings):
        decoded = phase_track_to_positions(phases[:, m], trajectory.position[0], s, orientation,
                                           g.lattice)
        err = np.linalg.norm(decoded - trajectory.position, axis=-1)
        maps = acc[m].result()
        results.append(ModuleResult(
            spacing=s, phases=phases[:, m].copy(), decoded=decoded, error=err, maps=maps,
            scores=grid_scores(maps), all_maps=acc_all[m].result() if acc_all else None))

    config = {"spacing": spacings[0], "modules": spacings, "orientation_rad": orientation,
              "tau_seconds": tau_seconds, "dt_network_max_tau": dt_max,
              "dt_network_tau": dt_net / network.tau, "substeps": substeps,
              "jacobian_min_eigenvalue": lam, "cells": int(cells),
              "bins": int(bins), "seed": seed, "method": method, "all_cells": all_cells,
              "lattice": g.lattice, "sheet": list(g.shape), "box_m": box.size,
              "dt_s": dt_s, "duration_s": float(trajectory.t[-1] - trajectory.t[0]),
              "steps": steps}
    result = GridCellsResult(trajectory, results, cell_idx, g.lattice, float(orientation),
                             connectivity_row(network), wall, config)
    result.metrics = _metrics(result, nfe, dt_net / network.tau)
    return result


def _midpoint_samples(vel: np.ndarray) -> np.ndarray:
    """Velocity samples on the half-interval grid for linear interpolation.

    ``vel[i] = (x_{i+1} - x_i) / dt`` is the mean velocity over ``[t_i, t_{i+1}]``, so it is
    placed at the midpoint ``t_i + dt/2``; at the sample times the neighbours are averaged:

    ``w_{2i+1} = v_i``, ``w_{2i} = (v_{i-1} + v_i) / 2`` (``w_0 = v_0``).

    The linear interpolant of ``w`` then integrates to the true displacement up to
    ``dt^2 |dv/dt| / 8``, an error that does not accumulate; the interpolant of ``v`` placed at
    ``t_i`` would be off by ``(v_n - v_0) dt / 2`` at ``t_n``.

    Parameters
    ----------
    vel : array (steps, ...), velocities of the intervals starting at each sample.

    Returns
    -------
    array (2 steps - 1, ...), samples every ``dt / 2`` from ``t_0`` to ``t_{steps-1}``.
    """
    n = vel.shape[0]
    out = np.empty((2 * n - 1,) + vel.shape[1:])
    out[1::2] = vel[:-1]
    out[0] = vel[0]
    out[2::2] = 0.5 * (vel[:-1] + vel[1:])
    return out


class _MapAccumulator:
    """Rate maps built segment by segment: rate sums and occupancy add up."""

    def __init__(self, box: Box, bins: int):
        self.box, self.bins = box, bins
        self.sums = None
        self.occ = None
        self.edges = None

    def add(self, positions: np.ndarray, rates: np.ndarray) -> None:
        rm = rate_maps(positions, rates, self.box, self.bins)
        sums = np.where(np.isfinite(rm.maps), rm.maps, 0.0) * rm.occupancy
        if self.sums is None:
            self.sums, self.occ, self.edges = sums, rm.occupancy.copy(), rm
        else:
            self.sums += sums
            self.occ += rm.occupancy

    def result(self) -> RateMaps:
        maps = np.full_like(self.sums, np.nan)
        np.divide(self.sums, self.occ, out=maps, where=self.occ > 0)
        return RateMaps(maps=maps, x_edges=self.edges.x_edges, y_edges=self.edges.y_edges,
                        occupancy=self.occ)


def _module_metrics(mod: ModuleResult) -> dict:
    s = mod.scores
    fin = np.isfinite(s.classic)
    return {
        "spacing_m": mod.spacing,
        "final_error_m": float(mod.error[-1]),
        "final_error_fraction": float(mod.error[-1] / mod.spacing),
        "mean_error_m": float(mod.error.mean()),
        "max_error_m": float(mod.error.max()),
        "fraction_grid": mod.fraction_grid,
        "gridness_median": float(np.median(s.classic[fin])) if fin.any() else math.nan,
        "gridness_mean_form_median": float(np.nanmedian(s.mean)) if fin.any() else math.nan,
        "score_90_median": float(np.nanmedian(s.score_90)) if fin.any() else math.nan,
        "measured_spacing_m": mod.measured_spacing,
        "measured_orientation_deg": math.degrees(mod.measured_orientation),
    }


def _metrics(result: GridCellsResult, nfe: int, dt_net: float) -> dict:
    per = [_module_metrics(m) for m in result.modules]
    duration = result.config["duration_s"]
    out = dict(per[0])
    out.update({
        "lattice": result.lattice,
        "gridness_threshold": GRIDNESS_THRESHOLD,
        "duration_s": duration,
        "wall_time_s": result.wall_time,
        "realtime_factor": duration / result.wall_time if result.wall_time > 0 else math.nan,
        "dt_network_tau": dt_net,
        "nfe": nfe,
        "cells": int(result.cells.shape[0]),
        "n_modules": len(per),
        "modules": per,
    })
    return out


# --------------------------------------------------------------------------------------------------
# figures


def plot_connectivity_sheet(row: np.ndarray, lattice: str, ax: Axes | None = None) -> Figure:
    """Draw a connectivity row on the sheet's own geometry.

    Neuron ``(i, j)`` at offset ``(a, b)`` from the centre neuron sits at ``a e1 + b e2`` with
    ``e1 = (1, 0)`` and ``e2 = (1/2, sqrt(3)/2)`` (hex) or ``(0, 1)`` (square), in units of the
    neuron spacing; offsets are wrapped so the centre neuron is in the middle.

    Parameters
    ----------
    row : array (n1, n2), weights from every neuron onto neuron ``(0, 0)``.
    lattice : ``'hex'`` or ``'square'``.
    ax : axes to draw into (a new figure otherwise).

    Returns
    -------
    Figure, with a diverging colour scale centred at 0.
    """
    from matplotlib.figure import Figure

    row = np.asarray(row, dtype=float)
    if row.ndim != 2:
        raise ValueError(f"row: shape {row.shape}; expected (n1, n2)")
    if lattice not in LATTICES:
        raise ValueError(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}")
    if ax is None:
        fig = Figure(figsize=(5.6, 4.2), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    centred = np.roll(row, (row.shape[0] // 2, row.shape[1] // 2), axis=(0, 1))
    x, y = sheet_corners(row.shape, lattice, centred=True)
    lim = float(np.abs(row).max()) or 1.0
    mesh = ax.pcolormesh(x, y, centred, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="flat")
    fig.colorbar(mesh, ax=ax, label=r"$W_\mathrm{eff} = -\partial^2 F/\partial r_0 \partial r_j$")
    ax.set_aspect("equal")
    ax.set_xlabel("sheet x (neuron spacings)")
    ax.set_ylabel("sheet y (neuron spacings)")
    ax.set_title(f"learned connectivity onto the centre neuron ({lattice} sheet)",
                 fontsize="small")
    return fig


def plot_error(result: GridCellsResult, ax: Axes | None = None) -> Figure:
    """Decoding error ``|x_hat(t) - x(t)|`` (m) over time (s) for every module.

    Parameters
    ----------
    result : a :class:`GridCellsResult`.
    ax : axes to draw into (a new figure otherwise).

    Returns
    -------
    Figure
    """
    from matplotlib.figure import Figure

    if ax is None:
        fig = Figure(figsize=(6.0, 3.4), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    for k, mod in enumerate(result.modules):
        color = f"C{k}"
        ax.plot(result.t, mod.error, color=color, linewidth=0.8,
                label=f"spacing {mod.spacing:g} m")
        ax.axhline(0.05 * mod.spacing, color=color, linestyle=":", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("decoded position error (m)")
    ax.set_title("path integration error (dotted: 5% of the spacing)", fontsize="small")
    ax.legend(fontsize="small")
    return fig


def plot_modules(result: GridCellsResult, cell: int = 0, fig: Figure | None = None) -> Figure:
    """Compare modules: one cell's rate map and autocorrelogram per module.

    Parameters
    ----------
    result : a :class:`GridCellsResult`.
    cell : index into the panel.
    fig : figure to draw into (cleared; a new one otherwise).

    Returns
    -------
    Figure
    """
    from matplotlib.figure import Figure

    mods = result.modules
    if not 0 <= cell < result.cells.shape[0]:
        raise ValueError(f"cell={cell}: must be in [0, {result.cells.shape[0] - 1}]")
    if fig is None:
        fig = Figure(figsize=(4.2 * len(mods), 7.0), layout="constrained")
    else:
        fig.clear()
    axes = fig.subplots(2, len(mods), squeeze=False)
    for k, mod in enumerate(mods):
        m = mod.maps
        ext = (m.x_edges[0], m.x_edges[-1], m.y_edges[0], m.y_edges[-1])
        im = axes[0, k].imshow(m.maps[cell], origin="lower", extent=ext, cmap="viridis",
                               interpolation="nearest")
        fig.colorbar(im, ax=axes[0, k], label="rate", shrink=0.8)
        axes[0, k].set_title(f"module {mod.spacing:g} m, cell {cell}\n"
                             f"{100 * mod.fraction_grid:.0f}% grid cells, final error "
                             f"{1000 * mod.error[-1]:.2f} mm", fontsize="small")
        axes[0, k].set_xlabel("x (m)")
        axes[0, k].set_ylabel("y (m)")
        ac = autocorrelogram(m.maps[cell])
        plot_autocorrelogram(ac, m.bin_size, gridness(autocorr=ac, bin_size=m.bin_size),
                             ax=axes[1, k])
    return fig


def write_grid_cells(result: GridCellsResult, out_dir: str | Path,
                     extra_config: dict | None = None) -> dict:
    """Write the arrays, figures, config and metrics of a grid-cell run.

    Files in ``out_dir``:

    - ``track.npz``: ``t`` (steps,) s; ``position``, ``decoded`` (steps, 2) m (primary module);
      also ``error`` (steps,) m, ``phases`` (modules, steps, 2) rad, ``decoded_modules``
      (modules, steps, 2) m, ``spacing`` (modules,) m.
    - ``ratemaps.npz``: ``maps`` (cells, bins, bins) (primary module, NaN where unvisited),
      ``x_edges``, ``y_edges`` (bins + 1,) m, ``occupancy`` (bins, bins) samples, ``cells``
      (cells, 2) sheet indices, ``module_maps`` (modules, cells, bins, bins), the scores
      ``classic``, ``mean``, ``score_90``, ``spacing`` (m), ``orientation`` (rad), each
      (modules, cells); ``all_maps`` (modules, N, bins, bins) when every cell was binned.
    - ``metrics.json``, ``config.json``.
    - figures: ``ratemaps.png``, ``autocorrelograms.png``, ``trajectory.png``, ``error.png``,
      ``connectivity.png`` and, with several modules, ``modules.png``.

    Parameters
    ----------
    result : a :class:`GridCellsResult`.
    out_dir : output directory (created).
    extra_config : merged into ``config.json`` (e.g. the command line).

    Returns
    -------
    dict : the metrics.
    """
    from .io import write_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mods = result.modules
    np.savez_compressed(
        out / "track.npz", t=result.t, position=result.position, decoded=result.decoded,
        error=result.error, phases=np.stack([m.phases for m in mods]),
        decoded_modules=np.stack([m.decoded for m in mods]),
        spacing=np.array([m.spacing for m in mods]))
    arrays = {
        "maps": result.maps.maps, "x_edges": result.maps.x_edges,
        "y_edges": result.maps.y_edges, "occupancy": result.maps.occupancy,
        "cells": result.cells, "module_maps": np.stack([m.maps.maps for m in mods]),
    }
    for key in ("classic", "mean", "score_90", "spacing", "orientation"):
        arrays[key] = np.stack([getattr(m.scores, key) for m in mods])
    if mods[0].all_maps is not None:
        arrays["all_maps"] = np.stack([m.all_maps.maps for m in mods])
    np.savez_compressed(out / "ratemaps.npz", **arrays)
    write_json({**result.config, **(extra_config or {})}, out / "config.json")
    write_json(result.metrics, out / "metrics.json")

    for name, fig in _figures(result):
        fig.savefig(out / name, dpi=110)
    return result.metrics


def _figures(result: GridCellsResult):
    from matplotlib.figure import Figure

    maps = result.maps
    fig = plot_rate_maps(maps, cells=np.arange(min(32, maps.maps.shape[0])))
    fig.suptitle(f"rate maps (spacing {result.modules[0].spacing:g} m, {result.lattice})")
    yield "ratemaps.png", fig

    shown = min(4, maps.maps.shape[0])
    fig = Figure(figsize=(3.6 * shown, 3.2), layout="constrained")
    axes = fig.subplots(1, shown, squeeze=False)[0]
    for k in range(shown):
        ac = autocorrelogram(maps.maps[k])
        plot_autocorrelogram(ac, maps.bin_size, gridness(autocorr=ac, bin_size=maps.bin_size),
                             ax=axes[k])
    yield "autocorrelograms.png", fig

    fig = agent_mod.plot_trajectory(result.trajectory, result.decoded)
    fig.axes[0].set_title(f"true vs decoded position (final error "
                          f"{1000 * result.error[-1]:.2f} mm)",
                          fontsize="small")
    yield "trajectory.png", fig
    yield "error.png", plot_error(result)
    yield "connectivity.png", plot_connectivity_sheet(result.connectivity, result.lattice)
    if len(result.modules) > 1:
        yield "modules.png", plot_modules(result)
