r"""Files of ``neurodyn fit-activity`` and ``neurodyn decode``: recorded activity in, cells out.

Activity (``--data``):

- ``.npz`` with ``counts`` ``(T, cells)`` (spike counts or rates x dt per bin; NaN where a cell
  was not observed), ``dt`` (s) and optionally ``heading`` ``(T,)`` (rad) or ``position``
  ``(T, 2)`` (m);
- ``.nwb`` (pynwb, the optional extra ``nwb``): the ``units`` table's spike times counted in the
  bins of the first ``SpatialSeries`` found in the processing module ``behavior`` (its
  timestamps' median spacing is ``dt``); a series of one column is the heading, of two the
  position.

The model folder holds ``model.pt`` (the learned network, :func:`neurodyn.io.save_model`) and
``cells.npz``: ``geometry``, ``dt``, ``preferred``, ``gain``, ``baseline``, the profile's
coefficients (``profile_re``, ``profile_im``) and, for a torus, ``spacing`` and
``orientation``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from _runkit import BadInput, check_memory
from _runkit.files import atomic_savez, load_arrays

from .cells import RingCells
from .decode import decode_ml
from .torus import GRID as TORUS_GRID
from .torus import TorusCells

__all__ = ["read_activity", "save_cells", "load_cells", "decode_file"]


def _npz(path: Path, name: str) -> dict:
    data = load_arrays(path, name)  # size, checksum, no pickles: BadInput naming the file
    if not isinstance(data, dict):
        raise BadInput(f"{name}={str(path)!r} holds one array (.npy); an .npz of named arrays "
                       "is expected")
    return data


def _nwb(path: Path, name: str) -> dict:
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
            raise BadInput(f"{name}={str(path)!r}: needs a units table and a SpatialSeries in "
                           "the processing module 'behavior'")
        # the sizes the file declares, before anything is read: the series, and the counts
        # (bins, units) they are binned into, float64
        bins = float(len(series.timestamps))
        check_memory(f"{name}={str(path)!r}", 8.0 * (float(np.prod(series.data.shape)) + bins
                                                     * (2.0 + len(nwb.units))))
        t = np.asarray(series.timestamps[:], dtype=float)
        cov = np.asarray(series.data[:], dtype=float)
        spikes = [np.asarray(nwb.units["spike_times"][i]) for i in range(len(nwb.units))]
    dt = float(np.median(np.diff(t)))
    edges = np.r_[t, t[-1] + dt]
    counts = np.stack([np.histogram(s, edges)[0] for s in spikes], axis=1).astype(float)
    out = {"counts": counts, "dt": np.float64(dt)}
    out["heading" if cov.ndim == 1 or cov.shape[1] == 1 else "position"] = cov.reshape(
        len(t), -1).squeeze()
    return out


def read_activity(path, name: str = "--data") -> dict:
    """The activity file's arrays, checked: ``counts``, ``dt`` and the covariate if present.

    Parameters
    ----------
    path : str or Path
        ``.npz`` or ``.nwb`` (module docstring).
    name : str
        The option named in errors.

    Returns
    -------
    dict
        ``counts`` (T, cells) float, ``dt`` float, ``heading`` (T,) or ``position`` (T, 2) or
        neither.
    """
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{name}={str(path)!r}: no such file")
    data = _nwb(path, name) if path.suffix.lower() == ".nwb" else _npz(path, name)
    for key in ("counts", "dt"):
        if key not in data:
            raise BadInput(f"{name}={str(path)!r}: no array {key!r} (has {sorted(data)})")
    counts = np.asarray(data["counts"])
    if counts.dtype.kind not in "fiu" or counts.ndim != 2:
        raise BadInput(f"{name}: counts of shape {counts.shape} and type {counts.dtype}; "
                       "expected real numbers (T, cells)")
    _check_counts(counts, name)
    dt = np.asarray(data["dt"])
    if dt.shape != () or dt.dtype.kind not in "fiu" or not (np.isfinite(dt) and dt > 0):
        raise BadInput(f"{name}: dt={data['dt']!r}; expected one finite number > 0 (seconds)")
    out = {"counts": counts.astype(float), "dt": float(dt)}
    for key, shape in (("heading", (counts.shape[0],)), ("position", (counts.shape[0], 2))):
        if key in data:
            arr = np.asarray(data[key])
            if arr.shape != shape or arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
                raise BadInput(f"{name}: {key} of shape {arr.shape}; expected finite numbers "
                               f"of shape {shape}")
            out[key] = arr.astype(float)
    return out


#: the largest total count of a cell: float64 holds whole counts exactly up to 2**53
MAX_TOTAL_COUNT = 2.0**53


def _check_counts(counts: np.ndarray, name: str) -> None:
    """Refuse counts that are empty, negative, or so large that their sums lose whole counts
    in float64 (and overflow int64)."""
    if counts.size == 0:
        raise BadInput(f"{name}: counts of shape {counts.shape} are empty; at least one bin of "
                       "one cell is needed")
    x = counts.astype(float)
    seen = np.isfinite(x)
    if np.any(x[seen] < 0):
        t, cell = np.argwhere(seen & (x < 0))[0]
        raise BadInput(f"{name}: counts[{t}, {cell}]={x[t, cell]:g}; counts must be >= 0 (NaN "
                       "marks a cell not observed in a bin)")
    totals = np.where(seen, x, 0.0).sum(axis=0)
    if np.any(~np.isfinite(totals) | (totals > MAX_TOTAL_COUNT)):
        cell = int(np.argmax(np.where(np.isfinite(totals), totals, np.inf)))
        raise BadInput(f"{name}: cell {cell}'s counts add up to {totals[cell]:.3g}, beyond "
                       f"2**53 (sums of such counts overflow int64 and lose whole counts in "
                       "float64); these are not spike counts")


def save_cells(path, fit) -> None:
    """Write the fit's cells as ``cells.npz`` (atomically).

    Parameters
    ----------
    path : str or Path
        The file.
    fit : ActivityFit
        The fit.
    """
    c = fit.cells
    arrays = {"geometry": np.array(fit.geometry), "dt": np.float64(fit.dt),
              "preferred": c.preferred, "gain": c.gain, "baseline": c.baseline,
              "profile_re": np.real(c.profile), "profile_im": np.imag(c.profile),
              "used": fit.used}
    if fit.lattice:
        arrays.update(spacing=np.float64(fit.lattice["spacing"]),
                      orientation=np.float64(fit.lattice["orientation"]))
    atomic_savez(path, **arrays)


def load_cells(folder, name: str = "--model") -> tuple[object, dict]:
    """The cells of a model folder and its facts (``geometry``, ``dt``, ``used``, lattice).

    Parameters
    ----------
    folder : str or Path
        A folder holding ``cells.npz`` (or the file).
    name : str
        The option named in errors.

    Returns
    -------
    cells : RingCells or TorusCells
    info : dict
    """
    path = Path(folder)
    path = path / "cells.npz" if path.is_dir() else path
    if not path.is_file():
        raise BadInput(f"{name}={str(folder)!r}: no cells.npz (written by neurodyn fit-activity)")
    d = _npz(path, name)
    need = ("geometry", "dt", "preferred", "gain", "baseline", "profile_re", "profile_im",
            "used")
    missing = [k for k in need if k not in d]
    if missing:
        raise BadInput(f"{name}={str(path)!r}: missing {missing}")
    for key in need[1:]:
        if d[key].dtype.kind not in "biuf" or not np.isfinite(d[key]).all():
            raise BadInput(f"{name}={str(path)!r}: {key!r} holds NaN, infinite or non-numeric "
                           "values; the file is damaged or was edited")
    geometry = str(d["geometry"])
    n = d["gain"].shape
    if (geometry not in ("ring", "torus") or d["baseline"].shape != n
            or d["preferred"].shape != (n if geometry == "ring" else n + (2,))
            or int(d["used"].sum()) != n[0]):
        raise BadInput(f"{name}={str(path)!r}: inconsistent cells (geometry {geometry!r}, "
                       f"shapes {d['preferred'].shape}, {n})")
    profile = d["profile_re"] + 1j * d["profile_im"]
    info = {"geometry": geometry, "dt": float(d["dt"]), "used": d["used"].astype(bool)}
    if geometry == "ring":
        return RingCells(d["preferred"], d["gain"], d["baseline"], profile, np.zeros(0),
                         np.zeros((n[0], 0))), info
    info.update(spacing=float(d["spacing"]), orientation=float(d["orientation"]))
    return TorusCells(d["preferred"], d["gain"], d["baseline"], profile), info


def decode_file(cells, info: dict, data: dict, window: int = 5) -> np.ndarray:
    """Decode a data file's counts with a model's cells.

    Parameters
    ----------
    cells : RingCells or TorusCells
        From :func:`load_cells`.
    info : dict
        From :func:`load_cells`.
    data : dict
        From :func:`read_activity`; its cells must be the model's (the same count).
    window : int
        Odd number of bins pooled per decoded bin.

    Returns
    -------
    ndarray, shape (T,) or (T, 2)
        Decoded angles or phases (rad).
    """
    counts = data["counts"]
    if counts.shape[1] != info["used"].size:
        raise BadInput(f"--data: {counts.shape[1]} cells; the model was fitted to "
                       f"{info['used'].size}")
    x = counts[:, info["used"]]
    if info["geometry"] == "ring":
        grid = np.arange(360) * 2 * np.pi / 360
        return decode_ml(x, data["dt"], cells.rates(grid), grid, window)
    grid = np.arange(TORUS_GRID) * 2 * np.pi / TORUS_GRID
    mesh = np.stack(np.meshgrid(grid, grid, indexing="ij"), -1)
    return decode_ml(x, data["dt"], cells.rates(mesh), grid, window)
