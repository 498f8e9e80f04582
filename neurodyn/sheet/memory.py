"""What a large sheet needs in memory, estimated from its size before anything is allocated.

The terms are counted in sheets (one value a neuron) and were measured on a 1,024 x 1,024 hex
torus (``bench/bench_sheet.py`` reports the estimate beside the measured peak):

- ``runtime``: the interpreter with torch loaded (about 230 MB resident);
- ``model``: the fitted network in float64 (the geometry's wave-vector and coordinate tables,
  the bump, the spectral energy's per-mode coefficients and anchors, the transport): 14 sheets;
- ``fit``: one step of the streamed design (:mod:`neurodyn.fitting.streamed`): a kind's
  ``batch`` states and about 28 sheets of work per state and of allocator slack, float64
  (measured: a 1,024 x 1,024 fit and run peaked at 576 MB with glibc's
  ``MALLOC_MMAP_THRESHOLD_=65536``, against 574 MB estimated);
- ``simulation``: the RK4 state and work sheets, the field's tables and spectra in the run's
  dtype (14 sheets), plus the float64 zero-mode check (10 sheets).

The fit and the simulation do not overlap, so the peak is ``runtime + model + max(fit,
simulation)``.
"""

from __future__ import annotations

import math

import torch

from _runkit import BadInput, check_memory

__all__ = ["sheet_memory", "check_sheet_memory", "RUNTIME_BYTES"]

#: resident memory of the interpreter with torch and the library imported
RUNTIME_BYTES = 230 * 2**20


def sheet_memory(n: tuple[int, int], dtype: torch.dtype = torch.float32, batch: int = 1
                 ) -> dict[str, float]:
    """Bytes each part of a large-sheet fit and run needs (see the module docstring).

    Parameters
    ----------
    n : tuple of int
        ``(n1, n2)``.
    dtype : torch.dtype
        The simulation's dtype.
    batch : int
        The fit's ``batch`` (states per probe kind).

    Returns
    -------
    dict
        ``runtime``, ``model``, ``fit``, ``simulation`` and ``peak`` in bytes.

    Examples
    --------
    >>> m = sheet_memory((1024, 1024))
    >>> round(m["peak"] / 2**20)
    574
    """
    neurons = float(math.prod(int(x) for x in n))
    f64 = 8.0 * neurons
    item = float(torch.empty((), dtype=dtype).element_size())
    out = {"runtime": float(RUNTIME_BYTES), "model": 14 * f64,
           "fit": (batch + 28) * f64, "simulation": 14 * item * neurons + 10 * f64}
    out["peak"] = out["runtime"] + out["model"] + max(out["fit"], out["simulation"])
    return out


def check_sheet_memory(n: tuple[int, int], dtype: torch.dtype = torch.float32, batch: int = 1,
                       limit: float | None = None) -> dict[str, float]:
    """Refuse, before anything is allocated, a sheet whose estimated peak does not fit.

    The limit is :func:`_runkit.check_memory`'s (80% of the smallest of the available memory,
    the ``RLIMIT_AS`` address space left and the cgroup limit) unless ``limit`` is given.

    Parameters
    ----------
    n : tuple of int
        ``(n1, n2)``, each >= 8.
    dtype : torch.dtype
        The simulation's dtype.
    batch : int
        The fit's ``batch``.
    limit : float or None
        Bytes allowed (None: what the machine allows now).

    Returns
    -------
    dict
        :func:`sheet_memory` when it fits.

    Raises
    ------
    BadInput
        Naming ``n``, the estimate and the limit.

    Examples
    --------
    >>> check_sheet_memory((2**20, 2**20), limit=2**34)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: n is too large: the run would need about ... TiB of memory, ...
    """
    if len(n) != 2 or any(isinstance(x, bool) or not isinstance(x, int) or x < 8 for x in n):
        raise BadInput(f"n={n!r}: a sheet needs two integer sizes >= 8")
    est = sheet_memory(n, dtype, batch)
    check_memory("n", est["peak"], limit=limit)
    return est
