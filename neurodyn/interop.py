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
``GrayscaleImage`` per cell, NaN where unvisited), both in the processing module
``grid_cells``; :func:`read_nwb` reads them back with pynwb.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone

import numpy as np

from .spatial.agent import Box, Trajectory
from .spatial.positions import load_positions, ratinabox_arrays

__all__ = ["ratinabox_arrays", "from_ratinabox", "write_nwb", "read_nwb"]


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
                raise ValueError(f"Environment.extent={list(extent)}: only square boxes with a "
                                 "corner at the origin are supported")
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


def write_nwb(path, t, position, rates=None, rate_maps=None, x_edges=None,
              description: str = "neurodyn simulation", session_start_time=None,
              identifier: str | None = None) -> str:
    """Write positions, population activity and rate maps to an NWB file.

    Parameters
    ----------
    path : str or Path
        Output ``.nwb`` file (overwritten).
    t : array_like, shape (steps,)
        Times in seconds.
    position : array_like, shape (steps, 2)
        Positions in metres.
    rates : array_like or None, shape (steps, cells)
        Rates.
    rate_maps : array_like or None, shape (cells, bins, bins)
        Rate maps (``[cell, iy, ix]``).
    x_edges : array_like or None, shape (bins + 1,)
        Bin edges in metres (recorded in the description).
    description : str
        Session description.
    session_start_time : datetime.datetime or None
        A timezone-aware datetime (default: the Unix epoch, so that the same inputs give the same
        file contents).
    identifier : str or None
        The file's identifier (default: a UUID derived from the data).

    Returns
    -------
    str : the path written.
    """
    pynwb = _pynwb()
    from pynwb.base import Images
    from pynwb.behavior import Position, SpatialSeries
    from pynwb.image import GrayscaleImage

    t = np.asarray(t, dtype=float)
    position = np.asarray(position, dtype=float)
    if t.ndim != 1 or position.shape != (t.size, 2):
        raise ValueError(f"position: shape {position.shape}; expected ({t.size}, 2) like t")
    start = session_start_time or datetime(1970, 1, 1, tzinfo=timezone.utc)
    if identifier is None:
        identifier = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{t.size}:{position.sum():.17g}"))
    nwb = pynwb.NWBFile(session_description=description, identifier=identifier,
                        session_start_time=start)
    behavior = nwb.create_processing_module("behavior", "agent position in the box")
    pos = Position(name="Position")
    pos.add_spatial_series(SpatialSeries(
        name="position", data=position, timestamps=t, unit="m",
        reference_frame="(0, 0) is the box corner; x, y in metres"))
    behavior.add(pos)
    mod = nwb.create_processing_module("grid_cells", "simulated population activity")
    if rates is not None:
        rates = np.asarray(rates, dtype=float)
        if rates.ndim != 2 or rates.shape[0] != t.size:
            raise ValueError(f"rates: shape {rates.shape}; expected ({t.size}, cells)")
        mod.add(pynwb.TimeSeries(name="rates", data=rates, timestamps=t, unit="rate (a.u.)",
                                 description="network rates r = phi(u), (steps, cells)"))
    if rate_maps is not None:
        maps = np.asarray(rate_maps, dtype=float)
        if maps.ndim != 3:
            raise ValueError(f"rate_maps: shape {maps.shape}; expected (cells, bins, bins)")
        edges = "" if x_edges is None else f"; bin edges (m): {np.asarray(x_edges).tolist()}"
        images = [GrayscaleImage(name=f"cell_{i:04d}", data=m,
                                 description="mean rate per bin [iy, ix], NaN unvisited")
                  for i, m in enumerate(maps)]
        mod.add(Images(name="rate_maps", images=images,
                       description=f"rate maps, one image per cell{edges}"))
    with pynwb.NWBHDF5IO(os.fspath(path), "w") as io:
        io.write(nwb)
    return os.fspath(path)


def read_nwb(path) -> dict:
    """Read back what :func:`write_nwb` wrote, with pynwb.

    Returns
    -------
    dict with ``t``, ``position`` and, when present, ``rates`` and ``rate_maps`` (arrays).
    """
    pynwb = _pynwb()
    out = {}
    with pynwb.NWBHDF5IO(os.fspath(path), "r") as io:
        nwb = io.read()
        ss = nwb.processing["behavior"]["Position"].spatial_series["position"]
        out["t"] = np.asarray(ss.timestamps[:])
        out["position"] = np.asarray(ss.data[:])
        mod = nwb.processing["grid_cells"]
        if "rates" in mod.data_interfaces:
            out["rates"] = np.asarray(mod["rates"].data[:])
        if "rate_maps" in mod.data_interfaces:
            imgs = mod["rate_maps"].images
            out["rate_maps"] = np.stack([np.asarray(imgs[k].data[:]) for k in sorted(imgs)])
    return out
