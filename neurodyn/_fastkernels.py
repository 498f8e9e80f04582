"""Compiled (numba) kernels of the fixed-step fast path; imported only when numba is present.

One call integrates a chunk of steps for every state of a batch, state by state (each state's
loop stays in cache), with the field

.. math:: \\tau \\dot u = -u + b + \\mathrm{idft}\\big(A_k(|z_k|^2)\\, z_k
          + i\\, (k \\cdot v)\\, h_k z_k\\big) + W r, \\qquad r = \\phi(u),

where the DFT runs only over the modes that interact (a separable ``K1 x K2`` block of wave
vectors: ``O(N (K1 + K2))`` work instead of a full FFT), ``A_k`` is the learned per-mode filter
or a fixed spectrum, ``h_k`` the transport gains and ``W`` an optional dense matrix.

The stage formulas are torchdiffeq's (Euler, midpoint, the 3/8-rule RK4), so both paths agree to
round-off. The arithmetic of the interaction is compiled with reassociation (vectorised sums);
the state update and the range check are compiled strictly, so a NaN is never optimised away.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_FAST = {"reassoc", "contract", "nsz", "arcp"}
# exp(x) on |x| <= 40 as (Taylor_12(x / 64))^64: relative error below 1e-14 (float64); a
# logistic rate outside |gain u| <= 40 is within 4.3e-18 of 0 or 1.
_CLAMP = 40.0


@njit(cache=True, fastmath=_FAST, error_model="numpy", inline="always")
def _exp_clamped(x):
    """``exp(x)`` for ``x`` clamped to ``[-_CLAMP, _CLAMP]``, as ``(Taylor_12(x / 64))^64``."""
    x = x if x < _CLAMP else _CLAMP
    x = x if x > -_CLAMP else -_CLAMP
    t = x * 0.015625
    p = 1.0 + t * (1.0 + t * (0.5 + t * (1 / 6 + t * (1 / 24 + t * (1 / 120 + t * (
        1 / 720 + t * (1 / 5040 + t * (1 / 40320 + t * (1 / 362880 + t * (
            1 / 3628800 + t * (1 / 39916800 + t * (1 / 479001600))))))))))))
    for _ in range(6):
        p = p * p
    return p


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False)
def _rates(u, r, act, gain, rmax):
    """``r = phi(u)``: ``act`` 0 logistic ``rmax sigma(gain u)``, 1 ``tanh(gain u)``."""
    n = u.shape[0]
    one = u.dtype.type(1.0)
    two = u.dtype.type(2.0)
    if act == 0:
        g = u.dtype.type(-gain)
        for j in range(n):
            r[j] = rmax / (one + _exp_clamped(g * u[j]))
    else:
        g = u.dtype.type(-2.0 * gain)
        for j in range(n):
            r[j] = two / (one + _exp_clamped(g * u[j])) - one


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False)
def _interaction(u, out, r, a_re, a_im, z_re, z_im, z0r, z0i, act, gain, rmax, n1, n2,
                 f1c, f1s, f2c, f2s, i2c, i2s, kind, spec, scale, gstar, gam, hcoef, dense,
                 kh, pw, pwp, lk_c, lk_i, m2, xs, v, with_v):
    """``out = idft(A z + i (k.v) h z) + W r`` at ``r = phi(u)`` (the part of the field that is
    not the leak or the bias). Shapes: ``u, out, r (n1 * n2,)``; ``f1c, f1s (K1, n1)`` and
    ``f2c, f2s (K2, n2)`` forward tables (``cos``, ``-sin``, divided by the axis length),
    ``i2c, i2s (K2, n2)`` inverse tables (multiplicity ``m_k2`` times ``cos``, ``-sin``);
    ``spec``, ``scale``, ``gstar``, ``gam (K1, K2)``; ``hcoef (K1, K2, D)``; ``kh (K1, K2,
    dim)``; ``dense (N, N)`` or empty; ``a_*`` ``(n1, K2)`` and ``z_* (K1, K2)`` work arrays.
    ``kind`` 0 a fixed spectrum ``A = spec``, 1 the learned filter in the power, 2 none
    (dense only), 3 the learned filter in the amplitude ``a = sqrt(p / scale + gam)``,
    ``A = Phi'(a) / a`` with ``Phi'`` the polynomial ``hcoef`` in ``a - gstar``.
    SEAL's parts: ``pw`` the pointwise coefficients (empty: none) and ``pwp`` its
    ``(u_lo, u_hi, r_lo, 1 / width)``; ``lk_c, lk_i`` the locking terms (see
    :func:`neurodyn._fastseal.lock_table`), ``m2 (K2,)`` the columns' multiplicities,
    ``z0r, z0i (K1, K2)`` the unfiltered modes they read and ``xs`` a complex work array.
    Compiled without reference counting (``_nrt=False``): the calls allocate nothing."""
    _rates(u, r, act, gain, rmax)
    k1n, k2n = f1c.shape[0], f2c.shape[0]
    # forward: along the last axis, then along the first
    for i in range(n1):
        for q in range(k2n):
            sr = 0.0
            si = 0.0
            for j in range(n2):
                x = r[i * n2 + j]
                sr += f2c[q, j] * x
                si += f2s[q, j] * x
            a_re[i, q] = sr
            a_im[i, q] = si
    for p in range(k1n):
        for q in range(k2n):
            sr = 0.0
            si = 0.0
            for i in range(n1):
                c = f1c[p, i]
                s = f1s[p, i]
                sr += c * a_re[i, q] - s * a_im[i, q]
                si += c * a_im[i, q] + s * a_re[i, q]
            z0r[p, q] = sr
            z0i[p, q] = si
            # filter and transport on the mode (p, q)
            pwr = sr * sr + si * si
            if kind == 0:
                f = spec[p, q]
            elif kind == 1:
                x = pwr / scale[p, q]
                g = x / (1.0 + x)
                g1 = 1.0 / ((1.0 + x) * (1.0 + x))
                y = (g - gstar[p, q]) / gam[p, q]
                deg = hcoef.shape[2]
                acc = hcoef[p, q, deg - 1]
                for d in range(deg - 2, -1, -1):
                    acc = acc * y + hcoef[p, q, d]
                f = 2.0 * g1 * acc
            elif kind == 3:
                a = np.sqrt(pwr / scale[p, q] + gam[p, q])
                y = a - gstar[p, q]
                deg = hcoef.shape[2]
                acc = hcoef[p, q, deg - 1]
                for d in range(deg - 2, -1, -1):
                    acc = acc * y + hcoef[p, q, d]
                f = acc / a
            else:
                f = 0.0
            wr = f * sr
            wi = f * si
            if with_v:
                kv = 0.0
                for a in range(kh.shape[2]):
                    kv += kh[p, q, a] * v[a]
                wr -= kv * si
                wi += kv * sr
            z_re[p, q] = wr
            z_im[p, q] = wi
    if lk_c.shape[0] > 0:
        _lock(z0r, z0i, z_re, z_im, lk_c, lk_i, m2, xs)
    # inverse: along the first axis (complex), then the real sum along the last
    for i in range(n1):
        for q in range(k2n):
            sr = 0.0
            si = 0.0
            for p in range(k1n):
                c = f1c[p, i]
                s = -f1s[p, i] * n1  # +sin(k1 theta_i)
                c = c * n1
                sr += c * z_re[p, q] - s * z_im[p, q]
                si += c * z_im[p, q] + s * z_re[p, q]
            a_re[i, q] = sr
            a_im[i, q] = si
    for i in range(n1):
        for j in range(n2):
            out[i * n2 + j] = 0.0
        for q in range(k2n):
            cr = a_re[i, q]
            ci = a_im[i, q]
            for j in range(n2):
                out[i * n2 + j] += cr * i2c[q, j] + ci * i2s[q, j]
    if dense.shape[0] > 0:
        n = r.shape[0]
        for j in range(n):
            acc = 0.0
            for m in range(n):
                acc += dense[j, m] * r[m]
            out[j] += acc
    npw = pw.shape[0]
    if npw > 0:
        lo_u, hi_u, lo, inv_w = pwp[0], pwp[1], pwp[2], pwp[3]
        for j in range(r.shape[0]):
            x = (r[j] - lo) * inv_w
            acc = 0.0
            for d in range(npw - 1, 0, -1):
                acc = (acc + pw[d]) * x
            pot = u[j] if u[j] < hi_u else hi_u  # phi^{-1}(r) where the reference clamps r
            pot = pot if pot > lo_u else lo_u
            out[j] -= pw[0] * pot + acc


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False)
def _lock(z0r, z0i, z_re, z_im, lk_c, lk_i, m2, xs):
    """Add ``-grad L`` of the locking terms ``N c_t (|w_t| - Re w_t)``, ``w_t = z_A prod_B
    conj(z_B)^n_B``, to the filtered modes ``z_re + i z_im`` (before the inverse DFT);
    ``xs (1 + F,)`` complex work array."""
    nf = lk_i.shape[1]
    for t in range(lk_c.shape[0]):
        c = lk_c[t]
        for f in range(nf):
            pos, qos = lk_i[t, f, 0], lk_i[t, f, 1]
            x = complex(z0r[pos, qos], z0i[pos, qos])
            xs[f] = x.conjugate() if lk_i[t, f, 2] else x
        w = xs[0]
        prod = 1.0 + 0.0j
        for f in range(1, nf):
            for _ in range(lk_i[t, f, 3]):
                w = w * xs[f].conjugate()
                prod = prod * xs[f]
        aw = abs(w)
        unit = w / aw if aw > 0 else 0.0j
        for f in range(nf):
            n = lk_i[t, f, 3]
            if n == 0:
                continue
            if f == 0:
                gx = (unit - 1.0) * prod
            else:
                rest = xs[0]
                for e in range(1, nf):
                    for _ in range(lk_i[t, e, 3] - (1 if e == f else 0)):
                        rest = rest * xs[e].conjugate()
                gx = (unit.conjugate() - 1.0) * n * rest
            gz = c * (gx.conjugate() if lk_i[t, f, 2] else gx)
            pos, qos = lk_i[t, f, 0], lk_i[t, f, 1]
            z_re[pos, qos] -= gz.real / m2[qos]
            z_im[pos, qos] -= gz.imag / m2[qos]


@njit(cache=True, error_model="numpy", _nrt=False)
def _field(y, k, w, r, a_re, a_im, z_re, z_im, z0r, z0i, bias, inv_tau, act, gain, rmax,
           n1, n2, f1c, f1s, f2c, f2s, i2c, i2s, kind, spec, scale, gstar, gam, hcoef, dense,
           kh, pw, pwp, lk_c, lk_i, m2, xs, v, with_v):
    """``k = (-y + b + interaction(y)) / tau`` (strict arithmetic: NaN propagates)."""
    _interaction(y, w, r, a_re, a_im, z_re, z_im, z0r, z0i, act, gain, rmax, n1, n2, f1c,
                 f1s, f2c, f2s, i2c, i2s, kind, spec, scale, gstar, gam, hcoef, dense, kh, pw,
                 pwp, lk_c, lk_i, m2, xs, v, with_v)
    for j in range(y.shape[0]):
        k[j] = (-y[j] + bias[j] + w[j]) * inv_tau


@njit(cache=True, error_model="numpy")
def integrate(u, first, nsteps, total, dt, inv_tau, method, save_every, saved, check_every,
              limit, bias, act, gain, rmax, n1, n2, f1c, f1s, f2c, f2s, i2c, i2s, kind, spec,
              scale, gstar, gam, hcoef, dense, kh, pw, pwp, lk_c, lk_i, m2, vel, noise, xi,
              fail):
    """Advance every state ``u[b]`` (``(B, N)``, in place) by steps ``first .. first+nsteps-1``.

    ``method`` 0 Euler (Euler-Maruyama with ``noise > 0`` and draws ``xi (nsteps, B, N)``),
    1 midpoint, 2 RK4 (3/8 rule). ``vel (nsteps, stages, Bv, dim)`` holds the velocity at every
    stage time (empty without velocity). The state after global step ``s`` is written to
    ``saved[s // save_every]`` when ``s`` is a multiple of ``save_every`` or ``s == total``;
    every ``check_every`` steps (and at the end) a state with an entry beyond ``limit`` in
    absolute value, or not finite, stops and records its step in ``fail[b]``.
    """
    bsz, n = u.shape
    dty = u.dtype.type
    y = np.empty(n, u.dtype)
    y1 = np.empty(n, u.dtype)
    ks = np.empty((4, n), u.dtype)
    w = np.empty(n, u.dtype)
    r = np.empty(n, u.dtype)
    k2n = f2c.shape[0]
    k1n = f1c.shape[0]
    a_re = np.empty((n1, k2n), u.dtype)
    a_im = np.empty((n1, k2n), u.dtype)
    z_re = np.empty((k1n, k2n), u.dtype)
    z_im = np.empty((k1n, k2n), u.dtype)
    z0r = np.empty((k1n, k2n), u.dtype)
    z0i = np.empty((k1n, k2n), u.dtype)
    xs = np.empty(lk_i.shape[1], np.complex128)
    with_v = vel.shape[0] > 0
    vdim = vel.shape[3] if with_v else 1
    vv = np.zeros(vdim, u.dtype)
    h = dty(dt)
    half = dty(0.5) * h
    third = dty(1.0 / 3.0)
    eighth = dty(0.125)
    sq = dty(np.sqrt(dt) * noise)
    for b in range(bsz):
        if fail[b] >= 0:
            continue
        for j in range(n):
            y[j] = u[b, j]
        vb = 0 if (not with_v or vel.shape[2] == 1) else b
        for i in range(nsteps):
            nst = 1 if method == 0 else (2 if method == 1 else 4)
            for st in range(nst):
                # the stage's state, as torchdiffeq forms it
                if st == 0:
                    for j in range(n):
                        y1[j] = y[j]
                elif method == 1:
                    for j in range(n):
                        y1[j] = y[j] + ks[0, j] * half
                elif st == 1:
                    for j in range(n):
                        y1[j] = y[j] + h * ks[0, j] * third
                elif st == 2:
                    for j in range(n):
                        y1[j] = y[j] + h * (ks[1, j] - ks[0, j] * third)
                else:
                    for j in range(n):
                        y1[j] = y[j] + h * (ks[0, j] - ks[1, j] + ks[2, j])
                if with_v:
                    for a in range(vdim):
                        vv[a] = vel[i, st, vb, a]
                _field(y1, ks[st], w, r, a_re, a_im, z_re, z_im, z0r, z0i, bias, inv_tau, act,
                       gain, rmax, n1, n2, f1c, f1s, f2c, f2s, i2c, i2s, kind, spec, scale,
                       gstar, gam, hcoef, dense, kh, pw, pwp, lk_c, lk_i, m2, xs, vv, with_v)
            if method == 0:
                if noise > 0:
                    for j in range(n):
                        y[j] = y[j] + h * ks[0, j] + sq * xi[i, b, j]
                else:
                    for j in range(n):
                        y[j] = y[j] + h * ks[0, j]
            elif method == 1:
                for j in range(n):
                    y[j] = y[j] + h * ks[1, j]
            else:
                for j in range(n):
                    y[j] = y[j] + (ks[0, j] + 3 * (ks[1, j] + ks[2, j]) + ks[3, j]) * h * eighth
            s = first + i + 1
            if s % check_every == 0 or s == total or i == nsteps - 1:
                bad = False
                for j in range(n):
                    if not (abs(y[j]) <= limit):
                        bad = True
                        break
                if bad:
                    fail[b] = s
                    break
            if s % save_every == 0:
                for j in range(n):
                    saved[s // save_every, b, j] = y[j]
            elif s == total:
                for j in range(n):
                    saved[saved.shape[0] - 1, b, j] = y[j]
        for j in range(n):
            u[b, j] = y[j]
