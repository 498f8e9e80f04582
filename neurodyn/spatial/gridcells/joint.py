r"""Several modules decoded together, without the start position, then tracked.

Each module's network reports its bump's phase ``psi_m(t)``; nothing else is read. With wave
vectors ``k_{m,p}`` (hex: ``k1``, ``k2``, ``k1 - k2``) the summed von Mises log-likelihood of a
position (:func:`neurodyn.spatial.decoding.log_likelihood`)

.. math:: \ell_t(x) = \sum_m \sum_p \cos(\psi_{m,p}(t) - k_{m,p} \cdot x) \le M P

is maximised over a grid of positions covering the rectangular arena, then refined by Newton
steps: the global estimate, which needs no start position. The first sample is decoded so.
Tracking follows the local maximum from there: at each sample the last estimate is moved by the
modules' own phase increments (the mean over modules of ``K_m^{-1} wrap(Delta psi_m)``) and
refined by Newton steps on ``ell_t``. The track is lost while its likelihood is below half the
maximum (``ell_t < M P / 2``: the modules disagree with it by more than 60 degrees on average);
after ``relock`` s lost, the global estimate of that sample replaces it when it is more likely
(a relock). A global maximum elsewhere that is only momentarily more likely (an ambiguity of the
code) does not move the track.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from _runkit import BadInput

from ..decoding import module_phases, module_wave_vectors
from ..phases import wave_vectors

__all__ = ["JointTrack", "joint_decode"]


@dataclass(frozen=True)
class JointTrack:
    """Result of :func:`joint_decode`.

    Attributes
    ----------
    position : ndarray, shape (T, 2)
        Tracked positions (m).
    loglik : ndarray, shape (T,)
        ``ell_t`` at the tracked position (at most ``M P``).
    lost : int
        Samples whose tracked likelihood is below half the maximum.
    relocks : int
        Times the global estimate replaced the track after ``relock`` s lost.
    resolution : float
        Step of the grid search (m).
    """

    position: np.ndarray
    loglik: np.ndarray
    lost: int
    relocks: int
    resolution: float


def joint_decode(phases, spacings, arena, dt: float, orientation: float = 0.0,
                 lattice: str = "hex", *, resolution: float | None = None,
                 relock: float = 1.0, newton_steps: int = 4,
                 chunk: int = 4096) -> JointTrack:
    """Decode the modules' phases together over the arena, without the start, and track.

    Parameters
    ----------
    phases : array_like, shape (T, M, 2)
        Each module's torus phases (radians, any branch) every ``dt`` s.
    spacings : sequence of float, shape (M,)
        Module spacings (m), M >= 1.
    arena : tuple of float
        ``(width, height)`` (m): the grid search covers ``[0, width] x [0, height]``.
    dt : float
        Sampling interval (s).
    orientation : float
        Angle of ``k1`` (radians), shared by the modules.
    lattice : str
        ``hex`` or ``square``.
    resolution : float or None
        Grid-search step (m); default an eighth of the smallest spacing.
    relock : float
        Seconds lost before the global estimate may replace the track.
    newton_steps : int
        Newton iterations after the grid search and from the track.
    chunk : int
        Samples per block of the grid search (memory ``chunk x grid`` floats).

    Returns
    -------
    JointTrack

    Examples
    --------
    >>> from neurodyn.spatial.phases import position_to_phase
    >>> t = np.arange(200) * 0.02
    >>> x = np.c_[0.5 + 0.3 * t, 1.0 + 0.1 * np.sin(t)]
    >>> sp = (0.4, 0.56, 0.784)
    >>> ph = np.stack([position_to_phase(x, s) for s in sp], axis=1)
    >>> res = joint_decode(ph, sp, (3.5, 2.5), 0.02)
    >>> bool(np.abs(res.position - x).max() < 1e-6), res.lost, res.relocks
    (True, 0, 0)
    """
    ph = np.asarray(phases, dtype=float)
    k = module_wave_vectors(spacings, orientation, lattice)
    if ph.ndim != 3 or ph.shape[1:] != (k.shape[0], 2) or ph.shape[0] < 2:
        raise BadInput(f"phases: shape {ph.shape}; expected (T >= 2, {k.shape[0]}, 2)",
                       param="phases")
    if not np.isfinite(ph).all():
        raise BadInput("phases: non-finite values", param="phases")
    w, h = (float(a) for a in arena)
    res = float(min(spacings)) / 8 if resolution is None else float(resolution)
    kf = k.reshape(-1, 2)
    of = module_phases(ph, lattice).reshape(ph.shape[0], -1)  # (T, MP)

    def search(rows: np.ndarray) -> np.ndarray:
        return _newton(_grid_search(rows, kf, w, h, res, chunk), kf, rows, res, newton_steps,
                       w, h)

    x0 = search(of[:1])[0]
    x, lost, relocks = _track(of, kf, _increments(ph, spacings, orientation, lattice), x0,
                              (res, newton_steps, w, h), max(1, round(relock / float(dt))),
                              search)
    ll = np.cos(of - x @ kf.T).sum(axis=1)
    return JointTrack(x, ll, lost, relocks, res)


def _track(of, kf, moved, x0, newton: tuple, patience: int, search):
    """The tracked positions ``(T, 2)``, the samples lost and the relocks (module docstring);
    ``newton`` is ``(res, steps, w, h)``, ``patience`` the lost samples before a relock and
    ``search`` the global estimate of some rows of phases."""
    res, steps, w, h = newton
    kk = kf.tolist()
    half = 0.5 * len(kk)
    out = np.empty((of.shape[0], 2))
    x, y = float(x0[0]), float(x0[1])
    lost = run = relocks = 0
    cos, sin = math.cos, math.sin
    step = np.diff(moved, axis=0, prepend=moved[:1])
    for t, o, (mx, my) in _rows(of, step):
        x, y = x + mx, y + my
        for _ in range(steps):
            gx = gy = hxx = hxy = hyy = 0.0
            for (kx, ky), ob in zip(kk, o, strict=True):
                d = ob - kx * x - ky * y
                s, c = sin(d), cos(d)
                gx, gy = gx + s * kx, gy + s * ky
                hxx, hxy, hyy = hxx - c * kx * kx, hxy - c * kx * ky, hyy - c * ky * ky
            det = hxx * hyy - hxy * hxy
            if det <= 0 or hxx >= 0:
                break
            sx, sy = (hyy * gx - hxy * gy) / det, (hxx * gy - hxy * gx) / det
            if sx * sx + sy * sy >= res * res:
                break
            x, y = x - sx, y - sy
        x, y = min(max(x, 0.0), w), min(max(y, 0.0), h)
        ll = sum(cos(ob - kx * x - ky * y) for (kx, ky), ob in zip(kk, o, strict=True))
        run = run + 1 if ll < half else 0
        lost += ll < half
        if run >= patience:
            g = search(of[t:t + 1])[0]
            if float(np.cos(of[t] - kf @ g).sum()) > ll:
                x, y, relocks = float(g[0]), float(g[1]), relocks + 1
            run = 0
        out[t] = (x, y)
    return out, lost, relocks


def _rows(of: np.ndarray, step: np.ndarray, block: int = 8192):
    """``(t, phases, displacement)`` of every sample as Python floats, a block at a time (a
    whole long run's rows as Python objects would take a hundred bytes per number)."""
    for a in range(0, of.shape[0], block):
        for i, (o, m) in enumerate(zip(of[a:a + block].tolist(), step[a:a + block].tolist(),
                                       strict=True)):
            yield a + i, o, m


def _grid_search(of: np.ndarray, kf: np.ndarray, w: float, h: float, res: float,
                 chunk: int) -> np.ndarray:
    """The best point ``(T, 2)`` of a grid of step ``res`` over ``[0, w] x [0, h]`` for the
    phases ``of`` ``(T, MP)`` of wave vectors ``kf`` ``(MP, 2)``."""
    xs = np.linspace(0.0, w, int(math.ceil(w / res)) + 1)
    ys = np.linspace(0.0, h, int(math.ceil(h / res)) + 1)
    grid = np.stack(np.meshgrid(xs, ys, indexing="xy"), axis=-1).reshape(-1, 2)
    proj = grid @ kf.T  # (G, MP)
    cg, sg = np.cos(proj).T.copy(), np.sin(proj).T.copy()
    best = np.empty((of.shape[0], 2))
    for a in range(0, of.shape[0], chunk):
        o = of[a:a + chunk]
        ll = np.cos(o) @ cg
        ll += np.sin(o) @ sg
        best[a:a + chunk] = grid[np.argmax(ll, axis=1)]
    return best


def _newton(x: np.ndarray, kf: np.ndarray, of: np.ndarray, res: float, steps: int, w: float,
            h: float) -> np.ndarray:
    """Newton steps on ``ell`` from ``x`` ``(T, 2)``; a step that is not finite or not shorter
    than ``res`` is not taken; the result is clipped into the arena."""
    for _ in range(steps):
        d = of - x @ kf.T
        grad = np.sin(d) @ kf
        hess = -np.einsum("tq,qa,qb->tab", np.cos(d), kf, kf)
        det = hess[:, 0, 0] * hess[:, 1, 1] - hess[:, 0, 1] * hess[:, 1, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            sx = (hess[:, 1, 1] * grad[:, 0] - hess[:, 0, 1] * grad[:, 1]) / det
            sy = (hess[:, 0, 0] * grad[:, 1] - hess[:, 1, 0] * grad[:, 0]) / det
        step = np.stack([sx, sy], axis=1)
        ok = np.isfinite(step).all(axis=1) & (np.hypot(sx, sy) < res) & (det > 0) & \
            (hess[:, 0, 0] < 0)
        x = np.where(ok[:, None], x - step, x)
    return np.clip(x, 0.0, [w, h])


def _increments(ph: np.ndarray, spacings, orientation: float, lattice: str) -> np.ndarray:
    """Cumulative displacement ``(T, 2)`` read from the phase increments: the mean over modules
    of ``K_m^{-1} wrap(psi_m(t) - psi_m(t - 1))``, summed from 0."""
    d = np.diff(ph, axis=0)
    d = (d + math.pi) % (2 * math.pi) - math.pi  # (T - 1, M, 2)
    steps = np.zeros((ph.shape[0], 2))
    for m, s in enumerate(spacings):
        kinv = np.linalg.inv(wave_vectors(float(s), orientation, lattice)[:2])
        steps[1:] += d[:, m] @ kinv.T / len(spacings)
    return np.cumsum(steps, axis=0)
