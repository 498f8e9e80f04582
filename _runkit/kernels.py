"""numba's on-disk cache of the library's compiled kernels, in a folder keyed on their sources.

numba checks a cached kernel against the time stamp of the kernel's own file only, so a kernel
that calls or inlines a helper from another file (:mod:`flows.assignment._bits`,
:mod:`neurodyn.dynamics._compiled.fastexp`) would load stale machine code once the helper is
edited. Each module of kernels therefore calls :func:`use_kernel_cache` before it defines its
first kernel: numba then caches the kernels it decorates in ``<base>/kernels-<hash>``, where
``<hash>`` is that of every kernel source file (:data:`KERNEL_SOURCES`), so an edit of any of
them starts a fresh folder. ``<base>`` is ``$NUMBA_CACHE_DIR`` when it is set, else
``neurodyn-flows`` in the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``; the
temporary folder without a home). If the folder cannot be written numba falls back to its own
places (next to the sources).

``make env`` ends by compiling every kernel into this cache (``python -m _runkit.warm_kernels``),
so no run or test pays a cold compile; ``make clean-kernels`` removes the cached kernels.

Examples
--------
>>> kernel_cache_dir().name.startswith("kernels-")
True
>>> sorted({p.parent.name for p in kernel_files()})
['_compiled', 'assignment']
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["KERNEL_SOURCES", "kernel_files", "kernel_cache_dir", "use_kernel_cache",
           "clear_kernel_caches"]

#: the files that hold compiled kernels and the helpers they compile in, relative to the
#: folder that holds the packages (a test checks that every file using numba is listed)
KERNEL_SOURCES = ("neurodyn/dynamics/_compiled/*.py", "flows/assignment/_*.py")

_ROOT = Path(__file__).resolve().parents[1]


def kernel_files() -> list[Path]:
    """The kernel source files of both packages (:data:`KERNEL_SOURCES`), sorted."""
    return sorted(p for pattern in KERNEL_SOURCES for p in _ROOT.glob(pattern))


def _base() -> Path:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = Path.home() / ".cache"
        except RuntimeError:  # no home directory to be found
            cache = Path(tempfile.gettempdir())
    return Path(cache) / "neurodyn-flows"


@functools.cache
def _sources_hash() -> str:
    digest = hashlib.sha256()
    for path in kernel_files():
        digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def kernel_cache_dir() -> Path:
    """The folder numba caches the kernels in: ``<base>/kernels-<hash of the kernel sources>``."""
    return _base() / f"kernels-{_sources_hash()}"


def use_kernel_cache() -> Path:
    """Point numba's cache at :func:`kernel_cache_dir` for the kernels decorated from now on.

    Called at the top of each kernel module, before its first ``@njit(cache=True)``; a kernel's
    cache folder is fixed when it is decorated. Returns the folder.
    """
    import numba

    folder = kernel_cache_dir()
    numba.config.CACHE_DIR = str(folder)
    return folder


def clear_kernel_caches() -> list[Path]:
    """Remove every ``kernels-*`` folder of the cache base (all versions of the sources).

    Returns
    -------
    list of Path
        The folders removed.
    """
    gone = sorted(_base().glob("kernels-*"))
    for folder in gone:
        shutil.rmtree(folder, ignore_errors=True)
    return gone
