"""Input checks that name the parameter, the value received and what is allowed, and the
registries of named choices (:class:`Registry`: couplings, paths, solvers, energies, ...).

Every check returns the value in its canonical type (``int``, ``float``, the array) and raises
:class:`~_runkit.errors.BadInput` otherwise, so a command line can report it in one line.
Booleans are never accepted as numbers, and complex or non-finite values never pass as real.

Examples
--------
>>> check_positive_int("steps", 10)
10
>>> check_positive("lr", float("nan"))
Traceback (most recent call last):
...
_runkit.errors.BadInput: lr=nan is not allowed; it must be a finite number > 0
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .errors import BadInput

__all__ = ["check_positive", "check_positive_int", "check_nonnegative", "check_int",
           "check_installed", "check_float", "check_choice", "check_array", "check_memory",
           "available_memory", "format_bytes", "Registry"]


def _real(name: str, value: object, allowed: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise BadInput(f"{name}={value!r} is not allowed; it must be {allowed}", param=name)
    v = float(value)
    if not np.isfinite(v):
        raise BadInput(f"{name}={value!r} is not allowed; it must be {allowed}", param=name)
    return v


def _integer(name: str, value: object, allowed: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise BadInput(f"{name}={value!r} is not allowed; it must be {allowed}", param=name)
    return int(value)


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number > 0.

    >>> check_positive("dt", 0.5)
    0.5
    >>> check_positive("dt", 0)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: dt=0 is not allowed; it must be a finite number > 0
    """
    v = _real(name, value, "a finite number > 0")
    if v <= 0:
        raise BadInput(f"{name}={value!r} is not allowed; it must be a finite number > 0",
                       param=name)
    return v


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number >= 0.

    >>> check_nonnegative("noise", 0)
    0.0
    >>> check_nonnegative("noise", -1e-3)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: noise=-0.001 is not allowed; it must be a finite number >= 0
    """
    v = _real(name, value, "a finite number >= 0")
    if v < 0:
        raise BadInput(f"{name}={value!r} is not allowed; it must be a finite number >= 0",
                       param=name)
    return v


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int if it is an integer >= 1 (``3.0`` and ``True`` are refused).

    >>> check_positive_int("width", np.int64(64))
    64
    >>> check_positive_int("width", 2.5)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: width=2.5 is not allowed; it must be an integer >= 1
    """
    v = _integer(name, value, "an integer >= 1")
    if v < 1:
        raise BadInput(f"{name}={value!r} is not allowed; it must be an integer >= 1", param=name)
    return v


def _range_text(kind: str, lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"{kind} in [{lo}, {hi}]"
    if lo is not None:
        return f"{kind} >= {lo}"
    if hi is not None:
        return f"{kind} <= {hi}"
    return kind


def check_int(name: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer with ``lo <= value <= hi``.

    >>> check_int("seed", 7, lo=0)
    7
    >>> check_int("k", 5, lo=0, hi=3)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: k=5 is not allowed; it must be an integer in [0, 3]
    """
    allowed = _range_text("an integer", lo, hi)
    v = _integer(name, value, allowed)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise BadInput(f"{name}={value!r} is not allowed; it must be {allowed}", param=name)
    return v


def check_float(name: str, value: object, lo: float | None = None,
                hi: float | None = None) -> float:
    """Return ``value`` as a float if it is a finite real number with ``lo <= value <= hi``.

    >>> check_float("sigma_min", 0.0, lo=0.0, hi=1.0)
    0.0
    >>> check_float("sigma_min", float("inf"), lo=0.0, hi=1.0)
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: sigma_min=inf is not allowed; it must be a finite number in [0.0, 1.0]
    """
    allowed = _range_text("a finite number", lo, hi)
    v = _real(name, value, allowed)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise BadInput(f"{name}={value!r} is not allowed; it must be {allowed}", param=name)
    return v


def check_installed(module: str, extra: str, needed_for: str, avoid: str | None = None) -> None:
    """Refuse a run that needs an optional dependency that is not installed, before it starts.

    Parameters
    ----------
    module : str
        The importable name of the dependency (``"ripser"``).
    extra : str
        The package's optional extra that installs it (``"topology"``).
    needed_for : str
        What needs it (``"persistent homology"``), named in the message.
    avoid : str or None
        The option that runs without it (``"--no-topology"``), named in the message.

    Raises
    ------
    BadInput
        ``module`` cannot be found: one line naming it, the extra to install and ``avoid``.

    Examples
    --------
    >>> check_installed("json", "none", "reading JSON")
    >>> check_installed("no_such_module_x", "topology", "persistent homology", "--no-topology")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: persistent homology needs no_such_module_x, which is not installed: \
pip install 'neurodyn-flows[topology]', or pass --no-topology
    """
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        avoid_text = f", or pass {avoid}" if avoid else ""
        raise BadInput(f"{needed_for} needs {module}, which is not installed: pip install "
                       f"'neurodyn-flows[{extra}]'{avoid_text}")


def check_choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise listing the valid choices.

    >>> check_choice("solver", "rk4", ["euler", "midpoint", "rk4"])
    'rk4'
    >>> check_choice("solver", "rk5", ["euler", "midpoint", "rk4"])
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: solver='rk5' is not allowed; choose one of euler, midpoint, rk4
    """
    allowed = list(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise BadInput(f"{name}={value!r} is not allowed; choose one of {', '.join(allowed)}",
                       param=name)
    return value


def _shape_text(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"


def check_array(name: str, a: object, ndim: int | Sequence[int] | None = None,
                shape: Sequence[int | None] | None = None, finite: bool = True,
                real: bool = True, empty: bool = False):
    """Return ``a`` (a NumPy array or torch tensor) if its rank, shape and values are allowed.

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    a : numpy.ndarray or torch.Tensor
        The array; anything else is refused (lists are not silently converted).
    ndim : int or sequence of int, optional
        Allowed rank(s).
    shape : sequence of (int or None), optional
        Required shape; ``None`` entries accept any length on that axis.
    finite : bool
        Refuse NaN and infinite entries (the first offending index is named).
    real : bool
        Refuse complex arrays instead of cutting them to their real part; refuse non-numeric
        dtypes (object, strings) always.
    empty : bool
        Accept an array with no elements.

    Examples
    --------
    >>> check_array("x", np.zeros((4, 2)), ndim=2, shape=(None, 2)).shape
    (4, 2)
    >>> check_array("x", np.array([1 + 2j]))
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: x has complex dtype complex128; only real arrays are allowed
    >>> check_array("x", np.array([[0.0, np.nan]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: x contains 1 non-finite value(s) (first at index (0, 1)); only ...
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a core dependency
        torch = None
    is_tensor = torch is not None and isinstance(a, torch.Tensor)
    kind = _numeric_kind(name, a, is_tensor, torch, real)
    _check_rank_and_shape(name, a, ndim, shape)
    size = a.numel() if is_tensor else a.size
    if size == 0 and not empty:
        raise BadInput(f"{name} is empty (shape {tuple(a.shape)}); at least one value is needed",
                       param=name)
    if finite and kind in "fc":
        bad = ~(torch.isfinite(a).cpu().numpy() if is_tensor else np.isfinite(a))
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise BadInput(f"{name} contains {int(bad.sum())} non-finite value(s) (first at "
                           f"index {first}); only finite numbers are allowed", param=name)
    return a


def _numeric_kind(name: str, a, is_tensor: bool, torch, real: bool) -> str:
    """The NumPy kind letter of ``a``'s dtype (``b``, ``i``, ``u``, ``f`` or ``c``; a tensor's
    integers are ``i``); :class:`BadInput` for a non-array, a non-numeric dtype, or a complex
    one when ``real``. ``torch`` is the torch module (None when it is absent)."""
    if not is_tensor and not isinstance(a, np.ndarray):
        raise BadInput(f"{name} of type {type(a).__name__} is not allowed; it must be an array",
                       param=name)
    if is_tensor:
        kind = "c" if a.is_complex() else "f" if a.is_floating_point() else (
            "b" if a.dtype == torch.bool else "i")
    else:
        kind = a.dtype.kind
    if kind == "c" and real:
        raise BadInput(f"{name} has complex dtype {str(a.dtype).replace('torch.', '')}; "
                       "only real arrays are allowed", param=name)
    if kind not in "biufc":
        raise BadInput(f"{name} has dtype {a.dtype}; only numeric arrays are allowed", param=name)
    return kind


def _check_rank_and_shape(name: str, a, ndim: int | Sequence[int] | None,
                          shape: Sequence[int | None] | None) -> None:
    """:class:`BadInput` unless ``a`` has one of the ranks ``ndim`` and matches ``shape``
    (None entries match any size); either check is skipped when None."""
    if ndim is not None:
        ndims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in ndims:
            want = " or ".join(str(n) for n in ndims)
            raise BadInput(f"{name} has {a.ndim} dimension(s) (shape {tuple(a.shape)}); "
                           f"it must have {want}", param=name)
    if shape is not None:
        shape = tuple(shape)
        ok = len(shape) == a.ndim and all(
            s is None or s == n for s, n in zip(shape, a.shape, strict=True))
        if not ok:
            raise BadInput(f"{name} has shape {tuple(a.shape)}; it must have shape "
                           f"{_shape_text(shape)}", param=name)


def format_bytes(n: float) -> str:
    """Human-readable size in binary units.

    >>> format_bytes(3 * 2**30)
    '3.0 GiB'
    >>> format_bytes(512)
    '512 B'
    """
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def _meminfo_available() -> int:
    """``MemAvailable`` of /proc/meminfo in bytes, else the physical memory size."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _read_int(path: str) -> int | None:
    """The integer in a one-line file (a cgroup limit), or None if absent, ``max`` or unreadable."""
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _address_space_left() -> int | None:
    """Bytes of address space this process may still map under ``RLIMIT_AS`` (None: no limit)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(int(soft) - used, 0)


def _cgroup_left() -> int | None:
    """Bytes the memory cgroup still allows (v2 ``memory.max``, v1 ``limit_in_bytes``)."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit = _read_int(limit_file)
        if limit is not None and limit < 2**60:  # v1 writes "no limit" as a huge number
            return max(limit - (_read_int(usage_file) or 0), 0)
    return None


def memory_limit() -> tuple[int, str]:
    """The smallest of the memory limits on a new allocation, and which limit it is.

    The candidates are ``MemAvailable`` of /proc/meminfo (``"available memory"``), the address
    space left under ``RLIMIT_AS`` (``"address-space limit"``, as ``ulimit -v`` sets) and the
    memory left to the cgroup (``"cgroup memory limit"``).

    >>> nbytes, source = memory_limit()
    >>> nbytes > 0, source in ("available memory", "address-space limit", "cgroup memory limit")
    (True, True)
    """
    found = [(_meminfo_available(), "available memory"),
             (_address_space_left(), "address-space limit"),
             (_cgroup_left(), "cgroup memory limit")]
    return min(((n, src) for n, src in found if n is not None), key=lambda item: item[0])


def available_memory() -> int:
    """Bytes of memory available to a new allocation: the smallest of :func:`memory_limit`.

    >>> available_memory() > 0
    True
    """
    return memory_limit()[0]


def check_memory(name: str, nbytes: float, limit: float | None = None) -> int:
    """Refuse, before allocating, a size whose estimated memory exceeds what is available.

    Parameters
    ----------
    name : str
        The parameter (or parameters, e.g. ``"n, width"``) that set the size; named as the
        thing to reduce.
    nbytes : float
        Estimated bytes the work would allocate (e.g. ``n * d * 4`` for a float32 array).
    limit : float, optional
        Bytes allowed; by default 80% of :func:`available_memory` (the smallest of free memory,
        the ``RLIMIT_AS`` address space left and the cgroup limit, named in the message).

    Returns
    -------
    int
        ``nbytes`` rounded up, when it fits.

    Examples
    --------
    >>> check_memory("n", 1000 * 2 * 4)
    8000
    >>> check_memory("n", 2**40, limit=2**30)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: n is too large: ... about 1.0 TiB of memory, more than the 1.0 GiB ...
    """
    try:
        need = float(nbytes)
    except (TypeError, ValueError, OverflowError):
        need = float("inf")
    source = ""
    if limit is None:
        nbytes_left, what = memory_limit()
        limit = 0.8 * nbytes_left
        source = "" if what == "available memory" else f" under the {what}"
    if not np.isfinite(need) or need > limit:
        size = "an unbounded amount" if not np.isfinite(need) else f"about {format_bytes(need)}"
        raise BadInput(f"{name} is too large: the run would need {size} of memory, more than "
                       f"the {format_bytes(limit)} available{source}; reduce {name}", param=name)
    return int(np.ceil(max(need, 0.0)))


class Registry:
    """A name -> object table for one kind of named choice.

    Parameters
    ----------
    kind : str
        What the names are (``"coupling"``); the parameter named in errors.

    Examples
    --------
    >>> SOLVERS = Registry("solver")
    >>> @SOLVERS.register("euler")
    ... def euler(f, x, dt):
    ...     return x + dt * f(x)
    >>> _ = SOLVERS.add("midpoint", lambda f, x, dt: x + dt * f(x + 0.5 * dt * f(x)))
    >>> SOLVERS.names()
    ['euler', 'midpoint']
    >>> SOLVERS.get("euler") is euler, "rk4" in SOLVERS
    (True, False)
    >>> SOLVERS.get("rk4")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: solver='rk4' is not allowed; choose one of euler, midpoint
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, Any] = {}

    def add(self, name: str, obj: Any, replace: bool = False) -> Any:
        """Register ``obj`` under ``name``; a taken name is refused unless ``replace``."""
        if not isinstance(name, str) or not name:
            raise BadInput(f"{self.kind} name {name!r} is not allowed; it must be a non-empty "
                           "string", param=self.kind)
        if name in self._items and not replace:
            raise BadInput(f"{self.kind}={name!r} is already registered; pass replace=True to "
                           "replace it", param=self.kind)
        self._items[name] = obj
        return obj

    def register(self, name: str, replace: bool = False) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add`; returns the object unchanged."""

        def deco(obj: Any) -> Any:
            return self.add(name, obj, replace=replace)

        return deco

    def get(self, name: str) -> Any:
        """The object registered as ``name``; unknown names raise ``BadInput`` listing the valid."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise BadInput(f"{self.kind}={name!r} is not allowed; choose one of "
                           f"{', '.join(self._items)}", param=self.kind) from None

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()})"
