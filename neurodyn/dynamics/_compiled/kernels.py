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

Per-evaluation cost: the step loop (:func:`_run`) is compiled without reference counting and the
field is inlined into it, so an evaluation passes no arrays through a call; every per-neuron loop
is written in the state's dtype (a float32 run does float32 arithmetic) so that it vectorises.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from _runkit.kernels import use_kernel_cache

from .fastexp import FAST as _FAST
from .fastexp import exp_clamped as _exp_clamped

use_kernel_cache()  # numba's cache folder is keyed on every kernel source (helpers included)

__all__ = ["IP", "FP", "integrate"]

#: positions in the integer parameter vector ``ip`` of :func:`integrate`
IP = ("first", "nsteps", "total", "method", "save_every", "check_every", "act", "n1", "n2",
      "kind")
#: positions in the float parameter vector ``fp`` (float64) of :func:`integrate`
FP = ("dt", "inv_tau", "limit", "gain", "rmax", "noise")


@njit(cache=True, fastmath=_FAST, error_model="numpy", inline="always")
def _rate(x, g, sc, off, one):
    """``phi(x) = sc / (1 + exp(g x)) - off``: the logistic ``rmax sigma(gain x)`` with
    ``(g, sc, off) = (-gain, rmax, 0)``, ``tanh(gain x)`` with ``(-2 gain, 2, 1)``."""
    return sc / (one + _exp_clamped(g * x)) - off


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False, inline="always")
def _stage_rates(y0, ks, y1, r, form, h, g, sc, off):
    """The stage's state ``y1`` as torchdiffeq forms it from ``y0`` and the earlier stages'
    fields ``ks``, and its rates ``r = phi(y1)``, in one pass. ``form`` 0 the first stage,
    1 the midpoint's second, 2-4 the 3/8-rule RK4's second to fourth."""
    dty = y0.dtype.type
    one = dty(1.0)
    n = y0.shape[0]
    if form == 0:
        for j in range(n):
            x = y0[j]
            y1[j] = x
            r[j] = _rate(x, g, sc, off, one)
    elif form == 1:
        half = dty(0.5) * h
        for j in range(n):
            x = y0[j] + ks[0, j] * half
            y1[j] = x
            r[j] = _rate(x, g, sc, off, one)
    elif form == 2:
        third = dty(1.0 / 3.0)
        for j in range(n):
            x = y0[j] + h * ks[0, j] * third
            y1[j] = x
            r[j] = _rate(x, g, sc, off, one)
    elif form == 3:
        third = dty(1.0 / 3.0)
        for j in range(n):
            x = y0[j] + h * (ks[1, j] - ks[0, j] * third)
            y1[j] = x
            r[j] = _rate(x, g, sc, off, one)
    else:
        for j in range(n):
            x = y0[j] + h * (ks[0, j] - ks[1, j] + ks[2, j])
            y1[j] = x
            r[j] = _rate(x, g, sc, off, one)


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False, inline="always")
def _interaction(u, kout, r, aw, zw, xs, v, with_v, n1, n2, kind, t1, t2, md, hcoef, kh,
                 dense, pw, pwp, lk_c, lk_i, m2, bias, it):
    """The field ``kout = (-u + bias + interaction) * it`` at the rates ``r = phi(u)``, with
    ``interaction = idft(A z + i (k.v) h z) + W r`` (+ SEAL's pointwise part).

    Shapes: ``u, kout, r, bias (n1 * n2,)``; ``t1 (2, K1, n1)`` the forward tables of the first
    axis and ``t2 (4, K2, n2)`` those of the last (``cos``, ``-sin``, divided by the axis
    length) followed by its inverse tables (multiplicity ``m_k2`` times ``cos``, ``-sin``);
    ``md (4, K1, K2)`` the per-mode ``spec``, ``1 / scale``, ``gstar`` and ``1 / gam``
    (``gam`` itself for ``kind`` 3); ``hcoef (K1, K2, D)``; ``kh (K1, K2, dim)``; ``dense (N,
    N)`` or empty; work arrays ``aw (2, n1, K2)`` and ``zw (4, K1, K2)`` (filtered modes, then
    the unfiltered ones). ``kind`` 0 a fixed spectrum
    ``A = spec``, 1 the learned filter in the power, 2 none (dense only), 3 the learned filter
    in the amplitude ``a = sqrt(p / scale + gam)``, ``A = Phi'(a) / a`` with ``Phi'`` the
    polynomial ``hcoef`` in ``a - gstar``. SEAL's parts: ``pw`` the pointwise coefficients
    (empty: none) and ``pwp`` its ``(u_lo, u_hi, r_lo, 1 / width)``; ``lk_c, lk_i`` the locking
    terms (see :func:`neurodyn.dynamics._compiled.seal.lock_table`), ``m2 (K2,)`` the columns'
    multiplicities and ``xs`` a complex work array. Without a dense or pointwise part the
    field is formed in the last pass of the inverse transform."""
    zero = u.dtype.type(0.0)
    k1n, k2n = t1.shape[1], t2.shape[1]
    # forward: along the last axis (two columns a pass), then along the first
    for i in range(n1):
        base = i * n2
        for q in range(0, k2n, 2):
            q1 = q + 1 if q + 1 < k2n else q
            sr0 = zero
            si0 = zero
            sr1 = zero
            si1 = zero
            for j in range(n2):
                x = r[base + j]
                sr0 += t2[0, q, j] * x
                si0 += t2[1, q, j] * x
                sr1 += t2[0, q1, j] * x
                si1 += t2[1, q1, j] * x
            aw[0, i, q] = sr0
            aw[1, i, q] = si0
            aw[0, i, q1] = sr1
            aw[1, i, q1] = si1
    for p in range(k1n):  # the columns innermost: contiguous, vectorised
        for q in range(k2n):
            zw[2, p, q] = zero
            zw[3, p, q] = zero
        for i in range(n1):
            c = t1[0, p, i]
            s = t1[1, p, i]
            for q in range(k2n):
                zw[2, p, q] += c * aw[0, i, q] - s * aw[1, i, q]
                zw[3, p, q] += c * aw[1, i, q] + s * aw[0, i, q]
    for p in range(k1n):
        for q in range(k2n):
            # filter and transport on the mode (p, q), in float64
            fr, fi = float(zw[2, p, q]), float(zw[3, p, q])
            pwr = fr * fr + fi * fi
            if kind == 0:
                f = float(md[0, p, q])
            elif kind == 1:
                x = pwr * md[1, p, q]
                d1 = 1.0 / (1.0 + x)
                y = (x * d1 - md[2, p, q]) * md[3, p, q]
                deg = hcoef.shape[2]
                acc = float(hcoef[p, q, deg - 1])
                for d in range(deg - 2, -1, -1):
                    acc = acc * y + hcoef[p, q, d]
                f = 2.0 * (d1 * d1) * acc
            elif kind == 3:
                a = np.sqrt(pwr * md[1, p, q] + md[3, p, q])
                y = a - md[2, p, q]
                deg = hcoef.shape[2]
                acc = float(hcoef[p, q, deg - 1])
                for d in range(deg - 2, -1, -1):
                    acc = acc * y + hcoef[p, q, d]
                f = acc / a
            else:
                f = 0.0
            wr = f * fr
            wi = f * fi
            if with_v:
                kv = 0.0
                for a in range(kh.shape[2]):
                    kv += kh[p, q, a] * v[a]
                wr -= kv * fi
                wi += kv * fr
            zw[0, p, q] = wr
            zw[1, p, q] = wi
    if lk_c.shape[0] > 0:
        _lock(zw, lk_c, lk_i, m2, xs)
    # inverse: along the first axis (complex), then the real sum along the last (two columns
    # a pass; the field formed in the last pass when nothing else adds to it)
    for i in range(n1):
        for q in range(k2n):
            aw[0, i, q] = zero
            aw[1, i, q] = zero
        for p in range(k1n):
            c = t1[0, p, i] * n1
            s = -t1[1, p, i] * n1  # +sin(k1 theta_i)
            for q in range(k2n):
                aw[0, i, q] += c * zw[0, p, q] - s * zw[1, p, q]
                aw[1, i, q] += c * zw[1, p, q] + s * zw[0, p, q]
    direct = dense.shape[0] == 0 and pw.shape[0] == 0 and k2n > 0
    for i in range(n1):
        base = i * n2
        if k2n == 0:
            for j in range(n2):
                kout[base + j] = zero
        for q in range(0, k2n, 2):
            two = q + 1 < k2n
            q1 = q + 1 if two else q
            cr0 = aw[0, i, q]
            ci0 = aw[1, i, q]
            cr1 = aw[0, i, q1] if two else zero
            ci1 = aw[1, i, q1] if two else zero
            if q + 2 >= k2n and direct:
                if q == 0:
                    for j in range(n2):
                        m = base + j
                        kout[m] = (-u[m] + bias[m] + (cr0 * t2[2, q, j] + ci0 * t2[3, q, j]
                                   + cr1 * t2[2, q1, j] + ci1 * t2[3, q1, j])) * it
                else:
                    for j in range(n2):
                        m = base + j
                        kout[m] = (-u[m] + bias[m] + (kout[m] + cr0 * t2[2, q, j]
                                   + ci0 * t2[3, q, j] + cr1 * t2[2, q1, j]
                                   + ci1 * t2[3, q1, j])) * it
            elif q == 0:
                for j in range(n2):
                    kout[base + j] = (cr0 * t2[2, q, j] + ci0 * t2[3, q, j]
                                      + cr1 * t2[2, q1, j] + ci1 * t2[3, q1, j])
            else:
                for j in range(n2):
                    kout[base + j] += (cr0 * t2[2, q, j] + ci0 * t2[3, q, j]
                                       + cr1 * t2[2, q1, j] + ci1 * t2[3, q1, j])
    if direct:
        return
    if dense.shape[0] > 0:
        n = r.shape[0]
        for j in range(n):
            acc = zero
            for m in range(n):
                acc += dense[j, m] * r[m]
            kout[j] += acc
    npw = pw.shape[0]
    if npw > 0:
        lo_u, hi_u, lo, inv_w = pwp[0], pwp[1], pwp[2], pwp[3]
        for j in range(r.shape[0]):
            x = (r[j] - lo) * inv_w
            acc = zero
            for d in range(npw - 1, 0, -1):
                acc = (acc + pw[d]) * x
            pot = u[j] if u[j] < hi_u else hi_u  # phi^{-1}(r) where the reference clamps r
            pot = pot if pot > lo_u else lo_u
            kout[j] -= pw[0] * pot + acc
    for j in range(r.shape[0]):
        kout[j] = (-u[j] + bias[j] + kout[j]) * it


@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False)
def _lock(zw, lk_c, lk_i, m2, xs):
    """Add ``-grad L`` of the locking terms ``N c_t (|w_t| - Re w_t)``, ``w_t = z_A prod_B
    conj(z_B)^n_B``, to the filtered modes ``zw[0] + i zw[1]`` (before the inverse DFT),
    from the unfiltered ones ``zw[2] + i zw[3]``; ``xs (1 + F,)`` complex work array."""
    nf = lk_i.shape[1]
    for t in range(lk_c.shape[0]):
        c = lk_c[t]
        for f in range(nf):
            pos, qos = lk_i[t, f, 0], lk_i[t, f, 1]
            x = complex(zw[2, pos, qos], zw[3, pos, qos])
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
            zw[0, pos, qos] -= gz.real / m2[qos]
            zw[1, pos, qos] -= gz.imag / m2[qos]



@njit(cache=True, fastmath=_FAST, error_model="numpy", _nrt=False, nogil=True)
def _run(u, saved, fail, ip, fp, bias, t1, t2, md, hcoef, kh, dense, pw, pwp, lk_c, lk_i, m2,
         vel, xi, y, ks, r, aw, zw, xs, vv):
    """The step loop of :func:`integrate` over preallocated work arrays: ``y (2, N)`` the state
    and the stage's state, ``ks (4, N)`` the stages' fields, ``r (N,)`` the rates, ``aw``,
    ``zw``, ``xs`` as :func:`_interaction` takes them and ``vv (dim,)`` the stage's velocity.
    The field is inlined: an evaluation passes no arrays through a call."""
    first, nsteps, total, method = ip[0], ip[1], ip[2], ip[3]
    save_every, check_every, act, n1, n2, kind = ip[4], ip[5], ip[6], ip[7], ip[8], ip[9]
    dt, inv_tau, limit, gain, rmax, noise = fp[0], fp[1], fp[2], fp[3], fp[4], fp[5]
    bsz, n = u.shape
    dty = u.dtype.type
    with_v = vel.shape[1] > 0
    vdim = vv.shape[0]
    h = dty(dt)
    eighth = dty(0.125)
    three = dty(3.0)
    it = dty(inv_tau)
    sq = dty(np.sqrt(dt) * noise)
    if act == 0:
        g, sc, off = dty(-gain), dty(rmax), dty(0.0)
    else:
        g, sc, off = dty(-2.0 * gain), dty(2.0), dty(1.0)
    nst = 1 if method == 0 else (2 if method == 1 else 4)
    y0 = y[0]
    y1 = y[1]
    for b in range(bsz):
        if fail[b] >= 0:
            continue
        for j in range(n):
            y0[j] = u[b, j]
        vb = 0 if (not with_v or vel.shape[0] == 1) else b
        next_check = (first // check_every + 1) * check_every
        next_save = (first // save_every + 1) * save_every
        for i in range(nsteps):
            for st in range(nst):
                form = 0 if st == 0 else (1 if method == 1 else st + 1)
                _stage_rates(y0, ks, y1, r, form, h, g, sc, off)
                if with_v:
                    for a in range(vdim):
                        vv[a] = vel[vb, i, st, a]
                _interaction(y1, ks[st], r, aw, zw, xs, vv, with_v, n1, n2, kind, t1, t2, md,
                             hcoef, kh, dense, pw, pwp, lk_c, lk_i, m2, bias, it)
            if method == 0:
                if noise > 0:
                    for j in range(n):
                        y0[j] = y0[j] + h * ks[0, j] + sq * xi[b, i, j]
                else:
                    for j in range(n):
                        y0[j] = y0[j] + h * ks[0, j]
            elif method == 1:
                for j in range(n):
                    y0[j] = y0[j] + h * ks[1, j]
            else:
                for j in range(n):
                    y0[j] = y0[j] + (ks[0, j] + three * (ks[1, j] + ks[2, j]) + ks[3, j]) * h \
                        * eighth
            s = first + i + 1
            if s == next_check or s == total or i == nsteps - 1:
                if s == next_check:
                    next_check += check_every
                bad = False
                for j in range(n):
                    if not (abs(y0[j]) <= limit):
                        bad = True
                        break
                if bad:
                    fail[b] = s
                    break
            if s == next_save:
                next_save += save_every
                for j in range(n):
                    saved[b, s // save_every, j] = y0[j]
            elif s == total:
                for j in range(n):
                    saved[b, saved.shape[1] - 1, j] = y0[j]
        for j in range(n):
            u[b, j] = y0[j]


@njit(cache=True, error_model="numpy", nogil=True)
def integrate(u, saved, fail, ip, fp, bias, t1, t2, md, hcoef, kh, dense, pw, pwp, lk_c, lk_i,
              m2, vel, xi):
    """Advance every state ``u[b]`` (``(B, N)``, in place) by steps ``first .. first+nsteps-1``.

    ``ip`` holds the integers named by :data:`IP` and ``fp`` (float64) the numbers named by
    :data:`FP`; the tables are :func:`_interaction`'s. ``method`` 0 Euler (Euler-Maruyama with
    ``noise > 0`` and draws ``xi (B, nsteps, N)``), 1 midpoint, 2 RK4 (3/8 rule).
    ``vel (Bv, nsteps, stages, dim)`` holds the velocity at every stage time (``Bv`` 1 or B;
    ``nsteps`` 0 without velocity). The state after global step ``s`` is written to
    ``saved[b, s // save_every]`` when ``s`` is a multiple of ``save_every`` or ``s == total``;
    every ``check_every`` steps (and at the end) a state with an entry beyond ``limit`` in
    absolute value, or not finite, stops and records its step in ``fail[b]``.

    Every array is indexed by the state first, so a block of states ``b0:b1`` of each is a
    contiguous array: blocks run in threads at once (the kernel releases the GIL) and give the
    same numbers as one call over all states.
    """
    n = u.shape[1]
    n1, k1n, k2n = ip[7], t1.shape[1], t2.shape[1]
    y = np.empty((2, n), u.dtype)
    ks = np.empty((4, n), u.dtype)
    r = np.empty(n, u.dtype)
    aw = np.empty((2, n1, k2n), u.dtype)
    zw = np.empty((4, k1n, k2n), u.dtype)
    xs = np.empty(lk_i.shape[1], np.complex128)
    vv = np.zeros(vel.shape[3] if vel.shape[1] > 0 else 1, u.dtype)
    _run(u, saved, fail, ip, fp, bias, t1, t2, md, hcoef, kh, dense, pw, pwp, lk_c, lk_i, m2,
         vel, xi, y, ks, r, aw, zw, xs, vv)
