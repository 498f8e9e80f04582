"""Tables of the compiled path for SEAL's energy (:class:`~neurodyn.energies.seal.SealEnergy`).

``F = S + P + L`` enters the compiled field as three pieces:

- the spectral energy ``S`` is a learned Fourier energy (the kernel's learned filter); a mode
  whose filter is only its anchored slope ``c_1`` (no curvature terms) with
  ``|c_1| <= COEF_RTOL max |c_1|`` is left out: ``|2 f'_k z_k| <= 2 |c_1| |z_k|`` on it, and
  the slopes the fixed-point condition puts on modes where the bump has no power are ratios of
  round-off (below ~1e-12 of the largest), which would make ``S`` a full-spectrum operator;
- the pointwise energy ``P`` is, per neuron, ``-h'(r) = -c_0 phi^{-1}(r) - sum_j c_j x^j``
  with ``phi^{-1}(r) = u`` clamped where the reference clamps the rate (``r`` within
  ``eps w`` of the ends of its range), so the kernel needs no logarithm;
- the phase-locking energy ``L`` is a handful of monomials of the modes, whose gradient the
  kernel forms from the DFT it has already taken (the modes are added to the block).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["COEF_RTOL", "learned_modes", "pointwise_table", "lock_modes", "lock_table"]

COEF_RTOL = 1e-12


def learned_modes(coef: np.ndarray, band: np.ndarray) -> np.ndarray:
    """The modes of a learned Fourier energy that interact (see the module docstring).

    Parameters
    ----------
    coef : effective coefficients ``(*spectral_shape, D)`` (``coef[..., 0]`` the slope term).
    band : the energy's band ``(*spectral_shape,)``, boolean.

    Examples
    --------
    >>> c = np.array([[2.0, 0.0], [1e-14, 0.0], [1e-14, 0.3], [0.0, 0.0]])
    >>> learned_modes(c, np.array([True, True, True, False])).tolist()
    [True, False, True, False]
    """
    slope = np.abs(coef[..., 0])
    top = float(slope[band].max()) if band.any() else 0.0
    curved = (np.abs(coef[..., 1:]) > 0).any(-1)
    return band & (curved | (slope > COEF_RTOL * top))


def pointwise_table(pointwise) -> tuple[np.ndarray, tuple]:
    """``(c, bounds)`` of a :class:`~neurodyn.energies.pointwise.PointwiseEnergy`.

    ``c = (c_0, c_1, ..., c_d)`` with the mask applied (``c_0 = 0`` without the inverse-rate
    term); ``bounds`` is ``((u_lo, u_hi) in float64, (u_lo, u_hi) in float32, r_lo, width)``:
    the potentials at which the reference's clamp of the rate sets in, in each dtype.
    """
    c = (pointwise.coef * pointwise.mask).detach().to(torch.float64).numpy().copy()
    act, lo, width = pointwise.activation, pointwise.lo, pointwise.width
    clamps = []
    for dtype in (torch.float64, torch.float32):
        tiny = torch.finfo(dtype).eps * width
        ends = torch.tensor([lo + tiny, lo + width - tiny], dtype=dtype)
        clamps.append(tuple(float(x) for x in act.inverse(ends)))
    return c, (clamps[0], clamps[1], float(lo), float(width))


def lock_modes(phaselock, spectral_shape) -> np.ndarray:
    """The modes the locking terms read, as a boolean ``spectral_shape`` array."""
    out = np.zeros(int(np.prod(spectral_shape)), dtype=bool)
    for (a, _), factors in phaselock._index:
        out[a] = True
        for (b, _), _n in factors:
            out[b] = True
    return out.reshape(spectral_shape)


def lock_table(phaselock, spectral_shape, rows: np.ndarray, cols: np.ndarray):
    """``(c, idx)``: strengths ``(T,)`` and ``idx (T, 1 + F, 4)`` of block positions.

    ``idx[t, 0]`` is the locked mode ``A``, ``idx[t, 1:]`` its factors ``B``, each
    ``(p, q, conj, n)``: its row and column in the kernel's mode block, whether the half
    spectrum stores its conjugate, and its power (``n = 1`` for ``A``; ``0`` pads).
    """
    last = spectral_shape[-1]
    row_of = {int(r): i for i, r in enumerate(rows)}
    col_of = {int(q): i for i, q in enumerate(cols)}

    def where(flat, conj, n):
        return (row_of[flat // last], col_of[flat % last], int(conj), int(n))

    width = 1 + max(len(fs) for _, fs in phaselock._index)
    idx = np.zeros((len(phaselock._index), width, 4), dtype=np.int64)
    for t, ((a, ca), factors) in enumerate(phaselock._index):
        idx[t, 0] = where(a, ca, 1)
        for f, ((b, cb), n) in enumerate(factors):
            idx[t, 1 + f] = where(b, cb, n)
    return phaselock.coef.detach().to(torch.float64).numpy().copy(), idx
