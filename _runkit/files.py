"""Atomic writes, the one JSON writer, the one safe loader of torch files, and GIFs.

Every write goes to a unique temporary name in the destination's directory (``mkstemp``), is
flushed and fsynced, then moved into place with ``os.replace``: a reader sees the old file or the
new one, never a half-written one, and two writers never share a temporary file.

JSON convention (both packages): strict JSON (RFC 8259, ``allow_nan=False``), indented, keys
sorted. Non-finite floats are written as the strings ``"nan"``, ``"inf"`` and ``"-inf"``, so no
information is lost, every JSON parser reads the file, and ``float(value)`` turns them back into
numbers. Tensors and arrays become (nested) lists, dataclasses their ``to_dict()`` (or fields),
paths strings.

Animated figures are written as GIF files by one writer for both packages (:func:`write_gif`):
a figure built without pyplot is redrawn frame by frame by a caller's ``update(i)`` and written
with matplotlib's :class:`~matplotlib.animation.PillowWriter`; the layout is computed once, on
the first frame, and then held fixed (no jitter between frames, and faster).

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_json({"w2": float("inf"), "loss": np.float32(0.5), "x": np.arange(3)}, d / "m.json")
>>> print((d / "m.json").read_text(), end="")
{
  "loss": 0.5,
  "w2": "inf",
  "x": [
    0,
    1,
    2
  ]
}
>>> read_json(d / "m.json")["w2"]
'inf'
>>> frame_index(100, 5).tolist()
[0, 25, 50, 74, 99]
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import re
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import check_positive, check_positive_int
from .errors import BadInput

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_torch_save", "atomic_savez",
           "atomic_save_figure", "to_jsonable",
           "write_json", "read_json", "safe_torch_load", "check_array_file_size",
           "check_finite_tensors", "check_saved_step", "check_like", "check_adam_state",
           "frame_index", "write_gif"]


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic(path: str | Path, write: Callable[[Any], None]) -> None:
    """Write through ``write(file_object)`` to a unique temp file, fsync, ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_bytes(data: bytes, path: str | Path) -> None:
    """Write ``data`` to ``path`` atomically (unique temp name, fsync, ``os.replace``).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.bin"
    >>> atomic_write_bytes(b"\\x00\\x01", p); p.read_bytes()
    b'\\x00\\x01'
    """
    _atomic(path, lambda fh: fh.write(bytes(data)))


def atomic_write_text(text: str, path: str | Path) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "note.txt"
    >>> atomic_write_text("hello\\n", p); p.read_text()
    'hello\\n'
    """
    atomic_write_bytes(text.encode("utf-8"), path)


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """``torch.save(obj)`` to ``path`` atomically.

    Save only what :func:`safe_torch_load` can read back: tensors, numbers, strings, bools,
    ``None`` and lists/tuples/dicts of them.

    >>> import tempfile, pathlib, torch
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ck.pt"
    >>> atomic_torch_save({"step": 3, "W": torch.ones(2)}, p)
    >>> safe_torch_load(p)["step"]
    3
    """
    import torch

    _atomic(path, lambda fh: torch.save(obj, fh))


def atomic_savez(path: str | Path, compressed: bool = True, **arrays: Any) -> None:
    """``np.savez_compressed`` (or ``np.savez``) of ``arrays`` to ``path`` atomically.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npz"
    >>> atomic_savez(p, x=np.arange(3))
    >>> np.load(p)["x"].tolist()
    [0, 1, 2]
    """
    save = np.savez_compressed if compressed else np.savez
    _atomic(path, lambda fh: save(fh, **arrays))


def atomic_save_figure(fig: Figure, path: str | Path, **savefig: Any) -> None:
    """``fig.savefig`` to ``path`` atomically, in the format of its suffix (``.png``, ``.pdf``,
    ``.svg``; PNG without one); ``savefig`` are further keywords (``dpi=``). A PNG is also
    written as SVG beside it when the environment sets ``RUNKIT_SVG=1`` (:data:`SVG_ENV`).

    >>> import tempfile, pathlib
    >>> from matplotlib.figure import Figure
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.png"
    >>> atomic_save_figure(Figure(figsize=(1, 1)), p, dpi=20)
    >>> p.read_bytes()[:4]
    b'\\x89PNG'
    """
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    _atomic(path, lambda fh: fig.savefig(fh, format=fmt, **savefig))
    if fmt == "png" and os.environ.get(SVG_ENV) == "1":  # a vector copy for the results page
        _atomic(Path(path).with_suffix(".svg"), lambda fh: fig.savefig(fh, format="svg"))


#: environment variable: "1" makes every PNG figure written by the library (this module's
#: :func:`atomic_save_figure`, :meth:`_runkit.rundir.RunDir.write_figures`) also written as SVG
#: beside it (the demos' runner sets it for the results page)
SVG_ENV = "RUNKIT_SVG"


def to_jsonable(obj: Any) -> Any:
    """Convert ``obj`` to plain JSON values under the convention of this module.

    >>> to_jsonable({"a": (1, np.float64("nan")), 2: np.bool_(True)})
    {'a': [1, 'nan'], '2': True}
    """
    if hasattr(obj, "to_dict") and not isinstance(obj, type):
        return to_jsonable(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return to_jsonable(obj.detach().cpu().numpy())
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else str(x)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"{type(obj).__name__} is not convertible to JSON")


def write_json(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as strict, indented, key-sorted JSON to ``path`` atomically.

    Non-finite floats are written as ``"nan"``, ``"inf"``, ``"-inf"`` (see the module docstring).
    """
    text = json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False) + "\n"
    atomic_write_text(text, path)


def read_json(path: str | Path, what: str = "file") -> Any:
    """Read a JSON file; a missing, unreadable or malformed file raises ``BadInput`` naming it.

    >>> read_json("/nonexistent/config.json", what="config")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: config='/nonexistent/config.json' does not exist
    """
    path = Path(path)
    _check_readable(path, what)
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadInput(f"{what}={str(path)!r} is not valid JSON ({err})") from None
    except RecursionError:
        raise BadInput(f"{what}={str(path)!r} is JSON nested too deeply to read") from None


def _check_readable(path: Path, what: str) -> None:
    if not path.exists():
        raise BadInput(f"{what}={str(path)!r} does not exist")
    if path.is_dir():
        raise BadInput(f"{what}={str(path)!r} is a directory; a file is expected")
    if not os.access(path, os.R_OK):
        raise BadInput(f"{what}={str(path)!r} is not readable (permission denied)")


_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")


def safe_torch_load(path: str | Path, what: str = "checkpoint") -> Any:
    """Load a file written by ``torch.save`` with ``weights_only=True`` (no code can run).

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        The parameter that named the file (``"model"``, ``"checkpoint"``), used in the message.

    Returns
    -------
    object
        Tensors, numbers, strings and containers of them, loaded on the CPU.

    Raises
    ------
    BadInput
        The file is missing, a directory, empty, truncated, not a torch file, or holds objects
        other than tensors and plain values (a pickle that would import code is refused
        without running it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "model.pt"
    >>> _ = p.write_bytes(b"not a torch file")
    >>> safe_torch_load(p, what="model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: model='...model.pt' is not a readable torch file (truncated, ...)
    """
    import torch

    path = Path(path)
    _check_readable(path, what)
    if path.stat().st_size == 0:
        raise BadInput(f"{what}={str(path)!r} is empty")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols of foreign files
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        found = _GLOBAL.search(str(err))
        if found:
            raise BadInput(f"{what}={str(path)!r} holds objects other than tensors and plain "
                           f"values ({found.group(1)}); refused without loading them") from None
        raise BadInput(f"{what}={str(path)!r} is not a readable torch file (truncated, foreign "
                       "or unsafe)") from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, KeyError,
            IndexError, TypeError, AttributeError, UnicodeDecodeError) as err:
        raise BadInput(f"{what}={str(path)!r} is not a readable torch file (truncated or "
                       f"foreign): {_first_line(err)}") from None


def _refuse_field(what: str, path: str | Path, field: str, problem: str) -> BadInput:
    return BadInput(f"{what}={str(path)!r}: field {field!r} {problem}; the file is damaged or "
                    "was edited")


def check_finite_tensors(obj: Any, what: str, path: str | Path, field: str = "") -> None:
    """Refuse (``BadInput`` naming the file and the field) a loaded file in which a floating
    tensor or a float, anywhere in nested dicts, lists and tuples, is NaN or infinite.

    Examples
    --------
    >>> import torch
    >>> check_finite_tensors({"w": torch.ones(2), "t": 3}, "model", "m.pt")
    >>> check_finite_tensors({"w": {"b": torch.tensor([0.0, float("nan")])}}, "model", "m.pt")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: model='m.pt': field 'w.b' holds NaN or infinite values; ...
    """
    import torch

    bad = False
    if isinstance(obj, torch.Tensor):
        bad = (obj.is_floating_point() or obj.is_complex()) and not bool(torch.isfinite(obj).all())
    elif isinstance(obj, float):
        bad = not math.isfinite(obj)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            check_finite_tensors(value, what, path, f"{field}.{key}" if field else str(key))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            check_finite_tensors(value, what, path, f"{field}[{i}]")
    if bad:
        raise _refuse_field(what, path, field, "holds NaN or infinite values")


def check_saved_step(blob: dict, steps: int, what: str, path: str | Path,
                     field: str = "step") -> int:
    """The ``step`` field (or ``field``) of a loaded checkpoint, refused unless an integer in
    ``[0, steps]``.

    >>> check_saved_step({"step": 3}, 10, "checkpoint", "c.pt")
    3
    >>> check_saved_step({"step": -1}, 10, "checkpoint", "c.pt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: checkpoint='c.pt': field 'step' is -1, not an integer in [0, 10]; ...
    """
    step = blob.get(field) if isinstance(blob, dict) else None
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= steps:
        raise _refuse_field(what, path, field, f"is {step!r}, not an integer in [0, {steps}]")
    return step


def check_like(found: Any, expected: Any, what: str, path: str | Path, field: str = "") -> None:
    """Refuse a loaded value whose dict keys or tensor shapes differ from ``expected`` (a
    freshly built value of the same kind), naming the first field that differs.

    >>> import torch
    >>> check_like({"a": torch.zeros(2, 3)}, {"a": torch.ones(2, 3)}, "checkpoint", "c.pt")
    >>> check_like({"a": torch.zeros(3)}, {"a": torch.ones(2, 3)}, "checkpoint", "c.pt")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: checkpoint='c.pt': field 'a' has shape (3,), expected (2, 3); ...
    """
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(found, torch.Tensor):
            raise _refuse_field(what, path, field, f"is a {type(found).__name__}, not a tensor")
        if tuple(found.shape) != tuple(expected.shape):
            raise _refuse_field(what, path, field, f"has shape {tuple(found.shape)}, expected "
                                f"{tuple(expected.shape)}")
    elif isinstance(expected, dict):
        if not isinstance(found, dict) or set(found) != set(expected):
            keys = sorted(found) if isinstance(found, dict) else type(found).__name__
            raise _refuse_field(what, path, field or "(top level)",
                                f"holds {keys}, expected the keys {sorted(expected)}")
        for key in expected:
            check_like(found[key], expected[key], what, path,
                       f"{field}.{key}" if field else str(key))


def check_adam_state(state: Any, params: list, what: str, path: str | Path,
                     field: str = "optimizer") -> None:
    """Refuse a loaded ``torch.optim.Adam`` state dict whose moments are not those of
    ``params`` (an entry for no parameter, or ``exp_avg`` / ``exp_avg_sq`` of another shape);
    torch's own loader checks only the parameter groups.

    >>> import torch
    >>> p = [torch.zeros(2, 3)]
    >>> check_adam_state({"state": {0: {"exp_avg": torch.zeros(2, 3)}}}, p, "checkpoint", "c.pt")
    >>> check_adam_state({"state": {0: {"exp_avg": torch.zeros(3)}}}, p, "checkpoint", "c.pt")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: checkpoint='c.pt': field 'optimizer.state.0.exp_avg' has shape ...
    """
    moments = state.get("state") if isinstance(state, dict) else None
    if not isinstance(moments, dict):
        raise _refuse_field(what, path, field, "holds no optimizer state")
    for i, found in moments.items():
        if not isinstance(i, int) or not 0 <= i < len(params) or not isinstance(found, dict):
            raise _refuse_field(what, path, f"{field}.state",
                                f"holds an entry {i!r} that is no parameter")
        expected = {k: params[i].detach() for k in ("exp_avg", "exp_avg_sq") if k in found}
        check_like({k: found[k] for k in expected}, expected, what, path, f"{field}.state.{i}")


def _npy_header_bytes(fh: Any) -> float | None:
    """Bytes the array of an open ``.npy`` stream declares in its header (None: unreadable)."""
    from numpy.lib import format as npformat

    try:
        version = npformat.read_magic(fh)
        reader = {(1, 0): npformat.read_array_header_1_0,
                  (2, 0): npformat.read_array_header_2_0}.get(version)
        if reader is None:
            return None
        shape, _, dtype = reader(fh)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError):
        return None
    return float(math.prod(float(s) for s in shape)) * float(dtype.itemsize)


def check_array_file_size(path: str | Path, name: str) -> None:
    """Refuse a ``.npy`` (or every array of a ``.npz``) whose header declares more memory than
    is available, before reading the data; a file that is not an array file is left to its
    reader to report.

    Parameters
    ----------
    path : str or Path
        The ``.npy`` or ``.npz`` file.
    name : str
        The parameter that named the file.

    Raises
    ------
    BadInput
        The declared size exceeds the memory limit; the message gives the estimate and the limit.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.npy"
    >>> np.save(p, np.zeros((3, 2)))
    >>> check_array_file_size(p, "init")
    """
    from .checks import check_memory

    path = Path(path)
    declared: list[float | None] = []
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():
                    with zf.open(info) as fh:
                        declared.append(_npy_header_bytes(fh))
        else:
            with open(path, "rb") as fh:
                declared.append(_npy_header_bytes(fh))
    except (OSError, zipfile.BadZipFile, RuntimeError):
        return
    total = sum(n for n in declared if n is not None)
    try:
        check_memory(name, total)
    except BadInput as err:
        detail = str(err).split(": ", 1)[-1]
        raise BadInput(f"{name}={str(path)!r} is too large to load (array size declared in "
                       f"its header): {detail}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    line = text[0].split(". ")[0].rstrip(".") if text else type(err).__name__
    return line[:160]


def frame_index(count: int, frames: int) -> np.ndarray:
    """At most ``frames`` evenly spaced, distinct indices into ``count`` saved states.

    Returns
    -------
    ndarray of int, shape (min(frames, count),), increasing from 0 to ``count - 1``.
    """
    frames = check_positive_int("frames", frames)
    return np.unique(np.linspace(0, count - 1, min(frames, count)).round().astype(int))


def write_gif(fig: Figure, path: str | Path, fps: float, update: Callable[[int], None],
              frames: np.ndarray, dpi: int) -> Path:
    """Write a GIF: ``update(i)`` draws frame ``i`` into ``fig`` for each ``i`` in ``frames``.

    Parameters
    ----------
    fig : Figure
        The figure (built without pyplot); its layout is computed once, on the first frame.
    path : str or Path
        Output file, ``*.gif``.
    fps : float
        Frames per second, > 0.
    update : callable
        ``update(i: int) -> None``.
    frames : ndarray of int
        The indices passed to ``update``, in order.
    dpi : int
        Resolution of the frames.

    Returns
    -------
    Path
        The written file.
    """
    from matplotlib.animation import PillowWriter
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fps = check_positive("fps", fps)
    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise BadInput(f"path={str(path)!r} is not allowed; it must end with .gif")
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    update(int(frames[0]))
    fig.canvas.draw()
    fig.set_layout_engine("none")
    writer = PillowWriter(fps=fps)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".gif")
    os.close(fd)
    try:  # written under a temporary name, then moved into place (as every artifact)
        with writer.saving(fig, tmp, dpi):
            for i in frames:
                update(int(i))
                writer.grab_frame()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _fsync_dir(path.parent)
    return path
