"""Compiled (numba) RK4 steps of a large sheet's field (:class:`~neurodyn.sheet.field.SheetField`,
driven by :mod:`neurodyn.sheet.fast`); imported only when numba is present.

One call advances the state by any number of classical RK4 steps (the stages and weights of
:func:`neurodyn.sheet.relaxation._rk4_step`, in the same order) with the field

.. math:: \\tau \\dot u = -u + b + \\mathrm{idft}(S(z)) - h'(\\phi(u)), \\qquad
          z = \\mathrm{dft}(\\phi(u)),

``S`` the spectral filter of :meth:`SheetField.grad` (``c_1 / a_k`` on every mode, the
curvature band's polynomial on its few modes, the locking gradient on its three) and ``h'`` the
pointwise slope. Nothing passes through Python between stages: at small sheets the reference's
cost is the dispatch of ~40 tensor operations a stage, not its arithmetic.

The two-dimensional real FFT is written here (radix 2, so both sides must be powers of two):
rows two at a time as one complex transform (``x = r_i + i r_{i+1}``, split by Hermitian
symmetry), columns as complex transforms vectorised across the half spectrum's columns. Its
normalisation is the geometry's (``1/N`` forward, none back), and the inverse reads only the
real part of the last axis's zero and Nyquist columns, as ``irfftn`` does. Per-neuron passes
run in the state's dtype; the per-mode filter runs in float64, as the reference's band does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from _runkit import BadInput
from _runkit.kernels import use_kernel_cache

from .fastexp import FAST
from .kernels import _lock, _rate

use_kernel_cache()

__all__ = ["run", "twiddles"]


def twiddles(n: int, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cos, sin, rev)`` of a length-``n`` radix-2 FFT: ``cos/sin(2 pi j / n)`` for
    ``j < n/2`` (computed in float64, stored in ``dtype``) and the bit-reversal permutation.

    >>> c, s, rev = twiddles(8, np.float64)
    >>> rev.tolist(), round(float(s[2]), 12)
    ([0, 4, 2, 6, 1, 5, 3, 7], 1.0)
    """
    if n < 2 or n & (n - 1):
        raise BadInput(f"n={n!r}: the compiled FFT needs a power of two >= 2", param="n")
    j = np.arange(n // 2)
    bits = n.bit_length() - 1
    rev = np.array([int(format(i, f"0{bits}b")[::-1], 2) for i in range(n)], dtype=np.int64)
    return (np.cos(2 * np.pi * j / n).astype(dtype), np.sin(2 * np.pi * j / n).astype(dtype),
            rev)


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _butterflies(xr, xi, cs, sn, sign):
    """The radix-2 passes of a complex FFT along the first axis of ``xr + i xi`` (rows already
    in bit-reversed order), every column at once: the innermost loop runs along a row
    (contiguous, vectorised). ``sign`` +1 forward (``exp(-i ...)``), -1 inverse."""
    n, h = xr.shape
    m = 2
    while m <= n:
        half = m // 2
        step = n // m
        for k in range(0, n, m):
            for j in range(half):
                c = cs[j * step]
                s = sign * sn[j * step]
                a, b = k + j, k + j + half
                for q in range(h):
                    tr = c * xr[b, q] + s * xi[b, q]
                    ti = c * xi[b, q] - s * xr[b, q]
                    xr[b, q] = xr[a, q] - tr
                    xi[b, q] = xi[a, q] - ti
                    xr[a, q] += tr
                    xi[a, q] += ti
        m *= 2


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _fft_columns(sr, si, cs, sn, rev, sign):
    """In-place complex FFT along the first axis of ``sr + i si`` ``(n1, h)``."""
    n, h = sr.shape
    for i in range(n):
        j = rev[i]
        if j > i:
            for q in range(h):
                sr[i, q], sr[j, q] = sr[j, q], sr[i, q]
                si[i, q], si[j, q] = si[j, q], si[i, q]
    _butterflies(sr, si, cs, sn, sign)


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _rfft2(r, sr, si, xr, xi, c1, s1, rev1, c2, s2, rev2):
    """``(sr + i si) = rfft2(r) / N``. The rows go in pairs ``r_2b + i r_2b+1`` as the columns
    of ``xr + i xi`` ``(n2, n1 / 2)`` (transposed, in bit-reversed order), all transformed at
    once and split by Hermitian symmetry; then the columns of the half spectrum."""
    n1, n2 = r.shape
    h, pairs = n2 // 2 + 1, n1 // 2
    scale = r.dtype.type(0.5 / (n1 * n2))
    for b in range(pairs):
        for j in range(n2):
            xr[rev2[j], b] = r[2 * b, j]
            xi[rev2[j], b] = r[2 * b + 1, j]
    _butterflies(xr, xi, c2, s2, 1)
    for q in range(h):
        nq = (n2 - q) % n2
        for b in range(pairs):
            sr[2 * b, q] = (xr[q, b] + xr[nq, b]) * scale
            si[2 * b, q] = (xi[q, b] - xi[nq, b]) * scale
            sr[2 * b + 1, q] = (xi[q, b] + xi[nq, b]) * scale
            si[2 * b + 1, q] = (xr[nq, b] - xr[q, b]) * scale
    _fft_columns(sr, si, c1, s1, rev1, 1)


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _irfft2(sr, si, out, xr, xi, c1, s1, rev1, c2, s2, rev2):
    """``out = irfft2(sr + i si)`` without normalisation (``sr, si`` are overwritten): the
    columns, then the rows in pairs as in :func:`_rfft2`; the imaginary parts of the last
    axis's zero and Nyquist columns are ignored, as ``irfftn`` does."""
    n1, n2 = out.shape
    half, pairs = n2 // 2, n1 // 2
    _fft_columns(sr, si, c1, s1, rev1, -1)
    for b in range(pairs):
        xr[rev2[0], b] = sr[2 * b, 0]
        xi[rev2[0], b] = sr[2 * b + 1, 0]
        xr[rev2[half], b] = sr[2 * b, half]
        xi[rev2[half], b] = sr[2 * b + 1, half]
    for q in range(1, half):
        fq, bq = rev2[q], rev2[n2 - q]
        for b in range(pairs):
            ar, ai, br, bi = sr[2 * b, q], si[2 * b, q], sr[2 * b + 1, q], si[2 * b + 1, q]
            xr[fq, b] = ar - bi
            xi[fq, b] = ai + br
            xr[bq, b] = ar + bi
            xi[bq, b] = br - ai
    _butterflies(xr, xi, c2, s2, -1)
    for b in range(pairs):
        for j in range(n2):
            out[2 * b, j] = xr[j, b]
            out[2 * b + 1, j] = xi[j, b]


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _filter(sr, si, modes, band, bcoef, bz, lock_at, lk_c, lk_i, m2, zw, xs):
    """``z -> S(z)`` in place: ``c_1 / a`` on every mode, ``(c_1 + sum_d c_d y^(d-1)) / a``
    on the curvature band, plus the locking gradient (:func:`_lock`, from the unfiltered modes).

    ``modes (4, n1, h)`` float64 holds ``c_1``, ``1/scale``, ``eps`` and ``a*``; ``band (M,)``
    flat mode indices with ``bcoef (M, D)`` (``bcoef[:, d]`` the coefficient of ``y^d`` in
    ``f'``, ``y = a - a*``) and ``bz (M, 3)`` work; ``lock_at (R, C, 2)`` the sheet's row and
    column of each cell of the locking block ``zw (4, R, C)``."""
    h = sr.shape[1]
    dty = sr.dtype.type
    for p in range(lock_at.shape[0]):  # the locking block reads the unfiltered modes
        for q in range(lock_at.shape[1]):
            zw[0, p, q] = 0.0
            zw[1, p, q] = 0.0
            zw[2, p, q] = sr[lock_at[p, q, 0], lock_at[p, q, 1]]
            zw[3, p, q] = si[lock_at[p, q, 0], lock_at[p, q, 1]]
    for b in range(band.shape[0]):
        p, q = band[b] // h, band[b] % h
        fr, fi = float(sr[p, q]), float(si[p, q])
        a = np.sqrt((fr * fr + fi * fi) * modes[1, p, q] + modes[2, p, q])
        y = a - modes[3, p, q]
        acc = 0.0
        for d in range(bcoef.shape[1] - 1, 0, -1):
            acc = (acc + bcoef[b, d]) * y
        bz[b, 0], bz[b, 1], bz[b, 2] = fr, fi, (modes[0, p, q] + acc) / a
    for p in range(sr.shape[0]):
        for q in range(h):
            fr, fi = float(sr[p, q]), float(si[p, q])
            f = modes[0, p, q] / np.sqrt((fr * fr + fi * fi) * modes[1, p, q] + modes[2, p, q])
            sr[p, q] = dty(f * fr)
            si[p, q] = dty(f * fi)
    for b in range(band.shape[0]):
        p, q = band[b] // h, band[b] % h
        sr[p, q] = dty(bz[b, 2] * bz[b, 0])
        si[p, q] = dty(bz[b, 2] * bz[b, 1])
    if lk_c.shape[0] > 0:
        _lock(zw, lk_c, lk_i, m2, xs)
        for p in range(lock_at.shape[0]):
            for q in range(lock_at.shape[1]):
                i, j = lock_at[p, q, 0], lock_at[p, q, 1]
                sr[i, j] += dty(zw[0, p, q])
                si[i, j] += dty(zw[1, p, q])


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _rates(u, r, act, gain, rmax):
    """``r = phi(u)``: ``act`` 0 the logistic ``rmax / (1 + exp(-gain u))``, 1 ``tanh(gain u)``
    (the fast path's clamped exponential, vectorised)."""
    dty = u.dtype.type
    if act == 0:
        g, sc, off = dty(-gain), dty(rmax), dty(0.0)
    else:
        g, sc, off = dty(-2.0 * gain), dty(2.0), dty(1.0)
    one = dty(1.0)
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            r[i, j] = _rate(u[i, j], g, sc, off, one)


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _field(y, k, r, spec, tw, ip, fp, modes, band, bcoef, bz, lock_at, lk_c, lk_i, m2, zw, xs,
           pw):
    """``k = field(y)`` (see the module docstring); ``r`` receives the rates.

    ``spec`` is ``(sr, si, xr, xi, x, acc)`` (see :func:`run`); ``tw`` is ``(c1, s1, rev1,
    c2, s2, rev2)``; ``ip = (act,)``; ``fp = (gain, rmax, bias,
    1/tau, r_lo, 1/width, u_lo, u_hi)`` (the pointwise slope's clamp and scale)."""
    c1, s1, rev1, c2, s2, rev2 = tw
    sr, si, xr, xi, x, acc = spec
    _rates(y, r, ip[0], fp[0], fp[1])
    _rfft2(r, sr, si, xr, xi, c1, s1, rev1, c2, s2, rev2)
    _filter(sr, si, modes, band, bcoef, bz, lock_at, lk_c, lk_i, m2, zw, xs)
    _irfft2(sr, si, k, xr, xi, c1, s1, rev1, c2, s2, rev2)
    dty = y.dtype.type
    b, it, lo, iw = dty(fp[2]), dty(fp[3]), dty(fp[4]), dty(fp[5])
    ulo, uhi, c0 = dty(fp[6]), dty(fp[7]), dty(pw[0])
    n2 = y.shape[1]
    for i in range(y.shape[0]):
        for j in range(n2):  # one vectorised pass per term of sum_d c_d x^d (Horner)
            x[j] = (r[i, j] - lo) * iw
            acc[j] = dty(0.0)
        for d in range(pw.shape[0] - 1, 0, -1):
            cd = dty(pw[d])
            for j in range(n2):
                acc[j] = (acc[j] + cd) * x[j]
        for j in range(n2):
            v = y[i, j]
            pot = min(max(v, ulo), uhi)
            k[i, j] = (k[i, j] - acc[j] - c0 * pot - v + b) * it


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _softplus(x):
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _leak_integral(x, act, gain, rmax):
    """``G(phi(u))`` at ``x = gain u`` in float64 (:meth:`Activation.integral`)."""
    if act == 0:
        s = 1.0 / (1.0 + np.exp(-x))
        return -(rmax / gain) * (s * _softplus(-x) + (1.0 - s) * _softplus(x))
    ax = abs(x)
    return (x * np.tanh(x) - (ax + _softplus(-2.0 * ax) - np.log(2.0))) / gain


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _lock_value(zw, lk_c, lk_i, xs):
    """``sum_t c_t (|w_t| - Re w_t)`` from the unfiltered block ``zw[2] + i zw[3]``."""
    out = 0.0
    nf = lk_i.shape[1]
    for t in range(lk_c.shape[0]):
        for f in range(nf):
            x = complex(zw[2, lk_i[t, f, 0], lk_i[t, f, 1]], zw[3, lk_i[t, f, 0], lk_i[t, f, 1]])
            xs[f] = x.conjugate() if lk_i[t, f, 2] else x
        w = xs[0]
        for f in range(1, nf):
            for _ in range(lk_i[t, f, 3]):
                w = w * xs[f].conjugate()
        out += lk_c[t] * (abs(w) - w.real)
    return out


@njit(cache=True, fastmath=FAST, error_model="numpy", _nrt=False)
def _energy(u, r, spec, tw, ip, fp, modes, band, bcoef, lock_at, lk_c, lk_i, zw,
            xs, pw):
    """The Hopfield energy ``E = F(r) - b.r + sum_i G(r_i)`` of ``u``, summed in float64
    (:meth:`SheetField.energy`); ``modes[4]`` holds ``m_k scale_k``."""
    c1, s1, rev1, c2, s2, rev2 = tw
    sr, si, xr, xi = spec[0], spec[1], spec[2], spec[3]
    gain, rmax, bias = fp[0], fp[1], fp[2]
    lo, iw, ulo, uhi = fp[4], fp[5], fp[6], fp[7]
    _rates(u, r, ip[0], gain, rmax)
    _rfft2(r, sr, si, xr, xi, c1, s1, rev1, c2, s2, rev2)
    n1, h = sr.shape
    size = float(u.shape[0] * u.shape[1])
    for p in range(lock_at.shape[0]):
        for q in range(lock_at.shape[1]):
            zw[2, p, q] = sr[lock_at[p, q, 0], lock_at[p, q, 1]]
            zw[3, p, q] = si[lock_at[p, q, 0], lock_at[p, q, 1]]
    spectral = 0.0
    for p in range(n1):
        for q in range(h):
            fr, fi = float(sr[p, q]), float(si[p, q])
            a = np.sqrt((fr * fr + fi * fi) * modes[1, p, q] + modes[2, p, q])
            spectral += modes[4, p, q] * modes[0, p, q] * (a - modes[3, p, q])
    for b in range(band.shape[0]):
        p, q = band[b] // h, band[b] % h
        fr, fi = float(sr[p, q]), float(si[p, q])
        y = np.sqrt((fr * fr + fi * fi) * modes[1, p, q] + modes[2, p, q]) - modes[3, p, q]
        acc = 0.0
        for d in range(bcoef.shape[1] - 1, 0, -1):
            acc = (acc + bcoef[b, d] / (d + 1)) * y
        spectral += modes[4, p, q] * acc * y
    out = -size * spectral
    if lk_c.shape[0] > 0:
        out += size * _lock_value(zw, lk_c, lk_i, xs)
    npw = pw.shape[0]
    width = 1.0 / iw
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            v, rate = float(u[i, j]), float(r[i, j])
            x = (rate - lo) * iw
            acc = 0.0
            for d in range(npw - 1, 0, -1):
                acc = (acc + pw[d] / (d + 1)) * x
            pot = min(max(v, ulo), uhi)
            out += acc * x * width + pw[0] * _leak_integral(gain * pot, ip[0], gain, rmax)
            out += _leak_integral(gain * v, ip[0], gain, rmax) - bias * rate
    return out


@njit(cache=True, error_model="numpy", _nrt=False)
def _finite(u):
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            if not np.isfinite(u[i, j]):
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, nogil=True)
def run(u, steps, dt, energies, work, spec, tw, ip, fp, modes, band, bcoef, bz, lock_at, lk_c,
        lk_i, m2, zw, xs, pw):
    """Advance ``u`` (``(n1, n2)``, in place) by ``steps`` classical RK4 steps of size ``dt``.

    ``work`` is four ``(n1, n2)`` sheets (the stage field, the accumulator, the stage state,
    the rates), ``spec`` the spectrum ``(sr, si)`` ``(n1, n2 // 2 + 1)``, the row pairs'
    transforms ``(xr, xi)`` ``(n2, n1 // 2)`` and two row buffers ``(n2,)``, all in ``u``'s
    dtype. With ``energies`` of length ``steps + 1`` the
    energy is written before the first step and after every step (float64); an empty array
    skips it. Returns the number of steps taken: fewer than ``steps`` when a state became
    non-finite (that state is left in ``u``)."""
    dty = u.dtype.type
    n1, n2 = u.shape
    k, acc, tmp, r = work
    sixth, third, half, whole = dty(dt / 6), dty(dt / 3), dty(dt / 2), dty(dt)
    audit = energies.shape[0] > 0
    if audit:
        energies[0] = _energy(u, r, spec, tw, ip, fp, modes, band, bcoef, lock_at,
                              lk_c, lk_i, zw, xs, pw)
    for s in range(steps):
        _field(u, k, r, spec, tw, ip, fp, modes, band, bcoef, bz, lock_at, lk_c,
               lk_i, m2, zw, xs, pw)
        for i in range(n1):
            for j in range(n2):
                acc[i, j] = u[i, j] + sixth * k[i, j]
                tmp[i, j] = u[i, j] + half * k[i, j]
        for stage in range(3):  # k2, k3, k4: weights dt/3, dt/3, dt/6
            _field(tmp, k, r, spec, tw, ip, fp, modes, band, bcoef, bz, lock_at,
                   lk_c, lk_i, m2, zw, xs, pw)
            w = third if stage < 2 else sixth
            c = half if stage == 0 else whole
            for i in range(n1):
                for j in range(n2):
                    acc[i, j] += w * k[i, j]
                    tmp[i, j] = u[i, j] + c * k[i, j]
        for i in range(n1):
            for j in range(n2):
                u[i, j] = acc[i, j]
        if audit:
            energies[s + 1] = _energy(u, r, spec, tw, ip, fp, modes, band, bcoef,
                                      lock_at, lk_c, lk_i, zw, xs, pw)
        if not _finite(u):
            return s + 1
    return steps
