"""Large sheets: a SEAL hex torus of about a million neurons, fitted and simulated in the
memory of a few dozen sheets.

- :mod:`.field` -- :class:`~.field.SheetField`, the fitted network's field, energy and
  Hessian-vector product as per-mode tables (one ``rfft2``/``irfft2`` pair, float32 or float64);
- :mod:`.relaxation` -- RK4 relaxation with the energy audited as it runs, and the Jacobian's zero
  modes found matrix-free (translation generators plus Lanczos);
- :mod:`.fast` -- the same RK4 steps and energy compiled in one numba call,
  where numba is installed and both sides are powers of two;
- :mod:`.memory` -- the memory a sheet needs, refused before allocation when it does not fit;
- :mod:`.large` -- :func:`~.large.large_torus`, the whole large torus end to end, each phase timed.

The fit itself is :func:`neurodyn.fitting.core.fit` with the streamed design
(:mod:`neurodyn.fitting.streamed`), which it picks for tori above 64 x 64.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "field": ("SheetField",),
    "relaxation": ("SheetRun", "relax", "rk4_steps", "ZeroModes", "zero_modes", "AUDIT_RTOL"),
    "memory": ("sheet_memory", "check_sheet_memory"),
    "large": ("SheetReport", "large_torus"),
})
