"""``neurodyn grid-cells`` as a run: path integration in a box by a fitted torus model, rate
maps and gridness, written into a run directory.

:func:`grid_cells_run` checks the whole input once (the model, the trajectory and its memory,
the method, the cues, the null, the noise calibration, a checkpoint of another run) before it
claims ``out`` (:func:`~neurodyn.spatial.gridcells.run.prepare_grid_cells` builds what the
simulation needs, once), then simulates it
(:func:`~neurodyn.spatial.gridcells.run.run_grid_cells_prepared`) and writes
``track.npz``, ``ratemaps.npz``, ``metrics.json``, ``timing.json``, ``config.json`` and the
figures (:func:`~neurodyn.spatial.gridcells.files.write_grid_cells`).
"""

from __future__ import annotations

import dataclasses
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _runkit import BadInput, RunDir, check_memory, check_positive, write_json
from _runkit.checks import check_installed

from ..dynamics.heterogeneity import Heterogeneity, heterogeneous
from ..io import load_model
from ..spatial.agent import Box, Trajectory, generate_trajectory
from ..spatial.gridcells.calibration import module_diffusion, noise_for_diffusion
from ..spatial.gridcells.checks import _check_network
from ..spatial.gridcells.files import write_grid_cells
from ..spatial.gridcells.recorded import file_trajectory, recorded_trajectory
from ..spatial.gridcells.results import NULL_MIN_SHIFT, null_shift
from ..spatial.gridcells.run import (
    GridCellsConfig,
    GridCellsPlan,
    prepare_grid_cells,
    run_grid_cells_prepared,
)
from ..spatial.positions import load_positions

__all__ = ["GridCellsRunConfig", "grid_cells_run", "SESSION_SECONDS", "CHECKPOINT"]

#: RatInABox's sessions that ``trajectory`` names: name -> duration (s)
SESSION_SECONDS = {"sargolini": 600.0, "tanni": 7323.0}
#: the checkpoint of a long run in its run directory
CHECKPOINT = "grid_state.pt"


@dataclass(frozen=True)
class GridCellsRunConfig:
    """Everything ``neurodyn grid-cells`` runs, by the names of its options (``--cue-at`` is
    ``cue_at``); the units are the command's: seconds, metres, degrees, simulated minutes
    between checkpoints.

    ``model`` is the directory holding ``model.pt`` (or the file); ``trajectory`` None
    (generated exploration of ``duration`` s, default 600, sampled every ``dt``, default
    0.02 s), a file of positions or tracking, or a session of :data:`SESSION_SECONDS`; the rest are
    the arguments of :func:`~neurodyn.spatial.gridcells.run.run_grid_cells`, the noise
    calibration ``diffusion`` (cm^2/s), the heterogeneity ``gain_sd``, ``threshold_sd``,
    ``weight_sd``, the cue ``cue_strength``, ``cue_at``, ``cue_walls``, ``cue_distance``, and
    ``nwb`` (also write ``activity.nwb``).
    """

    model: str
    duration: float | None = None
    box: float = 1.0
    spacing: float = 0.5
    trajectory: str | None = None
    max_speed: float = 2.0
    dt: float | None = None
    arena: tuple[float, float] | None = None
    seed: int = 0
    device: str = "cpu"
    modules: list[float] | None = None
    cells: int = 64
    orientation: float = 0.0
    bins: int = 20
    lattice: str | None = None
    dt_network: float | None = None
    tau_seconds: float = 0.01
    all_cells: bool = False
    checkpoint_every: float = 5.0
    noise: float = 0.0
    diffusion: float | None = None
    method: str | None = None
    gain_sd: float = 0.0
    threshold_sd: float = 0.0
    weight_sd: float = 0.0
    cue_strength: float = 0.0
    cue_at: tuple[float, float] | None = None
    cue_walls: bool = False
    cue_distance: float = 0.1
    shuffles: int = 20
    min_shift: float | None = None
    nwb: bool = False



@dataclass
class _Plan:
    """What a checked run simulates: the simulation's plan (the network heterogeneous when
    asked; :func:`~neurodyn.spatial.gridcells.run.prepare_grid_cells`), the tracking report
    (or None), the heterogeneity and the noise calibration (or None)."""

    simulation: GridCellsPlan
    tracking: dict | None
    disorder: Heterogeneity
    calibration: dict | None


def grid_cells_run(config: GridCellsRunConfig, out: str | Path, fresh: bool = False,
                   arguments: dict | None = None, progress: bool | None = None) -> dict:
    """Run ``config`` in the run directory ``out``; return the metrics.

    Everything is checked (:func:`_plan`) before ``out`` is claimed; a checkpoint of this run
    in ``out`` is resumed unless ``fresh``. ``config.json`` holds ``arguments`` (default the
    config's fields) beside the run's resolved parameters.
    """
    plan = _plan(config, None if fresh else Path(out) / CHECKPOINT)
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn grid-cells", config=arguments, seed=config.seed,
                fresh=fresh) as run:
        state = run.path(CHECKPOINT)
        if fresh and state.exists():
            state.unlink()
        result = run_grid_cells_prepared(plan.simulation, progress, device=config.device,
                                         checkpoint=state,
                                         checkpoint_every=60.0 * config.checkpoint_every)
        result.config["heterogeneity"] = plan.disorder.to_dict()
        if plan.tracking is not None:
            result.config["trajectory"] = plan.tracking["source"]
            result.metrics["tracking"] = plan.tracking
        if plan.calibration is not None:
            result.metrics["noise_calibration"] = plan.calibration
        write_grid_cells(result, run.out)
        # one config.json shape: the run's resolved parameters next to the command line's
        run.config = {"arguments": arguments, **result.config}
        write_json(run.record(), run.path("config.json"))
        state.unlink(missing_ok=True)
        if config.nwb:
            from ..interop import export_run_nwb

            export_run_nwb(run.out)
    return result.metrics


def _plan(config: GridCellsRunConfig, checkpoint: Path | None) -> _Plan:
    """Check the whole of ``config`` and build what the run simulates, reading only; a
    ``checkpoint`` written by another run is refused."""
    method = _method(config)
    if config.trajectory in SESSION_SECONDS:
        check_installed("ratinabox", "data", f"--trajectory {config.trajectory}")
    network, _ = load_model(config.model, what="--model")
    sheet = _check_network(network, config.lattice).size
    traj, tracking, arena = _trajectory(config, sheet)
    _check_run_memory(config, sheet, traj.steps)
    cues = _cues(config, traj.box)
    if config.shuffles > 0:
        _check_null(config, traj)
    disorder = Heterogeneity(config.gain_sd, config.threshold_sd, config.weight_sd,
                             seed=config.seed)
    if config.gain_sd > 0 or config.threshold_sd > 0 or config.weight_sd > 0:
        network = heterogeneous(network, disorder)
    spacing = check_positive("--spacing", config.spacing)
    noise, calibration = _noise(config, network, spacing)
    if config.nwb:  # refused before the run without pynwb
        check_installed("pynwb", "nwb", "--nwb (an NWB file of the run)")
    run = GridCellsConfig(
        spacing=spacing, orientation=math.radians(config.orientation), modules=config.modules,
        tau_seconds=config.tau_seconds, dt_network=config.dt_network, cells=config.cells,
        bins=config.bins, lattice=config.lattice, method=method, noise=noise,
        shuffles=config.shuffles, min_shift=config.min_shift, arena=arena, seed=config.seed,
        all_cells=config.all_cells, **cues)
    simulation = prepare_grid_cells(network, traj, run, checkpoint=checkpoint)
    return _Plan(simulation, tracking, disorder, calibration)


def _check_null(config: GridCellsRunConfig, traj: Trajectory) -> None:
    """Refuse a run too short for the shuffled null's smallest shift, naming ``--min-shift``."""
    try:
        null_shift(traj, config.min_shift)
    except BadInput:
        duration = float(traj.t[-1] - traj.t[0])
        given = f"{config.min_shift:g}" if config.min_shift is not None else \
            f"{min(NULL_MIN_SHIFT, duration / 4):g} (the default)"
        raise BadInput(f"--min-shift={given}: the run ({duration:g} s, {traj.steps} "
                       "samples) must last more than twice the smallest shift of the "
                       "shuffled null; give a shorter --min-shift, or --shuffles 0") from None


def _check_run_memory(config: GridCellsRunConfig, sheet: int, steps: float) -> None:
    """Refuse a run whose trajectory, recording and rate maps would not fit in memory, naming
    the option behind the largest term, before any of them is allocated."""
    panel = float(sheet if config.all_cells else config.cells)
    modules = float(len(config.modules) if config.modules else 1)
    # per sample: time, position, velocity (5), per module the phase velocity on the
    # half-sample grid and the decoded phase (10), and the panel's rates, all float64
    terms = {"--duration": 8.0 * float(steps) * (5.0 + 10.0 * modules + panel),
             "--bins": 8.0 * 4.0 * panel * modules * float(config.bins) ** 2}
    check_memory(max(terms, key=terms.get), sum(terms.values()))


def _trajectory(config: GridCellsRunConfig, sheet: int) -> tuple:
    """``(trajectory, tracking report or None, arena)``: generated, a session, a tracking
    file or a file of positions; its memory is checked before it is read or made."""
    box = Box(check_positive("--box", config.box))
    if config.trajectory in SESSION_SECONDS:
        return _recorded(config, sheet)
    if config.trajectory is not None and _is_tracking(Path(config.trajectory)):
        return _tracking_file(config, sheet, box)
    if config.trajectory is None:
        duration = 600.0 if config.duration is None else \
            check_positive("--duration", config.duration)
        dt = 0.02 if config.dt is None else check_positive("--dt", config.dt)
        _check_run_memory(config, sheet, duration / dt + 1.0)
        return generate_trajectory(duration, dt, box, seed=config.seed), None, config.arena
    return _positions(config, box), None, config.arena


def _positions(config: GridCellsRunConfig, box: Box) -> Trajectory:
    """A file of positions, ``.npy`` sampled every ``dt`` or ``.npz`` with ``position``."""
    path = Path(config.trajectory)
    if not path.exists():
        raise FileNotFoundError(f"--trajectory {path}: no such file")
    if path.is_dir():
        raise BadInput(f"--trajectory {path}: is a directory; expected a .npy or .npz file",
                       param="trajectory")
    if path.suffix.lower() == ".npy" and config.dt is None:
        raise BadInput(f"--trajectory {path}: a .npy file of positions needs --dt SECONDS",
                       param="trajectory")
    dt = None if config.dt is None else check_positive("--dt", config.dt)
    try:
        traj = load_positions(path, dt, box)
    except BadInput as exc:
        raise BadInput(f"--trajectory {path}: {exc}", param="trajectory") from None
    if config.duration is not None:
        duration = check_positive("--duration", config.duration)
        steps = int(round(duration / traj.dt)) + 1
        if steps > traj.steps:
            raise BadInput(f"--duration {duration}: longer than the trajectory "
                           f"({(traj.steps - 1) * traj.dt:g} s in {path})", param="duration")
        traj = Trajectory(traj.t[:steps], traj.position[:steps], traj.velocity[:steps],
                          traj.dt, traj.box)
    return traj


def _is_tracking(path: Path) -> bool:
    """A .csv, or a .npz holding times 't' (tracking to clean and resample)."""
    if path.suffix.lower() == ".csv":
        return True
    if path.suffix.lower() != ".npz" or not path.is_file():
        return False
    try:  # the names only: the arrays are read, and checked, by the reader chosen
        with zipfile.ZipFile(path) as zf:
            names = {name.removesuffix(".npy") for name in zf.namelist()}
    except (OSError, zipfile.BadZipFile):
        return False
    return "t" in names and ("pos" in names or "position" in names)


def _tracking_file(config: GridCellsRunConfig, sheet: int, box: Box) -> tuple:
    """A tracking file on the clock ``dt`` (default its median interval), cleaned like the
    sessions, with its tracking report."""
    path = Path(config.trajectory)
    if not path.exists():
        raise FileNotFoundError(f"--trajectory {path}: no such file")
    dt = None if config.dt is None else check_positive("--dt", config.dt)
    duration = None if config.duration is None else check_positive("--duration", config.duration)
    try:
        traj, report = file_trajectory(path, dt, box, arena=config.arena,
                                       max_speed=config.max_speed, duration=duration)
    except BadInput as exc:
        raise BadInput(f"--trajectory {path}: {exc}", param="trajectory") from None
    _check_run_memory(config, sheet, traj.steps)
    return traj, report.to_dict(), config.arena


def _recorded(config: GridCellsRunConfig, sheet: int) -> tuple:
    """RatInABox's session named by ``trajectory`` on the clock ``dt`` (default 0.02 s), with
    its tracking report and arena (the session's unless given)."""
    dt = 0.02 if config.dt is None else check_positive("--dt", config.dt)
    duration = None if config.duration is None else check_positive("--duration", config.duration)
    _check_run_memory(config, sheet, (duration or SESSION_SECONDS[config.trajectory]) / dt + 1.0)
    traj, report = recorded_trajectory(config.trajectory, dt, duration=duration,
                                       max_speed=config.max_speed)
    arena = tuple(report.arena_m) if config.arena is None else config.arena
    return traj, report.to_dict(), arena


def _method(config: GridCellsRunConfig) -> str:
    noisy = config.noise > 0 or config.diffusion is not None
    if config.noise > 0 and config.diffusion is not None:
        raise BadInput(f"--diffusion={config.diffusion:g}: sets the noise; leave out --noise")
    if config.method is None:
        return "euler" if noisy else "rk4"
    if noisy and config.method != "euler":
        raise BadInput(f"--method={config.method}: --noise > 0 needs --method euler "
                       "(Euler-Maruyama)")
    return config.method


def _noise(config: GridCellsRunConfig, network, spacing: float) -> tuple:
    """``sigma`` (one, or one per module for ``diffusion``) and the calibration's numbers."""
    if config.diffusion is None:
        return config.noise, None
    spacings = config.modules or [spacing]
    ori = math.radians(config.orientation)
    sig = noise_for_diffusion(network, spacings, 1e-4 * config.diffusion, ori,
                              config.tau_seconds)
    d = module_diffusion(network, spacings, sig, ori, config.tau_seconds)
    return sig, {"target_D_cm2_per_s": config.diffusion,
                 "definition": "D = tr(D_x): E|e(t)|^2 = 2 D t for the position error e of a "
                               "module alone (neurodyn.spatial.gridcells.calibration)",
                 "modules": [{"spacing_m": float(s), "sigma": float(x),
                              "theory_D_cm2_per_s": float(1e4 * dd)}
                             for s, x, dd in zip(spacings, sig, d, strict=True)]}


def _cues(config: GridCellsRunConfig, box: Box) -> dict:
    if config.cue_strength == 0:
        if config.cue_at is not None:
            raise BadInput(f"--cue-strength=0: --cue-at {config.cue_at} needs a cue strength "
                           "> 0")
        return {}
    if config.cue_at is None:
        return {"boundary_cue": (config.cue_strength, config.cue_distance)}
    if not bool(box.contains(np.array([config.cue_at]))[0]):
        raise BadInput(f"--cue-at={config.cue_at[0]:g},{config.cue_at[1]:g}: the landmark must "
                       f"lie inside the box [0, {box.size:g}] x [0, {box.size:g}] m")
    walls = {"boundary_cue": (config.cue_strength, config.cue_distance)} if config.cue_walls \
        else {}
    return {"landmark_cue": (config.cue_strength, *config.cue_at, config.cue_distance),
            **walls}
