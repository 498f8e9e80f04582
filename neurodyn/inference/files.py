r"""The model folder of ``neurodyn fit-activity``, and decoding with it.

The recordings it reads (``--data``, ``--sleep``) are :mod:`.recordings`'. The folder holds
``model.pt`` (the learned network, :func:`neurodyn.io.save_model`) and ``cells.npz``:
``geometry``, ``dt``, ``preferred``, ``gain``, ``baseline``, the profile's coefficients
(``profile_re``, ``profile_im``), each cell's own curve (``own_re``, ``own_im``; absent in
folders of older versions), ``used`` and, for a torus, ``spacing`` and ``orientation``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _runkit import BadInput
from _runkit.files import atomic_savez, load_arrays

from .cells import RingCells
from .decode import decode_ml
from .torus import GRID as TORUS_GRID
from .torus import TorusCells

__all__ = ["save_cells", "load_cells", "decode_file", "decode_counts"]


def _npz(path: Path, name: str) -> dict:
    data = load_arrays(path, name)  # size, checksum, no pickles: BadInput naming the file
    if not isinstance(data, dict):
        raise BadInput(f"{name}={str(path)!r} holds one array (.npy); cells.npz is expected")
    return data


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
    if c.own is not None:
        arrays.update(own_re=np.real(c.own), own_im=np.imag(c.own))
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
    own = _own(d, n[0], geometry, name, path)
    info = {"geometry": geometry, "dt": float(d["dt"]), "used": d["used"].astype(bool)}
    if geometry == "ring":
        return RingCells(d["preferred"], d["gain"], d["baseline"], profile, np.zeros(0),
                         np.zeros((n[0], 0)), own), info
    info.update(spacing=float(d["spacing"]), orientation=float(d["orientation"]))
    return TorusCells(d["preferred"], d["gain"], d["baseline"], profile, own), info


def _own(d, cells, geometry, name, path):
    """Each cell's own curve, or None in a folder of an older version."""
    if "own_re" not in d or "own_im" not in d:
        return None
    re, im = d["own_re"], d["own_im"]
    ok = (re.shape == im.shape and re.shape[:1] == (cells,)
          and re.ndim == (2 if geometry == "ring" else 3)
          and re.dtype.kind == "f" and np.isfinite(re).all() and np.isfinite(im).all())
    if not ok:
        raise BadInput(f"{name}={str(path)!r}: own_re/own_im of shape {re.shape} are not "
                       f"{cells} cells' curves; the file is damaged or was edited")
    return re + 1j * im


def decode_file(cells, info: dict, data: dict, window: int = 5) -> np.ndarray:
    """Decode a data file's counts with a model's cells.

    Parameters
    ----------
    cells : RingCells or TorusCells
        From :func:`load_cells`.
    info : dict
        From :func:`load_cells`.
    data : dict
        From :func:`~.recordings.read_activity`; its cells must be the model's (the same count).
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
    return decode_counts(cells, info["geometry"], counts[:, info["used"]], data["dt"], window)


def decode_counts(cells, geometry: str, counts, dt: float, window: int = 5) -> np.ndarray:
    """Maximum-likelihood decoding of counts of the fitted cells (:func:`~.decode.decode_ml`
    on the ring's 360 angles or the torus's grid).

    Parameters
    ----------
    cells : RingCells or TorusCells
        The fitted cells.
    geometry : {'ring', 'torus'}
        Their manifold.
    counts : ndarray, shape (T, cells)
        Counts of those cells (NaN: not observed).
    dt : float
        Bin width (s).
    window : int
        Odd number of bins pooled per decoded bin.

    Returns
    -------
    ndarray, shape (T,) or (T, 2)
        Decoded angles or phases (rad).
    """
    if geometry == "ring":
        grid = np.arange(360) * 2 * np.pi / 360
        return decode_ml(counts, dt, cells.rates(grid), grid, window)
    grid = np.arange(TORUS_GRID) * 2 * np.pi / TORUS_GRID
    mesh = np.stack(np.meshgrid(grid, grid, indexing="ij"), -1)
    return decode_ml(counts, dt, cells.rates(mesh), grid, window)
