"""Interoperability: RatInABox trajectories in, NWB files out.

RatInABox (George et al. 2024) records an agent's motion in ``Agent.history``, a dict of lists
with ``"t"`` (s) and ``"pos"`` (m, one ``(2,)`` entry per step) among others;
``Agent.get_history_arrays()`` returns the same keys as arrays, which is what ``np.savez``
writes. :func:`from_ratinabox` accepts the agent itself, either dict, or a ``.npz`` / ``.json``
file of it, and returns a :class:`neurodyn.spatial.agent.Trajectory` (the box is the
environment's extent when the agent is given); :func:`neurodyn.spatial.positions.load_positions`
reads the same files (:func:`~neurodyn.spatial.positions.ratinabox_arrays` reads the history), so
``neurodyn grid-cells --trajectory history.npz`` runs a RatInABox trajectory unchanged.

NWB (via ``pynwb``, the optional extra ``nwb``): :func:`write_nwb` stores positions as a
``SpatialSeries`` in ``Position`` (processing module ``behavior``), population activity as a
``TimeSeries`` ``rates`` (steps, cells) and rate maps as ``Images`` ``rate_maps`` (one
``GrayscaleImage`` per cell, NaN where unvisited), both in the processing module ``misc``
(``grid_cells`` in files of earlier versions), with a subject and keywords, as NWB's best
practices ask (``nwbinspector`` finds nothing critical or best-practice in them);
:func:`read_nwb` reads them back with pynwb.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone

import numpy as np

from _runkit import BadInput
from _runkit.files import load_arrays

from .spatial.agent import Box, Trajectory
from .spatial.positions import load_positions, ratinabox_arrays

__all__ = ["ratinabox_arrays", "from_ratinabox", "write_nwb", "read_nwb", "export_run_nwb",
           "SIMULATED_SUBJECT"]


def from_ratinabox(source, box: Box | None = None) -> Trajectory:
    """A RatInABox trajectory as a :class:`~neurodyn.spatial.agent.Trajectory`.

    Parameters
    ----------
    source : Agent or dict or str or Path
        See :func:`ratinabox_arrays`.
    box : Box or None
        The arena; default the agent's environment extent when an Agent is given (it must be a
        square with a corner at the origin), else ``Box(1.0)`` (RatInABox's default).

    Returns
    -------
    Trajectory (times as recorded: uniformly spaced, typically from ``dt``).

    Examples
    --------
    >>> hist = {"t": [0.02, 0.04, 0.06], "pos": [[0.5, 0.5], [0.51, 0.5], [0.52, 0.49]]}
    >>> from_ratinabox(hist).position.shape
    (3, 2)
    """
    t, pos = ratinabox_arrays(source)
    if box is None:
        env = getattr(source, "Environment", None)
        extent = getattr(env, "extent", None)
        if extent is not None:
            x0, x1, y0, y1 = (float(v) for v in extent)
            if x0 != 0 or y0 != 0 or abs((x1 - x0) - (y1 - y0)) > 1e-12:
                raise BadInput(f"Environment.extent={list(extent)}: only square boxes with a "
                               "corner at the origin are supported", param="Environment.extent")
            box = Box(x1)
        else:
            box = Box(1.0)
    return load_positions(pos, None, box, times=t)


def _pynwb():
    try:
        import pynwb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("NWB export needs pynwb: pip install 'neurodyn-flows[nwb]'") from exc
    return pynwb


#: The subject of a simulated file, which NWB and its inspector require: no animal was
#: recorded; the model stands for a rat (its agent moves like one: a rat's trajectory, recorded
#: or simulated by RatInABox), so the species is the rat's, the sex unknown ("U") and the age
#: an open interval ("P0D/": unknown).
SIMULATED_SUBJECT = {
    "subject_id": "simulated-agent", "species": "Rattus norvegicus", "sex": "U", "age": "P0D/",
    "description": "simulated: no animal was recorded; the model stands for a rat",
}


def write_nwb(path, t, position, rates=None, rate_maps=None, x_edges=None,
              description: str = "neurodyn simulation", session_start_time=None,
              identifier: str | None = None, subject: dict | None = None,
              keywords: tuple[str, ...] = ("simulation", "continuous attractor network",
                                           "grid cells", "path integration"),
              experimenter: str | None = None, institution: str | None = None) -> str:
    """Write positions, population activity and rate maps to an NWB file.

    The file follows NWB's best practices as ``nwbinspector`` checks them: a subject
    (:data:`SIMULATED_SUBJECT` unless given), units ``meters``, a sampling rate instead of
    timestamps when the times are regular (to 1e-9 of a step), and the schema's module names
    (``behavior`` for the position, ``misc`` for the population).

    Parameters
    ----------
    path : str or Path
        Output ``.nwb`` file (overwritten).
    t : array_like, shape (steps,)
        Times in seconds.
    position : array_like or None, shape (steps, 2)
        Positions in metres (None: no agent, e.g. a simulation of the network alone).
    rates : array_like or None, shape (steps, cells) or (steps, runs, cells)
        Rates.
    rate_maps : array_like or None, shape (cells, bins, bins)
        Rate maps (``[cell, iy, ix]``).
    x_edges : array_like or None, shape (bins + 1,)
        Bin edges in metres (recorded in the description).
    description : str
        Session description.
    session_start_time : datetime.datetime or None
        A timezone-aware datetime (default: now, when the simulated session is written).
    identifier : str or None
        The file's identifier (default: a UUID derived from the data).
    subject : dict or None
        Keyword arguments of ``pynwb.file.Subject`` (default :data:`SIMULATED_SUBJECT`).
    keywords : tuple of str
        The file's keywords.
    experimenter, institution : str or None
        Who ran the simulation, and where ("Last, First"); left out when None (the inspector
        then suggests them: only the user knows).

    Returns
    -------
    str : the path written.
    """
    pynwb = _pynwb()
    from pynwb.behavior import Position, SpatialSeries
    from pynwb.file import Subject

    t = np.asarray(t, dtype=float)
    position = None if position is None else np.asarray(position, dtype=float)
    if t.ndim != 1 or (position is not None and position.shape != (t.size, 2)):
        raise BadInput(f"position: shape {position.shape}; expected ({t.size}, 2) like t",
                       param="position")
    start = session_start_time or datetime.now(timezone.utc).replace(microsecond=0)
    if identifier is None:
        total = (position if position is not None else np.asarray(rates, dtype=float)).sum()
        identifier = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{t.size}:{total:.17g}"))
    nwb = pynwb.NWBFile(session_description=description, identifier=identifier,
                        session_start_time=start, keywords=list(keywords),
                        experiment_description=f"{description}: positions of the agent, the "
                        "network's rates and their rate maps (neurodyn)",
                        subject=Subject(**(SIMULATED_SUBJECT if subject is None else subject)),
                        experimenter=experimenter, institution=institution)
    if position is not None:
        behavior = nwb.create_processing_module("behavior", "agent position in the box")
        pos = Position(name="Position")
        pos.add_spatial_series(SpatialSeries(
            name="position", data=position, unit="meters", **_times(t),
            description="position of the agent in the box, x and y (steps, 2)",
            reference_frame="(0, 0) is the box corner; x, y in metres"))
        behavior.add(pos)
    mod = nwb.create_processing_module("misc", "simulated population activity")
    if rates is not None:
        rates = np.asarray(rates, dtype=float)
        if rates.ndim not in (2, 3) or rates.shape[0] != t.size:
            raise BadInput(f"rates: shape {rates.shape}; expected ({t.size}, cells) or "
                           f"({t.size}, runs, cells)", param="rates")
        shape = "(steps, cells)" if rates.ndim == 2 else "(steps, runs, cells)"
        mod.add(pynwb.TimeSeries(name="rates", data=rates, unit="rate (a.u.)", **_times(t),
                                 description=f"network rates r = phi(u), {shape}"))
    if rate_maps is not None:
        mod.add(_rate_images(rate_maps, x_edges))
    with pynwb.NWBHDF5IO(os.fspath(path), "w") as io:
        io.write(nwb)
    return os.fspath(path)


def _times(t: np.ndarray) -> dict:
    """``starting_time`` and ``rate`` when ``t`` is regular to 1e-9 of a step (what NWB
    prefers), else ``timestamps``."""
    if t.size > 2:
        step = (t[-1] - t[0]) / (t.size - 1)
        if step > 0 and np.abs(t[0] + np.arange(t.size) * step - t).max() <= 1e-9 * step:
            return {"starting_time": float(t[0]), "rate": float(1.0 / step)}
    return {"timestamps": t}


def _rate_images(rate_maps, x_edges):
    """The rate maps as ``Images``, one ``GrayscaleImage`` per cell."""
    from pynwb.base import Images
    from pynwb.image import GrayscaleImage

    maps = np.asarray(rate_maps, dtype=float)
    if maps.ndim != 3:
        raise BadInput(f"rate_maps: shape {maps.shape}; expected (cells, bins, bins)",
                       param="rate_maps")
    edges = "" if x_edges is None else f"; bin edges (m): {np.asarray(x_edges).tolist()}"
    images = [GrayscaleImage(name=f"cell_{i:04d}", data=m,
                             description="mean rate per bin [iy, ix], NaN unvisited")
              for i, m in enumerate(maps)]
    return Images(name="rate_maps", images=images,
                  description=f"rate maps, one image per cell{edges}")


def _read_times(series) -> np.ndarray:
    """A series' times: its timestamps, or ``starting_time + i / rate``."""
    if series.timestamps is not None:
        return np.asarray(series.timestamps[:])
    n = len(series.data)
    return series.starting_time + np.arange(n) * (1.0 / series.rate)


def read_nwb(path) -> dict:
    """Read back what :func:`write_nwb` wrote, with pynwb.

    Returns
    -------
    dict with ``t`` and, when present, ``position``, ``rates`` and ``rate_maps`` (arrays).
    """
    pynwb = _pynwb()
    out = {}
    with pynwb.NWBHDF5IO(os.fspath(path), "r") as io:
        nwb = io.read()
        mod = nwb.processing["misc" if "misc" in nwb.processing else "grid_cells"]  # or older
        if "behavior" in nwb.processing:
            ss = nwb.processing["behavior"]["Position"].spatial_series["position"]
            out["t"] = _read_times(ss)
            out["position"] = np.asarray(ss.data[:])
        if "rates" in mod.data_interfaces:
            out["t"] = _read_times(mod["rates"])
            out["rates"] = np.asarray(mod["rates"].data[:])
        if "rate_maps" in mod.data_interfaces:
            imgs = mod["rate_maps"].images
            out["rate_maps"] = np.stack([np.asarray(imgs[k].data[:]) for k in sorted(imgs)])
    return out


def export_run_nwb(out, tau_seconds: float = 0.01) -> str:
    """Write ``OUT/activity.nwb`` (:func:`write_nwb`) from the arrays of a run directory.

    A grid-cell run (``track.npz``, ``ratemaps.npz``): the agent's positions and the cells'
    rate maps. A simulation (``trajectory.npz``): the rates of every run, ``(steps, runs,
    cells)`` (a torus sheet flattened row by row), at times ``t * tau_seconds``.

    Parameters
    ----------
    out : str or Path
        The run directory.
    tau_seconds : float
        Seconds per unit of network time (a simulation's times are in tau).

    Returns
    -------
    str
        The path written.
    """
    from pathlib import Path

    out = Path(out)
    if (out / "track.npz").exists():  # read as any array file: size and checksum checked
        track = load_arrays(out / "track.npz", "out")
        maps = load_arrays(out / "ratemaps.npz", "out")
        return write_nwb(out / "activity.nwb", track["t"], track["position"],
                         rate_maps=maps["maps"], x_edges=maps["x_edges"],
                         description="neurodyn grid-cell path integration")
    run = load_arrays(out / "trajectory.npz", "out")
    rates = run["r"].reshape(run["r"].shape[0], run["r"].shape[1], -1)
    return write_nwb(out / "activity.nwb", run["t"] * tau_seconds, None, rates=rates,
                     description="neurodyn simulation of a fitted attractor network",
                     keywords=("simulation", "continuous attractor network"))
