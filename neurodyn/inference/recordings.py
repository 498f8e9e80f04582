r"""Recorded activity in: the files and objects people have, checked before anything is written.

:func:`read_activity` reads one recording into ``counts`` ``(T, cells)`` (spike counts per bin;
NaN where a cell was not observed), ``dt`` (s) and, when the file has one, the covariate
(``heading`` ``(T,)`` in radians, or ``position`` ``(T, 2)`` in metres):

- an ``.npz`` of counts: ``counts``, ``dt`` and optionally ``heading`` or ``position``; with
  ``epoch="wake"`` the keys are ``wake_counts``, ``wake_heading``, ... (``dt`` or
  ``wake_dt``), so one file can hold a session's epochs (wake with the heading, sleep without);
- an ``.npz`` of spike times: ``spike_times`` (s) and ``spike_cells`` (each spike's cell, 0 ..
  cells - 1), binned by the library in bins of ``bin`` seconds, with a tracking series
  ``tracking_time`` (s) and ``heading`` or ``position`` sampled at those times (interpolated to
  the bins' centres; the heading through its unwrapped angle); without tracking, the bins span
  ``start`` .. ``stop`` (keys) or the spikes;
- an NWB file (pynwb, the ``nwb`` extra): the ``units`` table's spike times and the first
  ``SpatialSeries`` of the processing module ``behavior`` -- a ``Position`` (two columns, m) or
  a ``CompassDirection`` (one column; radians, or degrees where its ``unit`` says so) -- binned
  at ``bin`` seconds (default: the series' median sampling interval);
- pynapple objects (:func:`from_pynapple`, the ``pynapple`` extra): a ``TsGroup`` of units, a
  ``Tsd`` (heading) or ``TsdFrame`` (position) and an ``IntervalSet``.

Every reader ends in :func:`checked`, which refuses, with one line naming the field, what would
otherwise be read wrongly: a heading outside ``[-2 pi, 2 pi]`` or jumping by about 360 (degrees),
``dt`` above 1 s (milliseconds), a ``.npy`` where named arrays are needed, non-finite or
negative counts.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from _runkit import BadInput, check_memory
from _runkit.files import load_arrays

__all__ = ["read_activity", "checked", "bin_spikes", "from_pynapple", "NEEDED"]

#: what an activity file must hold, in the words of every refusal
NEEDED = ("an .npz with counts (T, cells) and dt (s), optionally heading (T,) in rad or "
          "position (T, 2) in m; or spike_times (s) and spike_cells with --bin")
#: the largest total count of a cell: float64 holds whole counts exactly up to 2**53
MAX_TOTAL_COUNT = 2.0**53


def _npz(path: Path, name: str) -> dict:
    data = load_arrays(path, name)  # size, checksum, no pickles: BadInput naming the file
    if not isinstance(data, dict):
        raise BadInput(f"{name}={str(path)!r} holds one array (.npy); {NEEDED} is expected")
    return data


def _check_counts(counts: np.ndarray, name: str) -> None:
    """Refuse counts that are empty, infinite, negative, or so large that their sums lose
    whole counts in float64 (and overflow int64)."""
    if counts.size == 0:
        raise BadInput(f"{name}: counts of shape {counts.shape} are empty; at least one bin of "
                       "one cell is needed")
    x = counts.astype(float)
    if np.isinf(x).any():
        t, cell = np.argwhere(np.isinf(x))[0]
        raise BadInput(f"{name}: counts[{t}, {cell}]={x[t, cell]:g}; counts must be finite "
                       "(NaN marks a cell not observed in a bin)")
    seen = np.isfinite(x)
    if np.any(x[seen] < 0):
        t, cell = np.argwhere(seen & (x < 0))[0]
        raise BadInput(f"{name}: counts[{t}, {cell}]={x[t, cell]:g}; counts must be >= 0 (NaN "
                       "marks a cell not observed in a bin)")
    totals = np.where(seen, x, 0.0).sum(axis=0)
    if np.any(totals > MAX_TOTAL_COUNT):
        cell = int(np.argmax(totals))
        raise BadInput(f"{name}: cell {cell} totals {totals[cell]:.3g} spikes, above "
                       f"{MAX_TOTAL_COUNT:.3g}; these are not counts")


def _check_heading(h: np.ndarray, name: str) -> None:
    top = float(np.max(np.abs(h)))
    if top > 2 * math.pi + 1e-6:
        raise BadInput(f"{name}: heading reaches {top:.4g}, outside [-2 pi, 2 pi]; give it in "
                       "radians (degrees? multiply by pi / 180)")
    jump = np.abs(np.diff(h))
    if jump.size and np.any(np.abs(jump - 360) < 30):
        raise BadInput(f"{name}: heading jumps by {jump.max():.4g}, near 360; give it in "
                       "radians")


def checked(data: dict, name: str = "--data") -> dict:
    """The arrays of a recording, checked and converted to float (module docstring).

    Parameters
    ----------
    data : dict
        ``counts``, ``dt`` and optionally ``heading`` or ``position``.
    name : str
        The option or argument named in errors.

    Returns
    -------
    dict
        ``counts`` (T, cells) float, ``dt`` float, and the covariate (float) if present.

    Raises
    ------
    BadInput
        One line naming the field.

    Examples
    --------
    >>> checked({"counts": np.ones((5, 2)), "dt": 0.01, "heading": np.zeros(5)})["dt"]
    0.01
    >>> checked({"counts": np.ones((5, 2)), "dt": 10.0})
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: --data: dt=10 s; a bin is at most 1 s (milliseconds? divide by 1000)
    """
    for key in ("counts", "dt"):
        if key not in data:
            raise BadInput(f"{name}: no array {key!r} (has {sorted(data)}); {NEEDED}")
    counts = np.asarray(data["counts"])
    if counts.dtype.kind not in "fiu" or counts.ndim != 2:
        raise BadInput(f"{name}: counts of shape {counts.shape} and type {counts.dtype}; "
                       "expected real numbers (T, cells)")
    _check_counts(counts, name)
    dt = np.asarray(data["dt"])
    if dt.shape != () or dt.dtype.kind not in "fiu" or not (np.isfinite(dt) and dt > 0):
        raise BadInput(f"{name}: dt={data['dt']!r}; expected one finite number > 0 (seconds)")
    if dt > 1:
        raise BadInput(f"{name}: dt={float(dt):g} s; a bin is at most 1 s (milliseconds? "
                       "divide by 1000)")
    out = {"counts": counts.astype(float), "dt": float(dt)}
    for key, shape in (("heading", (counts.shape[0],)), ("position", (counts.shape[0], 2))):
        if key in data:
            arr = np.asarray(data[key])
            if arr.shape != shape or arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
                raise BadInput(f"{name}: {key} of shape {arr.shape}; expected finite numbers "
                               f"of shape {shape}")
            out[key] = arr.astype(float)
    if "heading" in out:
        _check_heading(out["heading"], name)
    return out


def _interpolated_covariate(tt, values, centres, key):
    if key == "heading":
        ang = np.interp(centres, tt, np.unwrap(values))
        return np.mod(ang, 2 * np.pi)
    return np.stack([np.interp(centres, tt, values[:, k]) for k in range(values.shape[1])], 1)


def bin_spikes(times, cells, bin: float, start: float | None = None,
               stop: float | None = None, n_cells: int | None = None,
               name: str = "--data") -> tuple[np.ndarray, np.ndarray]:
    """Spike times binned into counts.

    Parameters
    ----------
    times : array_like, shape (spikes,)
        Spike times (s).
    cells : array_like of int, shape (spikes,)
        Each spike's cell, ``0 .. n_cells - 1``.
    bin : float
        Bin width (s).
    start, stop : float or None
        The span binned (None: the spikes').
    n_cells : int or None
        Cells (None: the largest index + 1).
    name : str
        Named in errors.

    Returns
    -------
    counts : ndarray, shape (T, cells)
    centres : ndarray, shape (T,)
        Bin centres (s).

    Examples
    --------
    >>> c, t = bin_spikes([0.01, 0.02, 0.25], [0, 1, 0], 0.1, start=0.0, stop=0.3)
    >>> c.tolist(), t.round(2).tolist()
    ([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]], [0.05, 0.15, 0.25])
    """
    t = np.asarray(times, dtype=float)
    c = np.asarray(cells)
    if t.ndim != 1 or c.shape != t.shape or not np.isfinite(t).all():
        raise BadInput(f"{name}: spike_times and spike_cells must be finite and of one length "
                       f"(shapes {t.shape}, {c.shape})")
    if c.dtype.kind not in "iu" or (c.size and c.min() < 0):
        raise BadInput(f"{name}: spike_cells must be integers >= 0 (type {c.dtype})")
    if not (isinstance(bin, (int, float)) and math.isfinite(bin) and 0 < bin <= 1):
        raise BadInput(f"--bin={bin!r}: a bin width in seconds, in (0, 1]")
    lo = float(t.min()) if start is None else float(start)
    hi = float(t.max()) + bin if stop is None else float(stop)
    n = int(c.max()) + 1 if n_cells is None else int(n_cells)
    T = int(math.ceil((hi - lo) / bin - 1e-9))
    if T < 1:
        raise BadInput(f"{name}: the span {lo:g} .. {hi:g} s holds no bin of {bin:g} s")
    check_memory(f"{name} binned at {bin:g} s", 8.0 * T * (n + 2))
    idx = np.floor((t - lo) / bin).astype(np.int64)
    keep = (idx >= 0) & (idx < T)
    counts = np.zeros((T, n))
    np.add.at(counts, (idx[keep], c[keep]), 1.0)
    return counts, lo + (np.arange(T) + 0.5) * bin


def _spike_file(data: dict, bin: float | None, name: str) -> dict:
    if bin is None:
        raise BadInput(f"{name}: spike times need a bin width: give --bin (s)")
    track = data.get("tracking_time")
    start = data.get("start", None if track is None else np.asarray(track)[0])
    stop = data.get("stop", None if track is None else np.asarray(track)[-1])
    counts, centres = bin_spikes(data["spike_times"], data["spike_cells"], bin,
                                 None if start is None else float(start),
                                 None if stop is None else float(stop),
                                 data.get("cells"), name)
    out = {"counts": counts, "dt": float(bin)}
    for key in ("heading", "position"):
        if key in data:
            if track is None:
                raise BadInput(f"{name}: {key} needs its sample times, tracking_time (s)")
            tt, v = np.asarray(track, dtype=float), np.asarray(data[key], dtype=float)
            if tt.ndim != 1 or v.shape[0] != tt.size or np.any(np.diff(tt) <= 0):
                raise BadInput(f"{name}: tracking_time must increase and match {key} "
                               f"(shapes {tt.shape}, {v.shape})")
            if key == "heading":
                _check_heading(v, name)
            out[key] = _interpolated_covariate(tt, v, centres, key)
    return out


def _epoch(data: dict, epoch: str, name: str) -> dict:
    pre = f"{epoch}_"
    picked = {k[len(pre):]: v for k, v in data.items() if k.startswith(pre)}
    if not picked:
        found = sorted({k.rsplit("_", 1)[0] for k in data if k.endswith("_counts")})
        raise BadInput(f"{name}: no epoch {epoch!r} ({pre}counts ...); the file has "
                       f"{found or 'no epochs'}")
    if "dt" not in picked and "dt" in data:
        picked["dt"] = data["dt"]
    return picked


def read_activity(path, name: str = "--data", epoch: str | None = None,
                  bin: float | None = None) -> dict:
    """A recording's counts, bin width and covariate, checked (module docstring).

    Parameters
    ----------
    path : str or Path
        ``.npz`` (counts or spike times) or ``.nwb``.
    name : str
        The option named in errors.
    epoch : str or None
        The epoch's key prefix in a file of several (``wake`` reads ``wake_counts``, ...).
    bin : float or None
        Bin width (s) for spike times.

    Returns
    -------
    dict
        ``counts`` (T, cells) float, ``dt`` float, ``heading`` (T,) or ``position`` (T, 2) or
        neither.

    Raises
    ------
    BadInput
        The file is missing, unreadable, not what is needed, or its values are out of range.
    """
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{name}={str(path)!r}: no such file")
    if path.suffix.lower() == ".nwb":
        return checked(_nwb(path, name, bin), name)
    data = _npz(path, name)
    if epoch:
        data = _epoch(data, epoch, name)
    elif "counts" not in data and "spike_times" not in data:
        epochs = sorted({k.rsplit("_", 1)[0] for k in data if k.endswith("_counts")})
        if epochs:
            raise BadInput(f"{name}={str(path)!r}: no 'counts'; the file holds the epochs "
                           f"{epochs}: choose one with --epoch")
    if "spike_times" in data:
        data = _spike_file(data, bin, name)
    return checked(data, name)


def _series_values(series) -> np.ndarray:
    values = np.asarray(series.data[:], dtype=float)
    if values.ndim == 1 or values.shape[1] == 1:
        values = values.reshape(-1)
        if "degree" in str(getattr(series, "unit", "")).lower():
            values = np.radians(values)
    return values


def _nwb(path: Path, name: str, bin: float | None) -> dict:
    try:
        import pynwb
    except ImportError:  # pragma: no cover - depends on the environment
        raise BadInput(f"{name}={str(path)!r}: reading NWB needs pynwb "
                       "(pip install 'neurodyn-flows[nwb]')") from None
    with pynwb.NWBHDF5IO(os.fspath(path), "r") as io:
        nwb = io.read()
        series = None
        if "behavior" in nwb.processing:
            for iface in nwb.processing["behavior"].data_interfaces.values():
                found = getattr(iface, "spatial_series", None)
                if found:
                    series = next(iter(found.values()))
                    break
        if series is None or nwb.units is None:
            raise BadInput(f"{name}={str(path)!r}: needs a units table and a Position or "
                           "CompassDirection SpatialSeries in the processing module 'behavior'")
        # the sizes the file declares, before anything is read: the series, and the counts
        # (bins, units) they are binned into, float64
        rows = float(len(series.timestamps))
        check_memory(f"{name}={str(path)!r}", 8.0 * (float(np.prod(series.data.shape)) + rows
                                                     * (2.0 + len(nwb.units))))
        t = np.asarray(series.timestamps[:], dtype=float)
        values = _series_values(series)
        spikes = [np.asarray(nwb.units["spike_times"][i]) for i in range(len(nwb.units))]
    width = float(np.median(np.diff(t))) if bin is None else float(bin)
    times = np.concatenate(spikes) if spikes else np.zeros(0)
    cells = np.concatenate([np.full(s.size, i) for i, s in enumerate(spikes)]).astype(int) \
        if spikes else np.zeros(0, int)
    counts, centres = bin_spikes(times, cells, width, t[0], t[-1] + width, len(spikes), name)
    key = "heading" if values.ndim == 1 else "position"
    if key == "heading":
        _check_heading(values, name)
    return {"counts": counts, "dt": np.float64(width),
            key: _interpolated_covariate(t, values, centres, key)}


def from_pynapple(units, feature=None, epochs=None, bin: float = 0.01) -> dict:
    """A pynapple session as :func:`~.core.fit_activity`'s inputs.

    Parameters
    ----------
    units : pynapple.TsGroup
        Spike times of the cells.
    feature : pynapple.Tsd or pynapple.TsdFrame or None
        Heading (rad; a ``Tsd``) or position (m; a ``TsdFrame`` of two columns), sampled at
        its own times; interpolated to the bins' centres.
    epochs : pynapple.IntervalSet or None
        The epoch binned (None: the feature's time support, or the spikes'). Only its first
        interval to its last is binned; bins outside every interval are NaN (not observed).
    bin : float
        Bin width (s).

    Returns
    -------
    dict
        ``counts``, ``dt`` and ``heading`` or ``position``: pass them as
        ``fit_activity(d["counts"], d["dt"], "ring", d.get("heading"))``.

    Raises
    ------
    BadInput
        Objects that are not pynapple's, or values out of range.
    """
    try:
        import pynapple as nap
    except ImportError:  # pragma: no cover - depends on the environment
        raise BadInput("from_pynapple needs pynapple (pip install 'neurodyn-flows[pynapple]')"
                       ) from None
    if not isinstance(units, nap.TsGroup):
        raise BadInput(f"units: a pynapple TsGroup is needed, not {type(units).__name__}")
    if epochs is None:
        epochs = feature.time_support if feature is not None else units.time_support
    starts, ends = np.asarray(epochs.start, float), np.asarray(epochs.end, float)
    keys = list(units.keys())
    times = np.concatenate([np.asarray(units[k].t, float) for k in keys])
    cells = np.concatenate([np.full(len(units[k].t), i) for i, k in enumerate(keys)])
    counts, centres = bin_spikes(times, cells.astype(int), bin, starts.min(), ends.max(),
                                 len(keys), "units")
    inside = np.zeros(centres.size, bool)
    for a, b in zip(starts, ends, strict=True):
        inside |= (centres >= a) & (centres < b)
    counts[~inside] = np.nan
    out = {"counts": counts, "dt": float(bin)}
    if feature is not None:
        values = np.asarray(feature.values, float)
        key = "heading" if values.ndim == 1 else "position"
        out[key] = _interpolated_covariate(np.asarray(feature.t, float), values, centres, key)
    return checked(out, "units")
