"""The compiled fixed-step path: Euler, midpoint, RK4 and Euler-Maruyama with no per-step overhead.

A :class:`Plan` is the network reduced to tables: the activation (logistic or tanh), the bias,
the interacting modes as a separable ``K1 x K2`` block of wave vectors with their per-mode filter
(the learned Fourier energy's ``2 f'_k(|z_k|^2)``, in the power or in the amplitude ``|z_k|``, or
the Fourier construction's spectrum ``w_k``),
an optional dense matrix (the quadratic family), the transport gains ``k_a h_k`` and, for SEAL's
energy, its pointwise and phase-locking parts (:mod:`neurodyn.dynamics._compiled.seal`). The whole
loop then runs compiled (numba), at ``O(N (K1 + K2))`` per evaluation for ``K`` interacting modes.

Families the plan does not cover (torch-module energies, a learned energy with a cross-mode
network, a SEAL energy with a neural term, other activations), adaptive solvers and non-CPU
devices use the torchdiffeq path; :func:`plan_for` returns the reason. Without numba installed
:data:`AVAILABLE` is false and every run takes the torch path.

Transport gains below ``GAIN_RTOL`` times the largest are dropped: a least-squares fit of a
band-limited bump leaves round-off (~1e-13 of the largest gain) on every other mode, and keeping
those would make the transport a full-spectrum operator for no effect.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from ..activation import Logistic, Tanh
from ..energies import (
    AmplitudeFourierEnergy,
    FourierQuadraticEnergy,
    LearnedFourierEnergy,
    QuadraticEnergy,
    SealEnergy,
)
from ._compiled import seal as _fastseal
from .device import module_tensors
from .inputs import Constant, Sine, Velocity, _Sampled

#: whether the optional numba dependency is installed (the kernels are imported on first use)
AVAILABLE = importlib.util.find_spec("numba") is not None

__all__ = ["AVAILABLE", "GAIN_RTOL", "Plan", "plan_for", "run_plan", "velocity_table"]

GAIN_RTOL = 1e-12
METHOD_IDS = {"euler": 0, "midpoint": 1, "rk4": 2}
STAGES = {"euler": (0.0,), "midpoint": (0.0, 0.5), "rk4": (0.0, 1 / 3, 2 / 3, 1.0)}
# memory of the pre-drawn noise and velocity tables per compiled call
_CHUNK_BYTES = 1 << 25


@dataclass
class Plan:
    """A network reduced to the tables of the compiled kernel (see the module docstring)."""

    n1: int
    n2: int
    act: int
    gain: float
    rmax: float
    tau: float
    bias: np.ndarray
    tables: tuple  # f1c, f1s, f2c, f2s, i2c, i2s
    kind: int
    spec: np.ndarray
    scale: np.ndarray
    gstar: np.ndarray
    gam: np.ndarray
    hcoef: np.ndarray
    dense: np.ndarray
    kh: np.ndarray
    modes: int  # interacting modes in the half spectrum
    pw: np.ndarray  # pointwise coefficients c_0..c_d (empty: no pointwise energy)
    pw_bounds: tuple  # see _fastseal.pointwise_table
    lk_c: np.ndarray  # locking strengths (T,)
    lk_i: np.ndarray  # locking modes (T, 1 + F, 4), integers
    m2: np.ndarray  # multiplicity of each column of the block (K2,)
    _casts: dict = field(default_factory=dict, repr=False, compare=False)

    def astype(self, dtype) -> Plan:
        """The same plan with every floating table in ``dtype`` (float32 or float64), made once
        per dtype and kept."""
        key = np.dtype(dtype).name
        if key not in self._casts:
            conv = {k: (v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                        else v) for k, v in self.__dict__.items() if k != "_casts"}
            conv["tables"] = tuple(t.astype(dtype) for t in self.tables)
            self._casts[key] = Plan(**conv)
        return self._casts[key]

    def kernel_tables(self, dtype) -> tuple:
        """The tables as :func:`neurodyn.dynamics._compiled.kernels.integrate` takes them, in
        ``dtype``: ``(bias, t1, t2, md, hcoef, kh, dense, pw, pwp, lk_c, lk_i, m2)`` with the axis
        tables stacked (``t1 (2, K1, n1)``, ``t2 (4, K2, n2)``) and the per-mode ones too
        (``md (4, K1, K2)``: spectrum, inverse scale, anchor and inverse slope, or the rounding
        ``eps`` for the amplitude filter); made once per dtype and kept."""
        key = "tables:" + np.dtype(dtype).name
        if key not in self._casts:
            p = self.astype(dtype)
            f1c, f1s, f2c, f2s, i2c, i2s = p.tables
            lo_u, hi_u = self.pw_bounds[0 if np.dtype(dtype) == np.float64 else 1]
            pwp = np.array([lo_u, hi_u, self.pw_bounds[2], 1.0 / self.pw_bounds[3]],
                           dtype=dtype)
            self._casts[key] = (
                p.bias, np.ascontiguousarray(np.stack([f1c, f1s])),
                np.ascontiguousarray(np.stack([f2c, f2s, i2c, i2s])),
                np.ascontiguousarray(np.stack([p.spec, 1 / p.scale, p.gstar,
                                               p.gam if self.kind == 3 else 1 / p.gam])),
                np.ascontiguousarray(p.hcoef), np.ascontiguousarray(p.kh),
                np.ascontiguousarray(p.dense), p.pw, pwp, p.lk_c, p.lk_i, p.m2)
        return self._casts[key]


def _axis_tables(n: int, ks: np.ndarray, mult: np.ndarray | None):
    """cos/sin tables ``(len(ks), n)`` of ``k theta_j`` by exact integer phase reduction."""
    phase = 2 * np.pi * (np.outer(ks, np.arange(n)) % n) / n
    c, s = np.cos(phase), np.sin(phase)
    c[np.abs(c) < 1e-13] = 0.0  # exact zeros at quarter and half turns
    s[np.abs(s) < 1e-13] = 0.0
    if mult is None:
        return c / n, -s / n
    return c / n, -s / n, mult[:, None] * c, -mult[:, None] * s


def plan_for(network) -> tuple[Plan | None, str]:
    """The compiled plan of ``network``, or ``(None, reason)`` when it needs the torch path.

    The plan is kept on the network and rebuilt when any of its tensors changes (in-place
    updates bump a tensor's version) or its parts are replaced.
    """
    if isinstance(network.energy_fn, SealEnergy):
        with torch.no_grad():
            network.energy_fn.refresh()  # the anchored slopes, before the key is read
    tensors = module_tensors(network)
    key = (tuple((id(t), t._version) for t in tensors), id(network.activation),
           id(network.energy_fn), id(network.transport), network.tau)
    cached = network.__dict__.get("_fastpath_plan")
    if cached is not None and cached[0] == key:
        return cached[1]
    out = _build_plan(network)
    network.__dict__["_fastpath_plan"] = (key, out)
    return out


def _build_plan(network) -> tuple[Plan | None, str]:
    g = network.geometry
    act = _activation_code(network.activation)
    if act is None:
        return None, f"activation {type(network.activation).__name__} is not compiled"
    energy, pw, pw_bounds, lock, reason = _unwrap_seal(network.energy_fn)
    if reason:
        return None, reason
    family = _energy_family(energy, g)
    if isinstance(family, str):
        return None, family
    kind, coef, spec_full, dense, inter = family
    k = g.wavevectors().numpy().astype(np.int64)  # (dim, *spec)
    gains = None
    if network.transport is not None:
        h = network.transport.gains.detach().numpy()
        keep = np.abs(h) > GAIN_RTOL * max(float(np.abs(h).max()), 1e-300)
        gains = np.where(keep, h, 0.0)
        inter = inter | keep
    if lock is not None:
        inter = inter | _fastseal.lock_modes(lock, g.spectral_shape)
    n1, n2, inter2, kk, rows, cols, mult, tables = _mode_block(g, k, inter)
    block = np.ix_(rows, cols)

    def pick(full):
        return (full[None, :] if g.dim == 1 else full)[block]

    sel = inter2[block]
    spec, scale, gstar, gam, hcoef = _band_arrays(kind, energy, coef, spec_full, sel, pick, block,
                                                  g.dim)
    kh = np.zeros(sel.shape + (g.dim,))
    if gains is not None:
        hg = pick(gains)
        for a in range(g.dim):
            kh[..., a] = kk[a][block] * hg
    bias = np.broadcast_to(network.bias.detach().to(torch.float64).numpy(),
                           g.shape).reshape(-1).copy()
    lk_c, lk_i = np.zeros(0), np.zeros((0, 1, 4), dtype=np.int64)
    if lock is not None:
        lk_c, lk_i = _fastseal.lock_table(lock, g.spectral_shape, rows, cols)
    plan = Plan(n1, n2, *act, float(network.tau), bias, tables, kind, spec, scale, gstar, gam,
                hcoef, dense, kh, int(sel.sum()), pw, pw_bounds, lk_c, lk_i, mult)
    return plan, ""


def _activation_code(act) -> tuple[int, float, float] | None:
    """``(id, gain, rmax)`` of a compiled activation (0 logistic, 1 tanh), else None."""
    if isinstance(act, Logistic):
        return 0, float(act.gain), float(act.rmax)
    if isinstance(act, Tanh):
        return 1, float(act.gain), 1.0
    return None


def _unwrap_seal(energy):
    """``(spectral energy, pointwise table, its bounds, phase lock, reason)``: a SEAL energy's
    parts (``reason`` names what is not compiled, else it is empty); any other energy is
    returned as it is with an empty pointwise table and no lock."""
    pw, pw_bounds, lock = np.zeros(0), ((0.0, 0.0), (0.0, 0.0), 0.0, 1.0), None
    if isinstance(energy, SealEnergy):
        if energy.neural is not None:
            return energy, pw, pw_bounds, lock, "a SEAL energy with a neural term is not compiled"
        if energy.pointwise is not None:
            pw, pw_bounds = _fastseal.pointwise_table(energy.pointwise)
        lock = energy.phaselock
        energy = energy.spectral
    return energy, pw, pw_bounds, lock, ""


def _energy_family(energy, g):
    """``(kind, coef, spectrum, dense weights, interacting modes)`` of a compiled energy family
    (0 Fourier quadratic, 1 learned Fourier, 2 dense quadratic, 3 amplitude Fourier), or the
    reason it is not compiled."""
    coef, spec_full, dense = None, None, np.zeros((0, 0))
    if isinstance(energy, (LearnedFourierEnergy, AmplitudeFourierEnergy)):
        if getattr(energy, "cross", None) is not None:
            return "a learned energy with a cross-mode network is not compiled"
        kind = 1 if isinstance(energy, LearnedFourierEnergy) else 3
        with torch.no_grad():
            coef = energy.effective_coef().detach().to(torch.float64).numpy()  # (*spec, D)
        inter = _fastseal.learned_modes(coef, energy.mask.numpy() > 0)
    elif isinstance(energy, FourierQuadraticEnergy):
        kind = 0
        spec_full = energy.spectrum.numpy()
        inter = spec_full != 0
    elif isinstance(energy, QuadraticEnergy):
        kind = 2
        dense = energy.weights.detach().to(torch.float64).numpy().copy()
        inter = np.zeros(g.spectral_shape, dtype=bool)
    else:
        return f"energy family {energy.family!r} is not compiled"
    return kind, coef, spec_full, dense, inter


def _mode_block(g, k: np.ndarray, inter: np.ndarray):
    """The sheet as ``n1 x n2`` (a ring is ``1 x n``), its interacting modes ``inter2`` and wave
    vectors ``kk`` in that layout, the rows and columns holding an interacting mode, their
    multiplicities in the real transform and the axis tables of those rows and columns."""
    if g.dim == 1:
        k1_all = np.zeros_like(k[0])
        n1, n2 = 1, g.shape[0]
        inter2 = inter[None, :]
        kk = k[:, None, :]
    else:
        k1_all = k[0]
        n1, n2 = g.shape
        inter2, kk = inter, k
    rows = np.nonzero(inter2.any(1))[0] if inter2.any() else np.zeros(1, np.int64)
    cols = np.nonzero(inter2.any(0))[0] if inter2.any() else np.zeros(1, np.int64)
    k1s = (k1_all[rows, 0] if g.dim == 2 else np.zeros(len(rows), np.int64))
    k2s = cols.astype(np.int64)
    last = g.shape[-1]
    mult = np.where((k2s == 0) | ((last % 2 == 0) & (k2s == last // 2)), 1.0, 2.0)
    f1c, f1s = _axis_tables(n1, k1s, None)
    f2c, f2s, i2c, i2s = _axis_tables(n2, k2s, mult)
    return n1, n2, inter2, kk, rows, cols, mult, (f1c, f1s, f2c, f2s, i2c, i2s)


def _band_arrays(kind: int, energy, coef, spec_full, sel: np.ndarray, pick, block, dim: int):
    """Per-mode arrays of the kept block ``(spec, scale, gstar, gam, hcoef)``: the quadratic
    spectrum (kind 0), or the learned energy's scales, anchors and coefficients on its band
    (kinds 1 and 3); neutral values elsewhere."""
    shape = sel.shape
    spec = np.zeros(shape)
    scale = np.ones(shape)
    gstar = np.zeros(shape)
    gam = np.ones(shape)
    hcoef = np.zeros(shape + (1,))
    if kind == 0:
        spec = np.where(sel, pick(spec_full), 0.0)
    elif kind == 1:
        xs = energy.anchor_x.numpy()
        gs_full, gam_full = xs / (1 + xs), 1 / (1 + xs) ** 2
        c = coef[None] if dim == 1 else coef
        hc = np.concatenate([c[..., :1], c[..., 1:] / (gam_full[None] if dim == 1
                                                        else gam_full)[..., None]], axis=-1)
        band = pick(_fastseal.learned_modes(coef, energy.mask.numpy() > 0))
        hcoef = np.where(band[..., None], hc[block], 0.0)
        scale = np.where(band, pick(energy.scale.numpy()), 1.0)
        gstar = np.where(band, pick(gs_full), 0.0)
        gam = np.where(band, pick(gam_full), 1.0)
    elif kind == 3:  # amplitude filter: gstar holds a*_k, gam the rounding eps
        band = pick(_fastseal.learned_modes(coef, energy.mask.numpy() > 0))
        hcoef = np.where(band[..., None], (coef[None] if dim == 1 else coef)[block], 0.0)
        scale = np.where(band, pick(energy.scale.numpy()), 1.0)
        gstar = np.where(band, pick(np.sqrt(energy.anchor_x.numpy() + energy.eps)), 0.0)
        gam = np.where(band, energy.eps, 1.0)
    return spec, scale, gstar, gam, hcoef


def velocity_table(velocity: Velocity, times: np.ndarray, batch: int, dim: int) -> np.ndarray:
    """``velocity`` at every time of ``times`` (any shape ``S``): ``(*S, Bv, dim)``, float64.

    Constant, sine and sampled (steps, Ornstein-Uhlenbeck, arrays) velocities are evaluated
    vectorised with the same formulas as their ``__call__``; any other velocity is called once
    per time.
    """
    t = np.asarray(times, dtype=np.float64)
    flat = t.reshape(-1)
    if isinstance(velocity, Constant):
        v = velocity(0.0).numpy()[None].repeat(flat.size, 0)
    elif isinstance(velocity, Sine):
        amp = velocity._a.numpy()
        s = np.sin(2 * math.pi * velocity.frequency * flat + velocity.phase)
        v = amp[None] * s[:, None, None]
    elif isinstance(velocity, _Sampled):
        samples = velocity._samples.numpy()
        last = samples.shape[0] - 1
        x = flat / velocity._hold
        i = np.clip(np.floor(x + 1e-9).astype(np.int64), 0, last)
        if velocity._linear:
            w = np.clip(x - i, 0.0, 1.0)
            j = np.minimum(i + 1, last)
            w = np.where(i == last, 0.0, w)[:, None, None]
            v = (1 - w) * samples[i] + w * samples[j]
        else:
            v = samples[i]
    else:
        v = np.stack([velocity(float(x)).to(torch.float64).numpy() for x in flat])
    v = np.asarray(v, dtype=np.float64)
    return v.reshape(t.shape + v.shape[-2:])


def stage_times(first: int, count: int, dt: float, method: str, dtype) -> np.ndarray:
    """Times of every stage of steps ``first .. first+count-1``, ``(count, stages)``, computed
    as torchdiffeq does on the grid ``arange * dt`` in the run's dtype."""
    grid = (torch.arange(first, first + count + 1, dtype=dtype) * dt).numpy()
    t0, t1 = grid[:-1].astype(np.float64), grid[1:].astype(np.float64)
    h = t1 - t0
    cols = [t0 + f * h if 0 < f < 1 else (t0 if f == 0 else t1) for f in STAGES[method]]
    return np.stack(cols, axis=1)


def run_plan(plan: Plan, u0: torch.Tensor, steps: int, dt: float, method: str,
             save_every: int, check_every: int, limit: float, velocity: Velocity | None,
             noise: float, generator: torch.Generator | None, on_progress=None,
             threads: int | None = None):
    """Integrate ``u0 (B, *shape)`` with the compiled kernel.

    The states are independent, so blocks of them run in ``threads`` threads at once (default:
    ``torch.get_num_threads()``, used when the batch has enough work to share); the numbers do
    not depend on the thread count.

    Returns ``(saved, fail_step, fail_state)``: the saved states ``(T, B, *shape)`` (the start,
    every ``save_every`` steps and the last step; a view of state-major storage), the first
    check step at which a state left the range ``|u| <= limit`` (``None`` if none did) and that
    state (``None`` likewise).
    """
    kernels = importlib.import_module("neurodyn.dynamics._compiled.kernels")
    dtype = u0.dtype
    npdt = np.float32 if dtype == torch.float32 else np.float64
    tables = plan.kernel_tables(npdt)
    batch, n = u0.shape[0], plan.n1 * plan.n2
    u = u0.detach().cpu().reshape(batch, n).numpy().astype(npdt, copy=True)
    n_save = steps // save_every + 1 + (steps % save_every != 0)
    saved = np.empty((batch, n_save, n), dtype=npdt)
    saved[:, 0] = u
    fail = np.full(batch, -1, dtype=np.int64)
    per_step = batch * n * (noise > 0) + 4 * batch * 2
    chunk = max(1, min(steps, _CHUNK_BYTES // (8 * max(per_step, 1))))
    ip, fp = _kernel_parameters(plan, steps, method, save_every, check_every, dt, limit, noise)
    blocks = _blocks(batch, n * len(STAGES[method]) * steps,
                     torch.get_num_threads() if threads is None else threads)
    pool = ThreadPoolExecutor(len(blocks)) if len(blocks) > 1 else None
    first = 0
    try:
        while first < steps:
            count = min(chunk, steps - first)
            vel = _chunk_velocity(velocity, first, count, dt, method, dtype, npdt, batch,
                                  u0.dim() - 1)
            xi = _chunk_noise(u0.shape, n, count, generator, dtype, npdt, noise)
            ip[0], ip[1] = first, count

            def run(b0, b1, vel=vel, xi=xi):
                kernels.integrate(u[b0:b1], saved[b0:b1], fail[b0:b1], ip, fp, *tables,
                                  vel if vel.shape[0] == 1 else vel[b0:b1],
                                  xi if xi.shape[0] == 0 else xi[b0:b1])

            if pool is None:
                run(0, batch)
            else:
                for f in [pool.submit(run, b0, b1) for b0, b1 in blocks]:
                    f.result()
            first += count
            if on_progress is not None:
                on_progress(count)
            if (fail >= 0).any():
                break
    finally:
        if pool is not None:
            pool.shutdown()
    out = torch.from_numpy(saved).reshape((batch, n_save) + tuple(u0.shape[1:])).transpose(0, 1)
    return (out,) + _first_failure(fail, u)


def _kernel_parameters(plan: Plan, steps: int, method: str, save_every: int, check_every: int,
                       dt: float, limit: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's integer parameters (the first two, the chunk's first step and its length,
    are set per chunk) and its float parameters."""
    ip = np.array([0, 0, steps, METHOD_IDS[method], save_every, check_every, plan.act, plan.n1,
                   plan.n2, plan.kind], dtype=np.int64)
    fp = np.array([dt, 1.0 / plan.tau, limit, plan.gain, plan.rmax, noise], dtype=np.float64)
    return ip, fp


def _first_failure(fail: np.ndarray, u: np.ndarray) -> tuple[int | None, torch.Tensor | None]:
    """The earliest check step at which a state left the range (``fail`` ``(B,)``, -1 where
    none did) and that state's last value, or ``(None, None)``."""
    if not (fail >= 0).any():
        return None, None
    b = int(np.argmin(np.where(fail >= 0, fail, np.iinfo(np.int64).max)))
    return int(fail[b]), torch.from_numpy(u[b].copy())


def _chunk_velocity(velocity: Velocity | None, first: int, count: int, dt: float, method: str,
                    dtype, npdt, batch: int, dim: int) -> np.ndarray:
    """The velocity at every stage of steps ``first .. first+count-1`` as the kernel takes it,
    ``(Bv, count, stages, dim)`` with ``Bv`` 1 or ``batch``; a ``(1, 0, 1, 1)`` placeholder
    without a velocity."""
    if velocity is None:
        return np.zeros((1, 0, 1, 1), dtype=npdt)
    times = stage_times(first, count, dt, method, dtype)
    vel = velocity_table(velocity, times, batch, dim).astype(npdt)
    if vel.shape[-2] not in (1, batch):
        vel = np.broadcast_to(vel, vel.shape[:-2] + (batch, vel.shape[-1]))
    return np.ascontiguousarray(np.moveaxis(vel, 2, 0))  # (Bv, count, stages, dim)


def _chunk_noise(shape: torch.Size, n: int, count: int, generator: torch.Generator | None,
                 dtype, npdt, noise: float) -> np.ndarray:
    """The standard normal draws of ``count`` steps for states of ``shape`` ``(B, *sheet)``
    (``n`` neurons), ``(B, count, n)``, drawn step by step from ``generator`` as the torch path
    draws them; ``(0, 0, 0)`` without noise."""
    if not noise > 0:
        return np.zeros((0, 0, 0), dtype=npdt)
    batch = shape[0]
    xi = np.empty((batch, count, n), dtype=npdt)
    for i in range(count):
        xi[:, i] = torch.randn(shape, generator=generator, dtype=dtype).reshape(batch, n).numpy()
    return xi


#: kernel work (state-updates x stages x steps, summed over the batch) below which a run stays
#: in one thread: a thread's start and join cost about what a few thousand updates do
_THREAD_WORK = 1 << 20


def _blocks(batch: int, work_per_state: int, threads: int) -> list[tuple[int, int]]:
    """Contiguous blocks ``(b0, b1)`` of states, one per thread (a single block when the run
    is too small to share).

    >>> _blocks(5, 1 << 20, 2)
    [(0, 2), (2, 5)]
    >>> _blocks(5, 10, 2)
    [(0, 5)]
    """
    k = max(1, min(int(threads), batch))
    if k == 1 or batch * work_per_state < _THREAD_WORK:
        return [(0, batch)]
    edges = [i * batch // k for i in range(k + 1)]
    return [(edges[i], edges[i + 1]) for i in range(k)]
