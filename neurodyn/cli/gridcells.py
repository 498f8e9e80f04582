"""``neurodyn grid-cells``: path integration in a box by a torus model; rate maps, gridness."""

from __future__ import annotations

import argparse
import math

from _runkit import BadInput, check_int

from ._common import (
    DEFAULT_DT_NETWORK,
    FIXED_METHODS,
    GRIDNESS_THRESHOLD,
    LATTICES,
    NULL_MIN_SHIFT,
    add_device_argument,
    args_config,
    command,
    config_of,
    nonnegative,
    positive,
    positive_int,
    seed_arg,
)

__all__ = ["register"]

#: the checkpoint of a long run in --out: :data:`neurodyn.runs.gridcells.CHECKPOINT`
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

    The parser's ``func`` takes the parsed arguments as a
    :class:`~neurodyn.runs.gridcells.GridCellsRunConfig`, runs it with
    :func:`~neurodyn.runs.gridcells.grid_cells_run` and returns the metrics dict.
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


def _grid_cells(args) -> dict:
    from ..runs.gridcells import GridCellsRunConfig, grid_cells_run

    config = config_of(GridCellsRunConfig, args)
    return grid_cells_run(config, args.out, fresh=args.fresh, arguments=args_config(args))
