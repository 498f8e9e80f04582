r"""Grid cells: path integration of an agent's motion by a torus attractor, rate maps, gridness.

A grid module of spacing ``s`` and orientation ``theta`` maps the agent's velocity ``v`` (m/s) to
the lattice phase velocity (see :mod:`neurodyn.spatial.agent`)

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
rotation method (:mod:`neurodyn.spatial.ratemaps`).

Between the trajectory's samples the phase velocity is interpolated linearly
(:class:`~neurodyn.dynamics.inputs.ArrayVelocity`), and the network integrates on its own step, a
whole fraction of the sample interval. Long runs are simulated in consecutive segments that continue
from the last state, so memory stays bounded: only the decoded phases and the binned rates are
kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch

from _runkit import BadInput, check_positive
from _runkit import progress as progress_bar
from _runkit.errors import BadType
from _runkit.runtime import check_interrupt, with_threads

from ...analysis.connectivity import fit_circulant
from ...dynamics.device import check_device
from ...dynamics.inputs import ArrayVelocity
from ...dynamics.simulation import simulate
from ...network import HopfieldNetwork
from ..agent import Trajectory
from ..gridnull import SMOOTHING_BINS, shuffled_gridness
from ..gridscores import grid_scores
from ..phases import phase_track_to_positions, phase_velocity, position_to_phase
from ..ratemaps import RateMaps
from .checkpoint import load_run_state, run_identity, save_run_state
from .checks import _check_network, _check_trajectory, _modules
from .joint import joint_decode
from .network import (
    DEFAULT_DT_NETWORK,
    STABILITY_LIMIT,
    STABILITY_MARGIN,
    connectivity_row,
    network_step,
)
from .recorded import check_arena
from .results import GRIDNESS_THRESHOLD, GridCellsResult, ModuleResult, null_shift, run_metrics
from .segments import (
    _MapAccumulator,
    _midpoint_samples,
    _NullAccumulator,
    check_cues,
    cue_current,
    cue_gain,
)

__all__ = [
    "GridCellsConfig",
    "GridCellsResult",
    "ModuleResult",
    "run_grid_cells",
    "prepare_grid_cells",
    "run_grid_cells_prepared",
    "GridCellsPlan",
    "connectivity_row",
    "DEFAULT_DT_NETWORK",
    "GRIDNESS_THRESHOLD",
    "STABILITY_LIMIT",
    "STABILITY_MARGIN",
    "network_step",
]

# bytes of saved states (u and r, float64) per simulated segment
_SEGMENT_BYTES = 32e6
# bytes of the panel's rates over the run beyond which the shuffled null is built segment by
# segment (segments._NullAccumulator) instead of from the kept rates
_KEEP_BYTES = 64e6


# --------------------------------------------------------------------------------------------------
# the run


@dataclass(frozen=True)
class GridCellsConfig:
    """The options of a grid-cell run; :func:`run_grid_cells` describes each (it checks them:
    a config holds them as given)."""

    spacing: float = 0.5
    orientation: float = 0.0
    modules: list[float] | None = None
    tau_seconds: float = 0.01
    dt_network: float | None = None
    cells: int = 64
    bins: int = 20
    seed: int = 0
    all_cells: bool = False
    lattice: str | None = None
    method: str = "rk4"
    noise: float | list[float] = 0.0
    keep_rates: bool = False
    boundary_cue: tuple[float, float] | None = None
    landmark_cue: tuple[float, float, float, float] | None = None
    shuffles: int = 20
    min_shift: float | None = None
    arena: tuple[float, float] | None = None

    @classmethod
    def of(cls, config: GridCellsConfig | None, options: dict) -> GridCellsConfig:
        """``config`` (None: the defaults) with ``options`` replacing its fields by name;
        ``TypeError`` naming an option that is no field, as for any unexpected keyword."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise BadType(f"unexpected keyword argument {unknown[0]!r}: not an option of a "
                          f"grid-cell run; choose among {sorted(names)}")
        return replace(config or cls(), **options)


@with_threads
def run_grid_cells(
    network: HopfieldNetwork,
    trajectory: Trajectory,
    config: GridCellsConfig | None = None,
    progress: bool | None = None,
    *,
    device: str = "cpu",
    checkpoint: str | Path | None = None,
    checkpoint_every: float = 300.0,
    **options,
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
    (:func:`neurodyn.spatial.agent.phase_track_to_positions`). Rate maps bin each panel cell's rate
    over the positions (``bins x bins``, no smoothing) and are scored by
    :func:`neurodyn.spatial.ratemaps.grid_scores`. A cell is classified as a grid cell against the
    shuffled null of :func:`neurodyn.spatial.gridnull.shuffled_gridness` (its smoothed map's classic
    gridness above the 95th percentile of ``shuffles`` time-shifted maps per cell, pooled);
    ``shuffles=0`` uses the fixed threshold :data:`GRIDNESS_THRESHOLD` on the unsmoothed maps.

    Parameters
    ----------
    network : HopfieldNetwork
        A fitted torus network with transport and target manifold.
    trajectory : Trajectory
        The agent's trajectory, ``position`` (steps, 2) m sampled every ``dt`` s.
    config : GridCellsConfig or None
        The run's options (None: the defaults), each described below; ``**options`` given by
        name replace the config's (``run_grid_cells(net, traj, cells=16)``).
    progress : bool or None
        Show a progress bar over the run (default: only on a terminal).
    device : str
        ``cpu`` or ``cuda``: where the network is simulated (the maps, phases and scores are
        computed on the CPU).
    checkpoint : str or Path or None
        A file where the run saves its state between segments, every ``checkpoint_every``
        simulated seconds and on Ctrl-C; an existing one written by the same run (arguments,
        trajectory and network) is resumed, ending bit-identical to an uninterrupted run
        (:mod:`neurodyn.spatial.gridcells.checkpoint`); one of another run is refused.
    checkpoint_every : float
        Simulated seconds between checkpoints (> 0).
    spacing : float
        Grid spacing in metres (used when ``modules`` is None).
    orientation : float
        Angle of the wave vector ``k1`` in radians.
    modules : list of float or None
        Spacings (m) of several modules run side by side; the first is the primary one.
    tau_seconds : float
        The duration of the network's ``tau`` in seconds (10 ms for grid cells).
    dt_network : float or None
        Largest network step in units of ``tau`` (default :data:`DEFAULT_DT_NETWORK`, 2 tau: on the
        32 x 32 hex sheet its decoded positions differ from those of a 0.25 tau run by ~1e-5 m, and
        the 10-minute run takes about a minute; see ``bench/bench_gridcells.py --study``). A stiffer
        network gets a smaller step.
    cells : int
        Size of the random panel of cells (sheet neurons, drawn without replacement).
    bins : int
        Rate-map bins per side.
    seed : int
        Seeds the choice of the panel.
    all_cells : bool
        Also bin every neuron of the sheet (``ModuleResult.all_maps``).
    lattice : str or None
        Expected lattice of the model (``'hex'`` or ``'square'``); a mismatch raises.
    method : str
        Fixed-step integrator of :func:`neurodyn.dynamics.simulation.simulate` (``rk4``,
        ``midpoint``, ``euler``); ``noise > 0`` needs ``euler`` (Euler-Maruyama).
    noise : float or list of float
        ``sigma`` of additive noise on ``u`` per square root of network time (seeded by ``seed``, a
        fresh stream per piece of a segment), or one ``sigma`` per module (the modules are then
        simulated one by one; :func:`~neurodyn.spatial.gridcells.calibration.noise_for_diffusion`
        gives those of a stated diffusion).
    keep_rates : bool
        Keep the panel's rates over time (``ModuleResult.rates``, (steps, cells)).
    boundary_cue : tuple of float or None
        ``(strength, distance)``: while the agent is within ``distance`` m of a wall of the
        arena, a landmark
        input of that strength (:mod:`neurodyn.spatial.cues`) pulls each module's bump to the phase
        ``K x`` of the true position (a boundary encounter resets the integrator).
    landmark_cue : tuple of float or None
        ``(strength, x, y, radius)``: the same input while the agent is within ``radius`` m of a
        landmark at ``(x, y)`` m (:mod:`neurodyn.spatial.gridcells.segments`).
    shuffles : int
        Time-shifted maps per cell of the grid-cell null (>= 0; 0: fixed threshold).
    min_shift : float or None
        Smallest time shift of the null in seconds (default ``min(20 s, duration / 4)``).
    arena : tuple of float or None
        ``(width, height)`` (m) of a rectangular arena ``[0, width] x [0, height]`` inside the box
        (default the box): its walls give the boundary cue.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    GridCellsResult
        With ``metrics``: ``final_error_m``, ``final_error_fraction`` (of the spacing),
        ``mean_error_m``, ``max_error_m``, ``fraction_grid`` (above ``gridness_threshold``,
        whose origin ``gridness_threshold_source`` states: the shuffled null, or the fixed
        0.8), ``gridness_null`` (the null's numbers, or None), ``fraction_grid_fixed``
        (classic >= 0.8 whatever the null), ``gridness_median``, ``score_90_median``,
        ``measured_spacing_m``,
        ``measured_orientation_deg`` for the primary module, the same per module under
        ``modules``, with several modules ``joint`` (their track decoded together without the
        start position: :func:`~neurodyn.spatial.gridcells.joint.joint_decode`), and
        ``wall_time_s``, ``duration_s``, ``dt_network_tau``, ``nfe``.

    Raises
    ------
    ValueError
        A non-torus model or a lattice mismatch, a malformed trajectory (shape, non-monotone
        or non-uniform times, positions outside the box), non-positive parameters, a panel
        larger than the sheet, samples so far apart that a phase increment reaches pi, a cue
        with a negative strength or a landmark outside the box, or a run shorter than twice
        the null's ``min_shift``.

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> from neurodyn.spatial.agent import generate_trajectory
    >>> net = fit(FitConfig(geometry="torus", n=(16, 16), steps=2)).network
    >>> res = run_grid_cells(net, generate_trajectory(2.0, seed=0), cells=4)
    >>> res.decoded.shape, res.maps.maps.shape
    ((100, 2), (4, 20, 20))
    """
    plan = prepare_grid_cells(network, trajectory, config, **options)
    return run_grid_cells_prepared(plan, progress, device=device, checkpoint=checkpoint,
                                   checkpoint_every=checkpoint_every)


@with_threads
def run_grid_cells_prepared(plan: GridCellsPlan, progress: bool | None = None, *,
                            device: str = "cpu", checkpoint: str | Path | None = None,
                            checkpoint_every: float = 300.0) -> GridCellsResult:
    """:func:`run_grid_cells` of what :func:`prepare_grid_cells` checked and built: a run
    checks its input before it claims its directory, and simulates what it built. The
    arguments are :func:`run_grid_cells`'."""
    network, trajectory, c, g = plan.network, plan.trajectory, plan.config, plan.geometry
    spacings, shift = plan.spacings, plan.shift
    dt_net, substeps, _ = plan.step
    dev = check_device(device)
    flat, cell_idx = _panel(g, c.cells, c.seed)
    u = _start_state(network, trajectory, spacings, c.orientation, g.lattice)
    record = _Recording(trajectory, len(spacings), flat, c.bins, c.all_cells, c.keep_rates,
                        (int(c.shuffles), shift, c.seed) if c.shuffles > 0 else None)
    config = plan.run_config(dev)
    saver = None if checkpoint is None else _Checkpointer(
        Path(checkpoint), check_positive("checkpoint_every", checkpoint_every),
        _identity(network, trajectory, config, c.keep_rates))
    cues = (c.boundary_cue, c.landmark_cue, c.arena)
    nfe, wall = _simulate_segments(
        network, u, record, plan.velocity, plan.dt_sample, dt_net, substeps, method=c.method,
        noise=c.noise, seed=c.seed, cues=cues, spacings=spacings, orientation=c.orientation,
        device=dev, progress=progress, saver=saver)
    results = _module_results(record, spacings, c.orientation, g.lattice, c.bins, c.shuffles,
                              shift, c.seed, c.keep_rates)
    result = GridCellsResult(trajectory, results, cell_idx, g.lattice, float(c.orientation),
                             _fixed_connectivity(network, c.seed), wall, config)
    result.joint = _joint(record, spacings, c.arena, c.orientation, g.lattice)
    result.metrics = run_metrics(result, nfe, dt_net / network.tau)
    return result


def _joint(record, spacings: list[float], arena, orientation: float, lattice: str):
    """Several modules decoded together over the arena (default the box), or None for one."""
    if len(spacings) < 2:
        return None
    tr = record.trajectory
    return joint_decode(record.phases, spacings, arena or (tr.box.size,) * 2, float(tr.dt),
                        orientation, lattice)


def _run_config(g, trajectory: Trajectory, c: GridCellsConfig, spacings, tau_seconds, dt_max,
                step, dev, shift) -> dict:
    """The resolved parameters of a run (``config.json``); ``step`` is ``(dt_network_tau,
    substeps, jacobian_min_eigenvalue)``."""
    dt_net_tau, substeps, lam = step
    dt_s = float(trajectory.dt)
    noise = c.noise
    return {"spacing": spacings[0], "modules": spacings, "orientation_rad": c.orientation,
            "tau_seconds": tau_seconds, "dt_network_max_tau": dt_max,
            "dt_network_tau": dt_net_tau, "substeps": substeps,
            "jacobian_min_eigenvalue": lam, "cells": int(c.cells), "bins": int(c.bins),
            "seed": c.seed, "method": c.method, "all_cells": c.all_cells,
            "noise": [float(x) for x in noise] if isinstance(noise, (list, tuple))
            else float(noise),
            "device": str(dev),
            "boundary_cue": None if c.boundary_cue is None else list(c.boundary_cue),
            "landmark_cue": None if c.landmark_cue is None else list(c.landmark_cue),
            "shuffles": int(c.shuffles), "min_shift_s": shift, "lattice": g.lattice,
            "sheet": list(g.shape), "box_m": trajectory.box.size, "dt_s": dt_s,
            "duration_s": float(trajectory.t[-1] - trajectory.t[0]), "steps": trajectory.steps,
            **({} if c.arena is None else {"arena_m": [float(a) for a in c.arena]})}


def _fixed_connectivity(network: HopfieldNetwork, seed: int) -> np.ndarray:
    """Kernel ``(n1, n2)`` of the best fixed circulant network (the weights onto neuron 0)."""
    return fit_circulant(network, seed=seed).profile.kernel.detach().cpu().numpy()


def prepare_grid_cells(network: HopfieldNetwork, trajectory: Trajectory,
                       config: GridCellsConfig | None = None, *,
                       checkpoint: str | Path | None = None, **options) -> GridCellsPlan:
    """Check what :func:`run_grid_cells` would refuse before it simulates, and build once what
    it simulates on.

    Refused (``ValueError`` naming the first bad argument): the network, the trajectory (a
    phase that moves by pi or more between two samples, as a track that jumps does), the
    panel, the method, the cues, the null and a ``checkpoint`` written by another run (read
    only). Its arguments are :func:`run_grid_cells`' of the same names. A command calls it
    before it claims its ``--out``, then :func:`run_grid_cells_prepared` on what it returns.

    Returns
    -------
    GridCellsPlan
        The config, the torus, the module spacings, the network's step and the modules' phase
        velocities.

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> from neurodyn.spatial.agent import generate_trajectory
    >>> net = fit(FitConfig(geometry="torus", n=(12, 12), steps=1)).network
    >>> prepare_grid_cells(net, generate_trajectory(2.0, seed=0), cells=4, bins=1)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: bins=1: must be an integer >= 2
    """
    c = GridCellsConfig.of(config, options)
    g, spacings, tau_seconds, dt_max, shift = _checked_arguments(network, trajectory, c)
    _, dt_sample, step, velocity = _steps_and_velocity(
        network, trajectory, g, spacings, c.orientation, tau_seconds, dt_max, c.method)
    plan = GridCellsPlan(network, trajectory, c, g, spacings, tau_seconds, dt_max, shift,
                         dt_sample, step, velocity)
    if checkpoint is not None and Path(checkpoint).exists():
        load_run_state(Path(checkpoint), _identity(network, trajectory,
                                                   plan.run_config(torch.device("cpu")),
                                                   c.keep_rates))
    return plan


@dataclass(frozen=True)
class GridCellsPlan:
    """What :func:`prepare_grid_cells` checked and built, each once: the network, the
    trajectory, the config, the torus ``geometry``, the module ``spacings``,
    ``tau_seconds``, the largest network step ``dt_max`` (tau), the null's smallest
    ``shift`` (s, None without shuffles), the sample interval ``dt_sample`` in network time,
    the network's ``step`` ``(dt_net, substeps, jacobian_min_eigenvalue)``
    (:func:`~.network.network_step`) and the modules' phase ``velocity``
    ``(2 steps - 1, M, 2)`` rad per network time unit."""

    network: HopfieldNetwork
    trajectory: Trajectory
    config: GridCellsConfig
    geometry: object
    spacings: list[float]
    tau_seconds: float
    dt_max: float
    shift: float | None
    dt_sample: float
    step: tuple
    velocity: torch.Tensor

    def run_config(self, device: torch.device) -> dict:
        """The run's resolved parameters (``config.json``) on ``device``."""
        dt_net, substeps, lam = self.step
        return _run_config(self.geometry, self.trajectory, self.config, self.spacings,
                           self.tau_seconds, self.dt_max,
                           (dt_net / self.network.tau, substeps, lam), device, self.shift)


def _identity(network: HopfieldNetwork, trajectory: Trajectory, config: dict,
              keep_rates: bool) -> dict:
    """What a checkpoint of the run of ``config`` must match (:func:`run_identity`; the device
    is left out: a run resumes on any)."""
    return run_identity(network, trajectory, {**config, "device": None, "keep_rates": keep_rates})


def _steps_and_velocity(network: HopfieldNetwork, trajectory: Trajectory, g, spacings,
                        orientation: float, tau_seconds: float, dt_max: float, method: str):
    """Seconds per network time unit, the sample interval in network time, the network's step
    (:func:`network_step`) and the modules' phase velocities (:func:`_network_velocity`)."""
    unit = tau_seconds / network.tau  # seconds per network time unit
    dt_sample = float(trajectory.dt) / unit  # sample interval in network time units
    step = network_step(network, dt_sample, dt_max, method)
    return unit, dt_sample, step, _network_velocity(trajectory, spacings, orientation,
                                                    g.lattice, unit)


def _checked_arguments(network: HopfieldNetwork, trajectory: Trajectory, c: GridCellsConfig):
    """Check :func:`run_grid_cells`' arguments (``ValueError`` naming the first bad one); return
    the torus geometry, the module spacings, ``tau_seconds``, the largest network step and the
    null's smallest shift (None without shuffles)."""
    g = _check_network(network, c.lattice)
    _check_trajectory(trajectory)
    spacings = _modules(c.spacing, c.modules)
    _check_orientation(c.orientation)
    tau_seconds = check_positive("tau_seconds", c.tau_seconds)
    dt_max = check_positive("dt_network", DEFAULT_DT_NETWORK if c.dt_network is None
                       else c.dt_network)
    _check_panel_and_method(g, c.cells, c.bins, c.method, c.noise, len(spacings))
    sides = None if c.arena is None else check_arena(c.arena, trajectory.box)
    check_cues(c.boundary_cue, c.landmark_cue, trajectory.box, sides)
    shuffles = c.shuffles
    if isinstance(shuffles, bool) or not isinstance(shuffles, (int, np.integer)) or shuffles < 0:
        raise BadInput(f"shuffles={shuffles!r}: must be an integer >= 0", param="shuffles")
    shift = null_shift(trajectory, c.min_shift) if shuffles > 0 else None
    return g, spacings, tau_seconds, dt_max, shift


def _check_orientation(orientation) -> None:
    """Raise ``ValueError`` unless ``orientation`` is an angle in ``[-2 pi, 2 pi]`` (radians;
    beyond a turn, a number of many turns has lost its digits, or is in other units)."""
    if isinstance(orientation, bool) or not isinstance(orientation, (int, float)) or not \
            (math.isfinite(orientation) and abs(orientation) <= 2 * math.pi):
        raise BadInput(f"orientation={orientation!r}: must be an angle in [-2 pi, 2 pi] "
                       "radians", param="orientation")


def _check_panel_and_method(g, cells, bins, method: str, noise, modules: int = 1) -> None:
    """Raise ``ValueError`` for a panel that does not fit the sheet ``g``, too few rate-map
    bins, a method that is not fixed-step, or noise that is negative or not Euler-Maruyama."""
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or \
            not 1 <= cells <= g.size:
        raise BadInput(f"cells={cells!r}: must be an integer in [1, {g.size}] "
                       f"(the {g.shape[0]} x {g.shape[1]} sheet)", param="cells")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise BadInput(f"bins={bins!r}: must be an integer >= 2", param="bins")
    if method not in ("euler", "midpoint", "rk4"):
        raise BadInput(f"method={method!r}: choose a fixed-step method, one of "
                       "('euler', 'midpoint', 'rk4')", param="method")
    sigmas = list(noise) if isinstance(noise, (list, tuple)) else [noise]
    if isinstance(noise, (list, tuple)) and len(sigmas) != modules:
        raise BadInput(f"noise={noise!r}: give one sigma per module ({modules})", param="noise")
    if not all(not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)
               and x >= 0 for x in sigmas):
        raise BadInput(f"noise={noise!r}: must be a finite number >= 0 (or one per module)",
                       param="noise")
    if max(sigmas) > 0 and method != "euler":
        raise BadInput(f"method={method!r}: noise > 0 needs method='euler' (Euler-Maruyama)",
                       param="method")


def _network_velocity(trajectory: Trajectory, spacings: list[float], orientation: float,
                      lattice: str, unit: float) -> torch.Tensor:
    """Phase velocities of the modules on the half-sample grid, ``(2 steps - 1, M, 2)`` rad per
    network time unit (``unit`` seconds); ``ValueError`` when a phase moves by pi or more
    between samples (the decoded phases could not be unwrapped)."""
    vel = np.stack([phase_velocity(trajectory.velocity, s, orientation, lattice)
                    for s in spacings], axis=1)  # (steps, M, 2) rad per second
    dt_s = float(trajectory.dt)
    jump = float(np.abs(vel).max()) * dt_s
    if jump >= math.pi:
        raise BadInput(f"trajectory.dt={dt_s} s: a phase moves by {jump:.3g} rad between "
                       "samples (>= pi), so decoded phases cannot be unwrapped; sample the "
                       "positions more often", param="trajectory.dt")
    return torch.as_tensor(_midpoint_samples(vel * unit), dtype=torch.float64)


def _panel(g, cells: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The panel of ``cells`` sheet neurons drawn without replacement (seeded by ``seed``): their
    sorted flat indices ``(cells,)`` and sheet indices ``(cells, 2)``."""
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(g.size, size=int(cells), replace=False))
    return flat, np.stack(np.unravel_index(flat, g.shape), axis=1)


def _start_state(network: HopfieldNetwork, trajectory: Trajectory, spacings: list[float],
                 orientation: float, lattice: str) -> torch.Tensor:
    """The manifold bump of each module at the phase of the trajectory's first position."""
    psi0 = np.stack([np.mod(position_to_phase(trajectory.position[0], s, orientation,
                                              lattice), 2 * math.pi) for s in spacings])
    with torch.no_grad():
        return network.manifold.u_star(torch.as_tensor(psi0, dtype=torch.float64))


class _Recording:
    """What a run keeps of its segments: decoded phases ``(steps, M, 2)``, the panel's rates
    ``(steps, M, cells)`` when ``keep`` or when the shuffled null ``null = (shuffles,
    min_shift, seed)`` needs them and they take at most :data:`_KEEP_BYTES` (else None, and the
    null is binned as the segments come: ``nulls``), and the rate-map sums of each module (of
    the panel, and of every neuron when ``all_cells``)."""

    def __init__(self, trajectory: Trajectory, batch: int, flat: np.ndarray, bins: int,
                 all_cells: bool, keep: bool, null: tuple | None):
        box, steps = trajectory.box, trajectory.steps
        self.trajectory, self.flat = trajectory, flat
        self.acc = [_MapAccumulator(box, bins) for _ in range(batch)]
        self.acc_all = [_MapAccumulator(box, bins) for _ in range(batch)] if all_cells \
            else None
        self.phases = np.empty((steps, batch, 2))
        stream = null is not None and not keep and 8.0 * steps * batch * len(flat) > _KEEP_BYTES
        self.kept = np.empty((steps, batch, len(flat))) if keep or (null and not stream) \
            else None
        self.nulls = [_NullAccumulator(trajectory, bins, len(flat), *null)
                      for _ in range(batch)] if stream else None

    def add(self, first: int, last: int, decoded: np.ndarray, rates: torch.Tensor) -> None:
        """Store samples ``first..last`` from a segment's saved ``decoded`` phases and
        ``rates`` ``(saved, M, N)``; after the first segment, the first saved state repeats
        the previous segment's last one and is skipped."""
        keep = slice(0 if first == 0 else 1, None)
        idx = slice(first if first == 0 else first + 1, last + 1)
        self.phases[idx] = decoded[keep]
        rn = rates[keep].numpy()
        if self.kept is not None:
            self.kept[idx] = rn[:, :, self.flat]
        pos = self.trajectory.position[idx]
        for m in range(len(self.acc)):
            self.acc[m].add(pos, rn[:, m, self.flat])
            if self.acc_all is not None:
                self.acc_all[m].add(pos, rn[:, m])
            if self.nulls is not None:
                self.nulls[m].add(idx.start, rn[:, m, self.flat])

    def _sums(self) -> list:
        """Every running sum, as ``[name, accumulator, attribute]`` triples."""
        out = []
        for name in ("acc", "acc_all", "nulls"):
            for i, a in enumerate(getattr(self, name) or []):
                out += [(f"{name}{i}.{k}", a, k) for k in ("sums", "occ")]
        return out

    def state(self, last: int) -> dict:
        """What samples ``0..last`` left: phases, kept rates and every sum (arrays)."""
        out = {"phases": self.phases[:last + 1].copy()}
        if self.kept is not None:
            out["kept"] = self.kept[:last + 1].copy()
        out["sums"] = {key: getattr(a, k) for key, a, k in self._sums()}
        out["edges"] = [a.edges.x_edges for a in self.acc]
        return out

    def restore(self, state: dict, last: int) -> None:
        """Go on from :meth:`state` ``(last)``."""
        self.phases[:last + 1] = state["phases"]
        if self.kept is not None:
            self.kept[:last + 1] = state["kept"]
        for key, a, k in self._sums():
            setattr(a, k, state["sums"][key])
        for a in (self.acc or []) + (self.acc_all or []):
            e = state["edges"][0]
            a.edges = RateMaps(maps=None, x_edges=e, y_edges=e.copy(), occupancy=None)


class _Checkpointer:
    """Saves a run's state to ``path`` every ``every`` simulated seconds (and on Ctrl-C), and
    resumes an existing one written with ``identity``."""

    def __init__(self, path: Path, every: float, identity: dict):
        self.path, self.every, self.identity = path, every, identity
        self.saved_at = 0.0

    def resume(self, record: _Recording) -> dict | None:
        """The saved ``u``, ``first``, ``nfe`` and ``wall`` (the record restored), or None."""
        if not self.path.exists():
            return None
        state = load_run_state(self.path, self.identity)
        first = int(state["first"])
        record.restore(state["record"], first)
        self.saved_at = first * float(record.trajectory.dt)
        return state

    def maybe_save(self, record: _Recording, u, first: int, nfe: int, wall: float,
                   force: bool = False) -> None:
        """Save when ``every`` simulated seconds have passed since the last save (or ``force``)."""
        now = first * float(record.trajectory.dt)
        if force or now - self.saved_at >= self.every:
            save_run_state(self.path, self.identity, {
                "u": u, "first": int(first), "nfe": int(nfe), "wall": float(wall),
                "record": record.state(first)})
            self.saved_at = now


def _simulate_segments(network: HopfieldNetwork, u: torch.Tensor, record: _Recording,
                       vel_net: torch.Tensor, dt_sample: float, dt_net: float, substeps: int,
                       *, method: str, noise: float, seed: int, cues: tuple,
                       spacings: list[float], orientation: float,
                       device: torch.device, progress: bool | None,
                       saver: _Checkpointer | None = None) -> tuple[int, float]:
    """Simulate the whole trajectory from ``u`` in segments of at most :data:`_SEGMENT_BYTES`
    of saved states, each continuing from the last state, into ``record``, with the
    ``(boundary_cue, landmark_cue)`` currents of ``cues``, checkpointed by ``saver``; return
    the function evaluations and the wall time (of every call, for a resumed run)."""
    trajectory = record.trajectory
    steps, batch = trajectory.steps, len(spacings)
    gain = cue_gain(trajectory, *cues)
    seg = max(1, int(_SEGMENT_BYTES // (16 * batch * network.geometry.size)))  # samples
    nfe, first, before = 0, 0, 0.0
    resumed = None if saver is None else saver.resume(record)
    if resumed is not None:
        u, first, nfe, before = resumed["u"], int(resumed["first"]), int(resumed["nfe"]), \
            float(resumed["wall"])
    minutes = float(trajectory.dt) / 60.0
    total = round((steps - 1) * minutes, 3)

    def at(sample: int) -> float:  # the bar's position; the last sample is the total itself
        return total if sample >= steps - 1 else round(sample * minutes, 3)

    bar = progress_bar(total=total, initial=at(first), desc="grid cells (simulated min)",
                       enabled=progress)
    start = time.perf_counter()
    try:
        while first < steps - 1:
            last = min(first + seg, steps - 1)
            u, n_eval = _segment(network, u, record, vel_net, first, last, gain, dt_sample,
                                 dt_net, substeps, method=method, noise=noise, seed=seed,
                                 spacings=spacings, orientation=orientation, device=device)
            nfe += n_eval
            bar.n = at(last)  # set, not added: float sums would end short of the total
            bar.refresh()
            first = last
            if saver is not None and first < steps - 1:
                saver.maybe_save(record, u, first, nfe, before + time.perf_counter() - start)
            check_interrupt()
    except KeyboardInterrupt:
        if saver is None:
            raise
        saver.maybe_save(record, u, first, nfe, before + time.perf_counter() - start, True)
        raise KeyboardInterrupt(f"grid-cell run interrupted at {first * float(trajectory.dt):g}"
                                f" s; {saver.path} holds it: rerun the same command to "
                                "resume") from None
    finally:
        bar.close()
    return nfe, before + time.perf_counter() - start


def _segment(network: HopfieldNetwork, u: torch.Tensor, record: _Recording,
             vel_net: torch.Tensor, first: int, last: int, gain, dt_sample: float,
             dt_net: float, substeps: int, *, method: str, noise, seed: int,
             spacings: list[float], orientation: float, device: torch.device):
    """Simulate samples ``first..last`` from ``u`` into ``record``; the last state and the
    function evaluations. The samples without a cue run on the compiled path, those with one on
    the torch path with the cue current (:func:`_cue_pieces`); one ``sigma`` per module
    simulates the modules one by one."""
    per_module = isinstance(noise, (list, tuple))
    groups = [slice(m, m + 1) for m in range(len(spacings))] if per_module else [slice(None)]
    decoded, rates, nfe = [], [], 0
    for a, b, on in _cue_pieces(gain, first, last):
        outs = []
        for i, sl in enumerate(groups):
            sigma = float(noise[i]) if per_module else float(noise)
            tag = (seed * 1_000_003 + a) * (16 if per_module else 1) + (i + 1) * per_module
            outs.append(_piece(network, u[sl], record.trajectory, vel_net[:, sl], a, b,
                               gain if on else None, dt_sample, dt_net, substeps, method,
                               sigma, tag, spacings[sl], orientation, device))
        u = torch.cat([o[0] for o in outs], dim=0)
        keep = slice(0 if a == first else 1, None)
        decoded.append(torch.cat([o[1] for o in outs], dim=1)[keep])
        rates.append(torch.cat([o[2] for o in outs], dim=1)[keep])
        nfe += sum(o[3] for o in outs)
    record.add(first, last, torch.cat(decoded).numpy(), torch.cat(rates))
    return u, nfe


def _cue_pieces(gain, first: int, last: int) -> list[tuple[int, int, bool]]:
    """Samples ``first..last`` cut where the cue turns on or off: ``(a, b, on)`` pieces whose
    intervals ``[a, b)`` all have the cue on, or all off (one piece without cues)."""
    if gain is None:
        return [(first, last, False)]
    on = gain[first:last] != 0
    cuts = [first] + [first + int(i) + 1 for i in np.flatnonzero(on[1:] != on[:-1])] + [last]
    return [(a, b, bool(on[a - first])) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def _piece(network, u, trajectory, vel_net, a: int, b: int, gain, dt_sample, dt_net, substeps,
           method, sigma: float, tag: int, spacings, orientation, device):
    """Samples ``a..b`` of the modules in ``u``: the last state, the decoded phases
    ``(b - a + 1, M, 2)``, the rates ``(b - a + 1, M, N)`` and the function evaluations."""
    vseg = ArrayVelocity(vel_net[2 * a:2 * b + 1], dt_sample / 2)
    cur = None if gain is None else cue_current(
        network, gain, trajectory, a, b, spacings, orientation, dt_sample)
    if cur is not None and device.type != "cpu":
        cur = (lambda c: lambda t: c(t).to(device))(cur)
    tr = simulate(network, u, (b - a) * dt_sample, dt_net, method=method, velocity=vseg,
                  save_every=substeps, progress=False, diagnostics=False, noise=sigma,
                  seed=tag if sigma > 0 else None, current=cur, device=device,
                  reference=False)
    last = tr.u[-1]
    tr = tr.cpu()
    return last, tr.decoded, tr.r.reshape(tr.r.shape[0], len(spacings), -1), tr.nfe


def _module_results(record: _Recording, spacings: list[float], orientation: float,
                    lattice: str, bins: int, shuffles: int, shift: float | None, seed: int,
                    keep_rates: bool) -> list[ModuleResult]:
    """Each module's decoded positions, errors, rate maps, scores and grid-cell null."""
    trajectory, phases, kept, acc_all = record.trajectory, record.phases, record.kept, \
        record.acc_all
    results = []
    for m, s in enumerate(spacings):
        decoded = phase_track_to_positions(phases[:, m], trajectory.position[0], s, orientation,
                                           lattice)
        err = np.linalg.norm(decoded - trajectory.position, axis=-1)
        maps = record.acc[m].result()
        if record.nulls is not None:
            null = record.nulls[m].result(trajectory.box, SMOOTHING_BINS)
        else:
            null = None if shift is None else shuffled_gridness(
                trajectory.position, kept[:, m], float(trajectory.dt), trajectory.box,
                int(bins), shuffles=int(shuffles), min_shift=shift, seed=seed)
        results.append(ModuleResult(
            spacing=s, phases=phases[:, m].copy(), decoded=decoded, error=err, maps=maps,
            scores=grid_scores(maps), all_maps=acc_all[m].result() if acc_all else None,
            rates=kept[:, m].copy() if keep_rates else None, classification=null))
    return results
