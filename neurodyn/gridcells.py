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

import numpy as np
import torch

from .agent import Box, Trajectory
from .cues import cue_profile
from .grid_phases import phase_track_to_positions, phase_velocity, position_to_phase
from .gridcells_checks import _check_network, _check_trajectory, _modules, _positive
from .gridcells_results import GRIDNESS_THRESHOLD, GridCellsResult, ModuleResult, run_metrics
from .inputs import ArrayVelocity
from .network import HopfieldNetwork
from .progress import progress
from .ratemaps import RateMaps, grid_scores, rate_maps
from .simulation import simulate

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
# bytes of saved states (u and r, float64) per simulated segment
_SEGMENT_BYTES = 32e6


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
    noise: float = 0.0,
    keep_rates: bool = False,
    boundary_cue: tuple[float, float] | None = None,
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
    method : fixed-step integrator of :func:`neurodyn.simulation.simulate` (``rk4``, ``midpoint``,
        ``euler``); ``noise > 0`` needs ``euler`` (Euler-Maruyama).
    noise : ``sigma`` of additive noise on ``u`` per square root of network time (seeded by
        ``seed``, a fresh stream per segment).
    keep_rates : keep the panel's rates over time (``ModuleResult.rates``, (steps, cells)).
    boundary_cue : ``(strength, distance)``: while the agent is within ``distance`` m of a wall,
        a landmark input of that strength (:mod:`neurodyn.cues`) pulls each module's bump to
        the phase ``K x`` of the true position (a boundary encounter resets the integrator).

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
    >>> from neurodyn.fitting import FitConfig, fit
    >>> from neurodyn.agent import generate_trajectory
    >>> net = fit(FitConfig(geometry="torus", n=(16, 16), steps=2)).network
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
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or \
            not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise={noise!r}: must be a finite number >= 0")
    if noise > 0 and method != "euler":
        raise ValueError(f"method={method!r}: noise > 0 needs method='euler' (Euler-Maruyama)")

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
    kept = np.empty((steps, batch, int(cells))) if keep_rates else None
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
            cur = None if boundary_cue is None else _boundary_current(
                network, boundary_cue, trajectory, first, last, spacings, orientation,
                dt_sample)
            tr = simulate(network, u, n * dt_sample, dt_net, method=method, velocity=vseg,
                          save_every=substeps, progress_bar=False, diagnostics=False,
                          noise=noise, seed=(seed * 1_000_003 + first) if noise > 0 else None,
                          current=cur)
            nfe += tr.nfe
            u = tr.u[-1]
            r = tr.r.reshape(tr.r.shape[0], batch, g.size)
            dec = tr.decoded.numpy()
            # after the first segment, the first saved state repeats the previous last one
            keep = slice(0 if first == 0 else 1, None)
            idx = slice(first if first == 0 else first + 1, last + 1)
            phases[idx] = dec[keep]
            rn = r[keep].numpy()
            if kept is not None:
                kept[idx] = rn[:, :, flat]
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
            scores=grid_scores(maps), all_maps=acc_all[m].result() if acc_all else None,
            rates=kept[:, m].copy() if kept is not None else None))

    config = {"spacing": spacings[0], "modules": spacings, "orientation_rad": orientation,
              "tau_seconds": tau_seconds, "dt_network_max_tau": dt_max,
              "dt_network_tau": dt_net / network.tau, "substeps": substeps,
              "jacobian_min_eigenvalue": lam, "cells": int(cells),
              "bins": int(bins), "seed": seed, "method": method, "all_cells": all_cells,
              "noise": float(noise),
              "boundary_cue": None if boundary_cue is None else list(boundary_cue),
              "lattice": g.lattice, "sheet": list(g.shape), "box_m": box.size,
              "dt_s": dt_s, "duration_s": float(trajectory.t[-1] - trajectory.t[0]),
              "steps": steps}
    result = GridCellsResult(trajectory, results, cell_idx, g.lattice, float(orientation),
                             connectivity_row(network), wall, config)
    result.metrics = run_metrics(result, nfe, dt_net / network.tau)
    return result


def _boundary_current(network, cue, trajectory, first, last, spacings, orientation, dt_sample):
    """Cue current over samples ``first..last``: on near a wall, at the true positions' phases."""
    strength, distance = (float(x) for x in cue)
    if not (strength >= 0 and distance > 0):
        raise ValueError(f"boundary_cue={cue!r}: needs strength >= 0 and distance > 0 (m)")
    g = network.geometry
    pos = trajectory.position[first:last + 1]
    size = trajectory.box.size
    near = np.minimum(pos, size - pos).min(axis=1) < distance
    phase = np.stack([position_to_phase(pos, s, orientation, g.lattice) for s in spacings],
                     axis=1)  # (n + 1, modules, 2)
    q = cue_profile(network)
    zero = torch.zeros((1,) + g.shape, dtype=torch.float64)

    def current(t: float) -> torch.Tensor:
        i = min(int(math.floor(t / dt_sample + 1e-9)), len(near) - 1)
        if not near[i] or strength == 0:
            return zero
        return strength * g.shift(q, torch.as_tensor(phase[i], dtype=torch.float64))

    return current


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


# results, figures and writing live in modules of their own
from .gridcells_figures import plot_connectivity_sheet, plot_error, plot_modules  # noqa: E402
from .gridcells_io import write_grid_cells  # noqa: E402
