"""The compiled path of a sheet's RK4 steps: :class:`~.field.SheetField`'s tables handed to one
numba call (:mod:`neurodyn.dynamics._compiled.sheet`) that runs every step, and the energy after
each, without returning to Python.

The reference (:func:`~.relaxation._rk4_step` over :meth:`SheetField.field`) issues about forty
tensor operations per RK4 stage; below ~256 x 256 neurons their dispatch, not the FFT, is the
cost (at 64 x 64, 15 times the numpy FFT floor). The compiled path does the same arithmetic (the
same stages and weights, the filter of :meth:`SheetField.grad`, the energy of
:meth:`SheetField.energy`) with its own radix-2 FFT, so it needs both sides to be powers of two
and numba (the ``bench`` extra, or ``pip install numba``); otherwise the reference runs.
It agrees with the reference to rounding (``tests/neurodyn/test_sheet.py``).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import torch

from ..activation import Logistic

__all__ = ["AVAILABLE", "compiled_reason", "CompiledSteps"]

#: whether numba is installed (the kernels are compiled on first use)
AVAILABLE = importlib.util.find_spec("numba") is not None


def compiled_reason(field) -> str | None:
    """None when the compiled path can run ``field``, else why it cannot."""
    if not AVAILABLE:
        return "numba is not installed"
    bad = [n for n in field.geometry.shape if n < 4 or n & (n - 1)]
    if bad:
        return f"the sheet's sides {field.geometry.shape} are not both powers of two >= 4"
    return None


class CompiledSteps:
    """The tables and work sheets of one field on the compiled path.

    Parameters
    ----------
    field : SheetField
        The sheet's field (its dtype is the run's).
    """

    def __init__(self, field):
        from ..dynamics._compiled import sheet as kernels

        reason = compiled_reason(field)
        if reason is not None:
            raise RuntimeError(f"compiled sheet path: {reason}")
        self.kernels, self.dtype = kernels, field.dtype
        g = field.geometry
        n1, n2 = g.shape
        h = n2 // 2 + 1
        dt = np.float32 if field.dtype == torch.float32 else np.float64
        self.tw = kernels.twiddles(n1, dt) + kernels.twiddles(n2, dt)
        act = 0 if isinstance(field.activation, Logistic) else 1
        rmax = float(getattr(field.activation, "rmax", 1.0))
        self.ip = np.array([act], dtype=np.int64)
        self.fp = np.array([field.activation.gain, rmax, field.bias, 1.0 / field.tau, field.lo,
                            1.0 / field.width, *field.ulim], dtype=np.float64)
        f64 = [t.to(torch.float64).numpy() for t in (field.c1, field.scale, field.astar,
                                                     field.mult)]
        c1, scale, astar, mult = (np.broadcast_to(t, (n1, h)) for t in f64)
        self.modes = np.ascontiguousarray(np.stack(
            [c1, 1.0 / scale, np.full((n1, h), field.eps), astar, mult * scale]))
        self.band = field.band.numpy().astype(np.int64)
        self.bcoef = np.ascontiguousarray(field.band_coef.numpy())
        self.bz = np.zeros((len(self.band), 3))
        self._lock_tables(field, g)
        self.pw = np.ascontiguousarray(field.pw.numpy())
        self.work = tuple(np.empty((n1, n2), dtype=dt) for _ in range(4))
        self.spec = (np.empty((n1, h), dt), np.empty((n1, h), dt),
                     np.empty((n2, n1 // 2), dt), np.empty((n2, n1 // 2), dt),
                     np.empty(n2, dt), np.empty(n2, dt))

    def _lock_tables(self, field, g) -> None:
        """The locking terms as a block of the half spectrum (see ``_lock`` of the fast path)."""
        from ..dynamics._compiled.seal import lock_table

        part = field.lock_part
        if part is None:
            self.lk_c, self.lk_i = np.zeros(0), np.zeros((0, 1, 4), dtype=np.int64)
            self.lock_at, self.m2 = np.zeros((0, 0, 2), dtype=np.int64), np.zeros(0)
            self.zw, self.xs = np.zeros((4, 0, 0)), np.zeros(1, dtype=np.complex128)
            return
        h = g.spectral_shape[1]
        flat = field.lock.index.tolist()
        rows = np.array(sorted({i // h for i in flat}), dtype=np.int64)
        cols = np.array(sorted({i % h for i in flat}), dtype=np.int64)
        self.lk_c, self.lk_i = lock_table(part, g.spectral_shape, rows, cols)
        self.lock_at = np.ascontiguousarray(np.stack(np.broadcast_arrays(
            rows[:, None], cols[None, :]), -1))
        self.m2 = g.multiplicity()[0].numpy()[cols].copy()
        self.zw = np.zeros((4, len(rows), len(cols)))
        self.xs = np.zeros(self.lk_i.shape[1], dtype=np.complex128)

    def run(self, u: np.ndarray, steps: int, dt: float, audit: bool) -> tuple[int, np.ndarray]:
        """Advance ``u`` (``(n1, n2)`` in the field's dtype, C-contiguous) in place by
        ``steps`` RK4 steps; returns the steps taken (fewer when a state became non-finite)
        and, with ``audit``, the energy before and after each step (float64)."""
        energies = np.zeros(steps + 1 if audit else 0)
        taken = self.kernels.run(u, steps, float(dt), energies, self.work, self.spec, self.tw,
                                 self.ip, self.fp, self.modes, self.band, self.bcoef, self.bz,
                                 self.lock_at, self.lk_c, self.lk_i, self.m2, self.zw,
                                 self.xs, self.pw)
        return int(taken), energies
