"""Atomic writes, the one JSON writer, the one safe loader of torch files, and GIFs.

Every write goes to a unique temporary name in the destination's directory (``mkstemp``), is
flushed and fsynced, then moved into place with ``os.replace``: a reader sees the old file or the
new one, never a half-written one, and two writers never share a temporary file. The file gets
the mode of any file the user writes, ``0o666`` less the umask (``0o644`` under the usual
``022``), not ``mkstemp``'s private ``0o600``. A write that fails for want of disk (full, over
quota, read-only) raises :class:`~_runkit.errors.RunFailed` naming the file: one line, exit 1.

Models, checkpoints and arrays record their sha256 when written (:mod:`_runkit.checksum`) and
are verified when read: :func:`safe_torch_load` for torch files, :func:`load_arrays` (the one
reader of ``.npy`` and ``.npz`` files, the library's and the user's alike: declared sizes,
checksum, no pickles) for arrays.

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
import errno
import io
import json
import math
import os
import pickle
import re
import sys
import tempfile
import threading
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import check_positive, check_positive_int
from .checksum import check_sidecar, check_zip, seal_zip, sidecar, sidecar_text
from .errors import BadInput, RunFailed

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_torch_save", "atomic_savez",
           "atomic_save_npy", "atomic_save_figure", "load_arrays", "load_npy", "file_mode",
           "write_failed",
           "to_jsonable",
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


#: errors of a write that name the disk, not the data: a full disk or quota, a file too large
#: for the file system, a read-only or failing disk
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)
_UMASK_LOCK = threading.Lock()


def file_mode() -> int:
    """The mode of a new file: ``0o666`` less the process's umask (``0o644`` under the usual
    ``022``), as ``open()`` gives any file a user writes.

    >>> old = os.umask(0o027)
    >>> oct(file_mode())
    '0o640'
    >>> _ = os.umask(old)
    """
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where ``/proc`` tells it."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:  # elsewhere: set and put back at once
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_failed(path: str | Path, err: OSError) -> RunFailed | OSError:
    """A write that failed for want of disk (full, over quota, read-only, failing) as one
    :class:`~_runkit.errors.RunFailed` naming the file; any other error as it is."""
    if err.errno not in _DISK_ERRORS:
        return err
    return RunFailed(f"cannot write {str(path)!r}: {err.strerror or os.strerror(err.errno)} "
                     f"(the disk holding {str(Path(path).parent)!r})")


def _atomic(path: str | Path, write: Callable[[Any], None]) -> None:
    """Write through ``write(file_object)`` to a unique temp file, fsync, ``os.replace``.

    The file gets the mode of any file the user writes (:func:`file_mode`, not ``mkstemp``'s
    0600); a full disk raises :class:`~_runkit.errors.RunFailed` naming the file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise write_failed(path, err) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), file_mode())
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise write_failed(path, err) from None
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
    ``None`` and lists/tuples/dicts of them. The file's sha256 is recorded in it
    (:func:`~_runkit.checksum.seal_zip`) and verified by :func:`safe_torch_load`.

    >>> import tempfile, pathlib, torch
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ck.pt"
    >>> atomic_torch_save({"step": 3, "W": torch.ones(2)}, p)
    >>> safe_torch_load(p)["step"]
    3
    """
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write_bytes(seal_zip(buf.getvalue()), path)


def atomic_savez(path: str | Path, compressed: bool = True, **arrays: Any) -> None:
    """``np.savez_compressed`` (or ``np.savez``) of ``arrays`` to ``path`` atomically, its
    sha256 recorded in it (:func:`~_runkit.checksum.seal_zip`; verified by :func:`load_arrays`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npz"
    >>> atomic_savez(p, x=np.arange(3))
    >>> np.load(p)["x"].tolist()
    [0, 1, 2]
    """
    save = np.savez_compressed if compressed else np.savez
    buf = io.BytesIO()
    save(buf, **arrays)
    atomic_write_bytes(seal_zip(buf.getvalue()), path)


def atomic_save_npy(path: str | Path, array: Any) -> None:
    """``np.save`` of ``array`` to ``path`` atomically, its sha256 in ``NAME.npy.sha256`` beside
    it (:func:`~_runkit.checksum.sidecar`), written after the array (the old record is removed
    first, so an interrupted write leaves an array without a record, never a wrong one).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npy"
    >>> atomic_save_npy(p, np.arange(3))
    >>> load_arrays(p, "a").tolist(), sorted(f.name for f in p.parent.iterdir())
    ([0, 1, 2], ['a.npy', 'a.npy.sha256'])
    """
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    data = buf.getvalue()
    record = sidecar(path)
    record.unlink(missing_ok=True)
    atomic_write_bytes(data, path)
    atomic_write_text(sidecar_text(data, Path(path).name), record)


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
        The file is missing, a directory, empty, truncated, not a torch file, damaged or edited
        (its recorded sha256, or else a zip entry's CRC-32, does not match:
        :func:`~_runkit.checksum.check_zip`), or holds objects other than tensors and plain
        values (a pickle that would import code is refused without running it).

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
    if zipfile.is_zipfile(path):  # torch's reader checks neither a checksum nor the CRCs
        check_zip(path, what)
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


def load_arrays(path: str | Path, name: str, real: bool = True) -> Any:
    """The array of a ``.npy`` file, or the arrays of a ``.npz`` file by name: the one reader of
    array files, for the library's own files and the user's alike.

    Before anything is read the file must exist and be readable, the sizes its headers declare
    must fit in memory (:func:`check_array_file_size`) and it must match its recorded sha256
    (in a ``.npz`` the library wrote, or ``NAME.npy.sha256`` beside a ``.npy``:
    :mod:`~_runkit.checksum`; a ``.npz``'s CRC-32s are checked as it is read). Nothing is
    unpickled (``allow_pickle=False``).

    Parameters
    ----------
    path : str or Path
        The ``.npy`` or ``.npz`` file (told apart by content, not by name).
    name : str
        The parameter that named the file, used in every message.
    real : bool
        Refuse complex arrays (their imaginary part would be dropped later without a word).

    Returns
    -------
    numpy.ndarray or dict of str to numpy.ndarray
        The array of a ``.npy``; the arrays of a ``.npz``.

    Raises
    ------
    BadInput
        Missing, unreadable, too large, damaged or edited, truncated, a pickle, object or
        complex arrays; the message names ``name``, the file and, where one is at fault, the
        array.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npz"
    >>> atomic_savez(p, x=np.arange(2))
    >>> load_arrays(p, "data")["x"].tolist()
    [0, 1]
    >>> _ = p.write_bytes(p.read_bytes()[:40])
    >>> load_arrays(p, "data")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: data='...a.npz' is not a readable .npy or .npz file of arrays ...
    """
    path = Path(path)
    _check_readable(path, name)
    check_array_file_size(path, name)
    if zipfile.is_zipfile(path):
        check_zip(path, name, crc=False)  # numpy checks each entry's CRC-32 as it reads it
    else:
        check_sidecar(path, name)
    try:
        with open(path, "rb") as fh:  # closed whatever numpy's zip reader makes of it
            loaded = np.load(fh, allow_pickle=False)
            if isinstance(loaded, np.ndarray):
                arrays = {"": loaded}
            else:
                with loaded:
                    arrays = {key: loaded[key] for key in loaded.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError, RuntimeError,
            NotImplementedError, UnicodeDecodeError, SyntaxError) as err:
        raise BadInput(f"{name}={str(path)!r} is not a readable .npy or .npz file of arrays "
                       f"(truncated, damaged or foreign: {_first_line(err)})") from None
    for key, arr in arrays.items():
        if real and arr.dtype.kind == "c":
            where = f" array {key!r}" if key else ""
            raise BadInput(f"{name}={str(path)!r}:{where} has complex dtype {arr.dtype}; only "
                           "real numbers are allowed")
    return arrays[""] if "" in arrays and len(arrays) == 1 else arrays


def load_npy(path: str | Path, name: str) -> np.ndarray:
    """The one array of a ``.npy`` file, read by :func:`load_arrays`; an ``.npz`` (several
    arrays) is refused naming ``name``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.npy"
    >>> np.save(p, np.ones(2))
    >>> load_npy(p, "velocity").tolist()
    [1.0, 1.0]
    """
    arr = load_arrays(path, name)
    if not isinstance(arr, np.ndarray):
        raise BadInput(f"{name}={str(path)!r} holds several arrays (.npz); one .npy array is "
                       "expected")
    return arr


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
    os.fchmod(fd, file_mode())
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
