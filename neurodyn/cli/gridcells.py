"""``neurodyn grid-cells``: path integration in a box by a torus model; rate maps, gridness."""

from __future__ import annotations

import argparse
import math
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from _runkit import BadInput, check_int, check_memory, write_json
from _runkit.checks import check_installed

from ._common import (
    DEFAULT_DT_NETWORK,
    FIXED_METHODS,
    GRIDNESS_THRESHOLD,
    LATTICES,
    NULL_MIN_SHIFT,
    add_device_argument,
    args_config,
    command,
    load_network,
    nonnegative,
    open_run,
    positive,
    positive_int,
    seed_arg,
)

if TYPE_CHECKING:
    from ..spatial.agent import Box, Trajectory

__all__ = ["register"]

#: RatInABox's sessions that --trajectory names: name -> duration (s)
RECORDED = {"sargolini": 600.0, "tanni": 7323.0}
#: the checkpoint of a long run in --out
CHECKPOINT = "grid_state.pt"


def _float_list(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected comma-separated spacings in metres, e.g. 0.5,0.7,0.98"
        ) from None
    if not vals:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least one spacing")
    return vals


def _point(text: str) -> tuple[float, float]:
    try:
        vals = tuple(float(x) for x in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 2 or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"{text!r}: expected X,Y in metres, e.g. 0.5,0.5")
    return vals


def _count(text: str) -> int:
    try:
        return check_int("value", int(text), lo=0)
    except (ValueError, BadInput):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be an integer >= 0"
                                         ) from None


def register(sub) -> argparse.ArgumentParser:
    """Add the ``grid-cells`` sub-command.

    ``neurodyn grid-cells --model DIR --out OUT [--duration SECONDS] [--box METRES]
    [--spacing METRES] [--trajectory positions.npy] [--dt SECONDS] [--seed S]
    [--modules S1,S2,...] [--cells C] [--orientation DEG] [--bins B] [--lattice L]
    [--dt-network TAU] [--tau-seconds S] [--all-cells] [--noise SIGMA] [--method M]
    [--gain-sd SD] [--threshold-sd SD] [--weight-sd SD] [--cue-strength A] [--cue-at X,Y]
    [--cue-distance METRES] [--shuffles N] [--min-shift SECONDS]``

    The parser's ``func`` takes the parsed arguments, runs
    :func:`~neurodyn.spatial.gridcells.run.run_grid_cells`, writes the outputs with
    :func:`~neurodyn.spatial.gridcells.run.write_grid_cells` and returns the metrics dict.
    """
    p = sub.add_parser(
        "grid-cells", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="path integration in a box by a torus model; rate maps, gridness",
        description="Path integration of an agent's trajectory (generated, or positions from a "
                    "file) by a fitted torus model; writes track.npz, ratemaps.npz, "
                    "metrics.json, config.json and figures into --out.")
    _add_run_arguments(p)
    _add_noise_arguments(p)
    _add_cue_arguments(p)
    _add_null_arguments(p)
    p.add_argument("--nwb", action="store_true",
                   help="also write activity.nwb: positions and rate maps in NWB (needs the "
                        "nwb extra)")
    p.set_defaults(func=command(_grid_cells))
    return p


def _add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The model, the output, the trajectory, the modules, the panel and the network step."""
    p.add_argument("--model", required=True, help="directory holding model.pt (fit torus)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds of generated exploration (default 600); with --trajectory, "
                        "keep only the first SECONDS")
    p.add_argument("--box", type=float, default=1.0, help="side of the square box (m)")
    p.add_argument("--spacing", type=float, default=0.5, help="grid spacing (m)")
    p.add_argument("--trajectory", default=None,
                   help="positions (steps, 2) in metres: FILE.npy sampled every --dt, or "
                        "FILE.npz with 'position'; tracking with its own times, FILE.npz with "
                        "'t' and 'pos' (or 'position') or FILE.csv with columns t,x,y, cleaned "
                        "and resampled like the sessions (--dt default: its median interval); "
                        "or a real rat session "
                        "of RatInABox (extra 'data'): sargolini (600 s, 1 m box) or tanni "
                        "(7323 s, 3.5 x 2.5 m arena in a 3.5 m box), its tracking resampled to "
                        "--dt with jumps dropped and gaps bridged (reported in metrics.json)")
    p.add_argument("--max-speed", type=positive, default=2.0,
                   help="with tracking (a session or a file with times): a tracked sample "
                        "farther from the "
                        "last accepted one than this speed allows is a jump and dropped (m/s)")
    p.add_argument("--dt", type=float, default=None,
                   help="sampling interval of the trajectory (s; default 0.02 for generated "
                        "exploration, required for a .npy file)")
    p.add_argument("--arena", type=_point, default=None, metavar="W,H",
                   help="sides of a rectangular arena [0, W] x [0, H] in the box (m): tracking "
                        "is clipped into it and its walls give the boundary cue (default: the "
                        "session's, 3.5,2.5 for tanni, else the box)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seeds the trajectory and the panel")
    add_device_argument(p)
    p.add_argument("--modules", type=_float_list, default=None,
                   help="comma-separated spacings (m) of several modules, e.g. 0.5,0.7,0.98 "
                        "(overrides --spacing; default: one module of --spacing)")
    p.add_argument("--cells", type=positive_int, default=64,
                   help="size of the random panel of cells")
    p.add_argument("--orientation", type=float, default=0.0,
                   help="grid orientation: angle of k1 (degrees)")
    p.add_argument("--bins", type=positive_int, default=20, help="rate-map bins per side")
    p.add_argument("--lattice", default=None,
                   help=f"expected lattice of the model, one of {LATTICES} (checked; default: "
                        "the model's, unchecked)")
    p.add_argument("--dt-network", type=float, default=None,
                   help=f"largest network step in tau (default {DEFAULT_DT_NETWORK})")
    p.add_argument("--tau-seconds", type=positive, default=0.01, help="tau in seconds")
    p.add_argument("--all-cells", action="store_true",
                   help="also bin every neuron of the sheet (ratemaps.npz: all_maps)")
    p.add_argument("--checkpoint-every", type=positive, default=5.0,
                   help="simulated minutes between checkpoints of a long run (OUT/"
                        f"{CHECKPOINT}, also written on Ctrl-C and removed when the run "
                        "ends); rerunning the same command resumes it exactly")
    p.add_argument("--fresh", action="store_true",
                   help="discard an existing checkpoint and start over")


def _add_noise_arguments(p: argparse.ArgumentParser) -> None:
    """Noise on ``u`` and its integrator, and random heterogeneity of the neurons."""
    d = p.add_argument_group("noise and heterogeneity (seeded by --seed)")
    d.add_argument("--noise", type=nonnegative, default=0.0,
                   help="additive noise on u: sigma in potential units per sqrt(tau) (0: none; "
                        "> 0 integrates by Euler-Maruyama)")
    d.add_argument("--diffusion", type=positive, default=None, metavar="CM2_PER_S",
                   help="set the noise by the diffusion D of every module's position error "
                        "(cm^2/s; the RMS error grows like sqrt(2 D t)), from the bump's "
                        "diffusion theory: one sigma per module, stated in metrics.json "
                        "(noise_calibration); instead of --noise (default: none, --noise sets "
                        "the noise)")
    d.add_argument("--method", choices=FIXED_METHODS, default=None,
                   help="fixed-step integrator (default rk4 without noise, euler with --noise, "
                        "which needs it)")
    d.add_argument("--gain-sd", type=nonnegative, default=0.0,
                   help="s.d. of the log of random per-neuron gains (dimensionless; 0: none)")
    d.add_argument("--threshold-sd", type=nonnegative, default=0.0,
                   help="s.d. of random per-neuron threshold shifts (units of u; 0: none)")
    d.add_argument("--weight-sd", type=nonnegative, default=0.0,
                   help="scale of a random symmetric interaction added to the energy "
                        "(units of u per unit rate; 0: none)")


def _add_cue_arguments(p: argparse.ArgumentParser) -> None:
    """The landmark cue near a wall or a landmark."""
    c = p.add_argument_group("landmark cue: an input at the true position's phase while the "
                             "agent is near a wall or a landmark")
    c.add_argument("--cue-strength", type=nonnegative, default=0.0,
                   help="peak input of the cue (units of u; 0: no cue)")
    c.add_argument("--cue-at", type=_point, default=None, metavar="X,Y",
                   help="landmark position (m); default none: the cue is on near the walls "
                        "(boundary encounters)")
    c.add_argument("--cue-walls", action="store_true",
                   help="with --cue-at: the arena's walls give the cue too (within "
                        "--cue-distance of a wall)")
    c.add_argument("--cue-distance", type=positive, default=0.1,
                   help="distance from a wall, or radius around --cue-at, within which the cue "
                        "is on (m)")


def _add_null_arguments(p: argparse.ArgumentParser) -> None:
    """The shuffled null of the grid-cell classification."""
    n = p.add_argument_group("grid-cell classification")
    n.add_argument("--shuffles", type=_count, default=20,
                   help="time-shifted maps per cell of the shuffled gridness null (its 95th "
                        f"percentile is the threshold; 0: the fixed {GRIDNESS_THRESHOLD:g})")
    n.add_argument("--min-shift", type=positive, default=None,
                   help=f"smallest time shift of the null (s; default min({NULL_MIN_SHIFT:g}, "
                        "duration / 4))")


def _check_run_memory(args, sheet: int, steps: float) -> None:
    """Refuse a run whose trajectory, recording and rate maps would not fit in memory, naming
    the option behind the largest term, before any of them is allocated."""
    panel = float(sheet if args.all_cells else args.cells)
    modules = float(len(args.modules) if args.modules else 1)
    # per sample: time, position, velocity (5), per module the phase velocity on the
    # half-sample grid and the decoded phase (10), and the panel's rates, all float64
    terms = {"--duration": 8.0 * float(steps) * (5.0 + 10.0 * modules + panel),
             "--bins": 8.0 * 4.0 * panel * modules * float(args.bins) ** 2}
    check_memory(max(terms, key=terms.get), sum(terms.values()))


def _trajectory(args, sheet: int) -> Trajectory:
    from ..spatial.agent import Box, Trajectory, generate_trajectory
    from ..spatial.gridcells.checks import _positive
    from ..spatial.positions import load_positions

    box = Box(_positive("--box", args.box))
    if args.trajectory in RECORDED:
        return _recorded(args, sheet)
    if args.trajectory is not None and _is_tracking(Path(args.trajectory)):
        return _tracking_file(args, sheet, box)
    if args.trajectory is None:
        duration = 600.0 if args.duration is None else _positive("--duration", args.duration)
        dt = 0.02 if args.dt is None else _positive("--dt", args.dt)
        _check_run_memory(args, sheet, duration / dt + 1.0)
        return generate_trajectory(duration, dt, box, seed=args.seed)
    path = Path(args.trajectory)
    if not path.exists():
        raise FileNotFoundError(f"--trajectory {path}: no such file")
    if path.is_dir():
        raise BadInput(f"--trajectory {path}: is a directory; expected a .npy or .npz file",
                       param="trajectory")
    if path.suffix.lower() == ".npy" and args.dt is None:
        raise BadInput(f"--trajectory {path}: a .npy file of positions needs --dt SECONDS",
                       param="trajectory")
    dt = None if args.dt is None else _positive("--dt", args.dt)
    try:
        traj = load_positions(path, dt, box)
    except BadInput as exc:
        raise BadInput(f"--trajectory {path}: {exc}", param="trajectory") from None
    if args.duration is not None:
        duration = _positive("--duration", args.duration)
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


def _tracking_file(args, sheet: int, box: Box) -> Trajectory:
    """A tracking file on the clock --dt (default its median interval), cleaned like the
    sessions; the report goes to ``args.tracking``."""
    from ..spatial.gridcells.checks import _positive
    from ..spatial.gridcells.recorded import file_trajectory

    path = Path(args.trajectory)
    if not path.exists():
        raise FileNotFoundError(f"--trajectory {path}: no such file")
    dt = None if args.dt is None else _positive("--dt", args.dt)
    duration = None if args.duration is None else _positive("--duration", args.duration)
    try:
        traj, report = file_trajectory(path, dt, box, arena=args.arena,
                                       max_speed=args.max_speed, duration=duration)
    except BadInput as exc:
        raise BadInput(f"--trajectory {path}: {exc}", param="trajectory") from None
    _check_run_memory(args, sheet, traj.steps)
    args.tracking = report.to_dict()
    return traj


def _recorded(args, sheet: int) -> Trajectory:
    """RatInABox's session named by ``--trajectory`` on the clock ``--dt`` (default 0.02 s);
    the tracking report goes to ``args.tracking``."""
    from ..spatial.gridcells.checks import _positive
    from ..spatial.gridcells.recorded import recorded_trajectory

    dt = 0.02 if args.dt is None else _positive("--dt", args.dt)
    duration = None if args.duration is None else _positive("--duration", args.duration)
    _check_run_memory(args, sheet, (duration or RECORDED[args.trajectory]) / dt + 1.0)
    traj, report = recorded_trajectory(args.trajectory, dt, duration=duration,
                                       max_speed=args.max_speed)
    if args.arena is None:
        args.arena = tuple(report.arena_m)
    args.tracking = report.to_dict()
    return traj


def _method(args) -> str:
    noisy = args.noise > 0 or args.diffusion is not None
    if args.noise > 0 and args.diffusion is not None:
        raise BadInput(f"--diffusion={args.diffusion:g}: sets the noise; leave out --noise")
    if args.method is None:
        return "euler" if noisy else "rk4"
    if noisy and args.method != "euler":
        raise BadInput(f"--method={args.method}: --noise > 0 needs --method euler "
                       "(Euler-Maruyama)")
    return args.method


def _noise(args, network, spacing: float) -> tuple:
    """``sigma`` (one, or one per module for --diffusion) and the calibration's numbers."""
    if args.diffusion is None:
        return args.noise, None
    from ..spatial.gridcells.calibration import module_diffusion, noise_for_diffusion

    spacings = args.modules or [spacing]
    ori = math.radians(args.orientation)
    sig = noise_for_diffusion(network, spacings, 1e-4 * args.diffusion, ori, args.tau_seconds)
    d = module_diffusion(network, spacings, sig, ori, args.tau_seconds)
    return sig, {"target_D_cm2_per_s": args.diffusion,
                 "definition": "D = tr(D_x): E|e(t)|^2 = 2 D t for the position error e of a "
                               "module alone (neurodyn.spatial.gridcells.calibration)",
                 "modules": [{"spacing_m": float(s), "sigma": float(x),
                              "theory_D_cm2_per_s": float(1e4 * dd)}
                             for s, x, dd in zip(spacings, sig, d, strict=True)]}


def _cues(args, box: Box) -> dict:
    if args.cue_strength == 0:
        if args.cue_at is not None:
            raise BadInput(f"--cue-strength=0: --cue-at {args.cue_at} needs a cue strength > 0")
        return {}
    if args.cue_at is None:
        return {"boundary_cue": (args.cue_strength, args.cue_distance)}
    if not bool(box.contains(np.array([args.cue_at]))[0]):
        raise BadInput(f"--cue-at={args.cue_at[0]:g},{args.cue_at[1]:g}: the landmark must lie "
                       f"inside the box [0, {box.size:g}] x [0, {box.size:g}] m")
    walls = {"boundary_cue": (args.cue_strength, args.cue_distance)} if args.cue_walls else {}
    return {"landmark_cue": (args.cue_strength, *args.cue_at, args.cue_distance), **walls}


def _grid_cells(args) -> dict:
    from ..dynamics.heterogeneity import Heterogeneity, heterogeneous
    from ..spatial.gridcells.checks import _check_network, _positive
    from ..spatial.gridcells.files import write_grid_cells
    from ..spatial.gridcells.results import null_shift
    from ..spatial.gridcells.run import check_grid_cells, run_grid_cells

    method = _method(args)
    if args.trajectory in RECORDED:
        check_installed("ratinabox", "data", f"--trajectory {args.trajectory}")
    network = load_network(args.model)
    sheet = _check_network(network, args.lattice).size
    traj = _trajectory(args, sheet)
    _check_run_memory(args, sheet, traj.steps)
    cues = _cues(args, traj.box)
    if args.shuffles > 0:
        try:
            null_shift(traj, args.min_shift)
        except ValueError:
            duration = float(traj.t[-1] - traj.t[0])
            given = f"{args.min_shift:g}" if args.min_shift is not None else \
                f"{min(NULL_MIN_SHIFT, duration / 4):g} (the default)"
            raise BadInput(f"--min-shift={given}: the run ({duration:g} s, {traj.steps} "
                           "samples) must last more than twice the smallest shift of the "
                           "shuffled null; give a shorter --min-shift, or --shuffles 0") from None
    disorder = Heterogeneity(args.gain_sd, args.threshold_sd, args.weight_sd, seed=args.seed)
    if args.gain_sd > 0 or args.threshold_sd > 0 or args.weight_sd > 0:
        network = heterogeneous(network, disorder)
    spacing = _positive("--spacing", args.spacing)
    noise, calibration = _noise(args, network, spacing)
    _nwb(args)  # refused before the run without pynwb
    options = dict(
        spacing=spacing, orientation=math.radians(args.orientation), modules=args.modules,
        tau_seconds=args.tau_seconds, dt_network=args.dt_network, cells=args.cells,
        bins=args.bins, lattice=args.lattice, method=method, noise=noise,
        shuffles=args.shuffles, min_shift=args.min_shift, arena=args.arena, seed=args.seed,
        all_cells=args.all_cells, **cues)
    # refused before --out is claimed, a checkpoint of another run there included
    check_grid_cells(network, traj, checkpoint=None if args.fresh else
                     Path(args.out) / CHECKPOINT, **options)
    with open_run(args, "grid-cells") as run:
        state = run.path(CHECKPOINT)
        if args.fresh and state.exists():
            state.unlink()
        result = run_grid_cells(network, traj, progress=None, device=args.device,
                                checkpoint=state, checkpoint_every=60.0 * args.checkpoint_every,
                                **options)
        result.config["heterogeneity"] = disorder.to_dict()
        if getattr(args, "tracking", None) is not None:
            result.config["trajectory"] = args.tracking["source"]
            result.metrics["tracking"] = args.tracking
        if calibration is not None:
            result.metrics["noise_calibration"] = calibration
        write_grid_cells(result, run.out)
        # one config.json shape: the run's resolved parameters next to the command line's
        run.config = {"arguments": args_config(args), **result.config}
        write_json(run.record(), run.path("config.json"))
        state.unlink(missing_ok=True)
        _nwb(args, run.out)
    return result.metrics


def _nwb(args, out=None) -> None:
    """With ``--nwb``: refuse the run without pynwb (``out`` None), or write
    ``OUT/activity.nwb``."""
    if args.nwb and out is None:
        check_installed("pynwb", "nwb", "--nwb (an NWB file of the run)")
    elif args.nwb:
        from ..interop import export_run_nwb

        export_run_nwb(out)
