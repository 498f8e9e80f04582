"""``neurodyn grid-cells``: path integration in a box by a torus model; rate maps, gridness."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from .. import agent as agent_mod
from ..agent import Box, Trajectory
from ..geometry import LATTICES
from ..gridcells import (
    DEFAULT_DT_NETWORK,
    _check_network,
    _positive,
    run_grid_cells,
    write_grid_cells,
)
from ..io import write_json
from ._common import args_config, command, load_network, open_run, positive, positive_int

__all__ = ["register"]


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


def register(sub) -> argparse.ArgumentParser:
    """Add the ``grid-cells`` sub-command.

    ``neurodyn grid-cells --model DIR --out OUT [--duration SECONDS] [--box METRES]
    [--spacing METRES] [--trajectory positions.npy] [--dt SECONDS] [--seed S]
    [--modules S1,S2,...] [--cells C] [--orientation DEG] [--bins B] [--lattice L]
    [--dt-network TAU] [--tau-seconds S] [--all-cells]``

    The parser's ``func`` takes the parsed arguments, runs
    :func:`~neurodyn.gridcells.run_grid_cells`, writes the outputs with
    :func:`~neurodyn.gridcells.write_grid_cells` and returns the metrics dict.
    """
    p = sub.add_parser(
        "grid-cells", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="path integration in a box by a torus model; rate maps, gridness",
        description="Path integration of an agent's trajectory (generated, or positions from a "
                    "file) by a fitted torus model; writes track.npz, ratemaps.npz, "
                    "metrics.json, config.json and figures into --out.")
    p.add_argument("--model", required=True, help="directory holding model.pt (fit torus)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds of generated exploration (default 600); with --trajectory, "
                        "keep only the first SECONDS")
    p.add_argument("--box", type=float, default=1.0, help="side of the square box (m)")
    p.add_argument("--spacing", type=float, default=0.5, help="grid spacing (m)")
    p.add_argument("--trajectory", default=None,
                   help="positions (steps, 2) in metres: FILE.npy sampled every --dt, or "
                        "FILE.npz with 'position' (and optionally 't')")
    p.add_argument("--dt", type=float, default=None,
                   help="sampling interval of the trajectory (s; default 0.02 for generated "
                        "exploration, required for a .npy file)")
    p.add_argument("--seed", type=int, default=0, help="seeds the trajectory and the panel")
    p.add_argument("--modules", type=_float_list, default=None,
                   help="comma-separated spacings (m) of several modules, e.g. 0.5,0.7,0.98 "
                        "(overrides --spacing)")
    p.add_argument("--cells", type=positive_int, default=64,
                   help="size of the random panel of cells")
    p.add_argument("--orientation", type=float, default=0.0,
                   help="grid orientation: angle of k1 (degrees)")
    p.add_argument("--bins", type=positive_int, default=20, help="rate-map bins per side")
    p.add_argument("--lattice", default=None,
                   help=f"expected lattice of the model, one of {LATTICES} (checked)")
    p.add_argument("--dt-network", type=float, default=None,
                   help=f"largest network step in tau (default {DEFAULT_DT_NETWORK})")
    p.add_argument("--tau-seconds", type=positive, default=0.01, help="tau in seconds")
    p.add_argument("--all-cells", action="store_true",
                   help="also bin every neuron of the sheet (ratemaps.npz: all_maps)")
    p.set_defaults(func=command(_grid_cells))
    return p


def _trajectory(args) -> Trajectory:
    box = Box(_positive("--box", args.box))
    if args.trajectory is None:
        duration = 600.0 if args.duration is None else _positive("--duration", args.duration)
        dt = 0.02 if args.dt is None else _positive("--dt", args.dt)
        return agent_mod.generate_trajectory(duration, dt, box, seed=args.seed)
    path = Path(args.trajectory)
    if not path.exists():
        raise FileNotFoundError(f"--trajectory {path}: no such file")
    if path.is_dir():
        raise ValueError(f"--trajectory {path}: is a directory; expected a .npy or .npz file")
    if path.suffix.lower() == ".npy" and args.dt is None:
        raise ValueError(f"--trajectory {path}: a .npy file of positions needs --dt SECONDS")
    dt = None if args.dt is None else _positive("--dt", args.dt)
    try:
        traj = agent_mod.load_positions(path, dt, box)
    except TypeError as exc:
        raise ValueError(f"--trajectory {path}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"--trajectory {path}: {exc}") from None
    if args.duration is not None:
        duration = _positive("--duration", args.duration)
        steps = int(round(duration / traj.dt)) + 1
        if steps > traj.steps:
            raise ValueError(f"--duration {duration}: longer than the trajectory "
                             f"({(traj.steps - 1) * traj.dt:g} s in {path})")
        traj = Trajectory(traj.t[:steps], traj.position[:steps], traj.velocity[:steps],
                          traj.dt, traj.box)
    return traj


def _grid_cells(args) -> dict:
    network = load_network(args.model)
    _check_network(network, args.lattice)
    traj = _trajectory(args)
    result = run_grid_cells(
        network, traj, spacing=_positive("--spacing", args.spacing),
        orientation=math.radians(args.orientation), modules=args.modules,
        tau_seconds=args.tau_seconds, dt_network=args.dt_network, cells=args.cells,
        bins=args.bins, seed=args.seed, progress_bar=None, all_cells=args.all_cells,
        lattice=args.lattice)
    with open_run(args, "grid-cells") as run:
        write_grid_cells(result, run.out)
        # one config.json shape: the run's resolved parameters next to the command line's
        run.config = {"arguments": args_config(args), **result.config}
        write_json(run.record(), run.path("config.json"))
    return result.metrics
