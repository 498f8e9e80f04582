r"""Position from the phases of several grid modules, without the known start.

Each module ``m`` (spacing ``s_m``, orientation ``theta_m``) reports lattice phases
``psi_{m,p}`` for its wave vectors ``k_{m,p}`` (hex: ``k1``, ``k2`` and ``k1 - k2``, whose
phase is ``psi1 - psi2``; square: ``k1``, ``k2``). With independent von Mises phase noise of
equal concentration, the log-likelihood of a position ``x`` is

.. math:: \ell(x) = \kappa \sum_m \sum_p \cos(\psi_{m,p} - k_{m,p} \cdot x),

and the decoder returns its maximum over the box: a grid search on a lattice of positions of
step ``resolution`` (default a twentieth of the smallest spacing), then Newton steps on ``ell``
from the best grid point (the argmax does not depend on ``kappa``). Nothing but the current
phases enters: no start position, no integration of increments, so errors do not accumulate
and a wrong grid point (an ambiguity of the code) shows as a jump of the size of a spacing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

from .agent import Box
from .phases import wave_vectors

__all__ = ["module_wave_vectors", "module_phases", "log_likelihood", "DecodedPositions",
           "decode_position", "code_error"]


def module_wave_vectors(spacings, orientations=0.0, lattice: str = "hex") -> np.ndarray:
    """Wave vectors of every module: ``(M, P, 2)`` in rad/m (``P = 3`` hex, 2 square)."""
    sp = np.atleast_1d(np.asarray(spacings, dtype=float))
    if sp.ndim != 1 or sp.size < 1:
        raise BadInput(f"spacings={spacings!r}: give one spacing per module", param="spacings")
    ori = np.broadcast_to(np.asarray(orientations, dtype=float), sp.shape)
    return np.stack([wave_vectors(float(s), float(o), lattice) for s, o in zip(sp, ori,
                                                                                strict=True)])


def module_phases(phases: np.ndarray, lattice: str = "hex") -> np.ndarray:
    """Torus phases ``(..., M, 2)`` to the phases of every wave vector ``(..., M, P)``."""
    ph = np.asarray(phases, dtype=float)
    if ph.ndim < 2 or ph.shape[-1] != 2:
        raise BadInput(f"phases: shape {ph.shape}; expected (..., modules, 2)", param="phases")
    if lattice == "hex":
        return np.concatenate([ph, ph[..., :1] - ph[..., 1:2]], axis=-1)
    return ph


def log_likelihood(obs: np.ndarray, k: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``ell(x) / kappa = sum_{m,p} cos(obs_{m,p} - k_{m,p}.x)``.

    Parameters
    ----------
    obs : numpy.ndarray, shape (T, M, P)
        Observed phases.
    k : numpy.ndarray, shape (M, P, 2)
        Wave vectors.
    positions : numpy.ndarray, shape (G, 2)
        Candidate positions.

    Returns
    -------
    array ``(T, G)``.
    """
    proj = np.einsum("mpd,gd->gmp", k, positions).reshape(positions.shape[0], -1)  # (G, MP)
    o = obs.reshape(obs.shape[0], -1)
    # cos(o - kx) = cos o cos kx + sin o sin kx: two matrix products
    return np.cos(o) @ np.cos(proj).T + np.sin(o) @ np.sin(proj).T


@dataclass(frozen=True)
class DecodedPositions(Result):
    """Result of :func:`decode_position`.

    Attributes
    ----------
    position : ``(T, 2)`` decoded positions (m).
    loglik : ``(T,)`` ``ell / kappa`` at the decoded positions (its maximum is ``M P``).
    resolution : step of the grid search (m).
    """

    position: np.ndarray
    loglik: np.ndarray
    resolution: float


def decode_position(phases, spacings, orientations=0.0, lattice: str = "hex",
                    box: Box | None = None, resolution: float | None = None,
                    newton_steps: int = 6, chunk: int = 256) -> DecodedPositions:
    """Maximum-likelihood position from the phases of several modules (module docstring).

    Parameters
    ----------
    phases : array_like, shape (T, M, 2) or (M, 2)
        Torus phases of ``M`` modules (radians, any branch).
    spacings : array_like, shape (M,)
        Spacings (m); orientations: one angle or (radians).
    lattice : str
        ``hex`` or ``square``.
    box : Box or None
        The arena searched (default ``Box(1.0)``).
    resolution : float or None
        Grid-search step (m); default ``min(spacings) / 20``.
    newton_steps : int
        Newton iterations from the best grid point (0: grid point only).
    chunk : int
        Time points per batch of the grid search (memory ``chunk x grid``).

    Returns
    -------
    DecodedPositions

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.spatial.phases import position_to_phase
    >>> x = np.array([[1.234, 0.567]])
    >>> ph = np.stack([position_to_phase(x, s) for s in (0.4, 0.56, 0.784)], axis=1) % (2*np.pi)
    >>> dec = decode_position(ph, (0.4, 0.56, 0.784), box=Box(2.0))
    >>> bool(np.abs(dec.position - x).max() < 1e-6)
    True
    """
    box = Box() if box is None else box
    ph = np.asarray(phases, dtype=float)
    if ph.ndim == 2:
        ph = ph[None]
    k = module_wave_vectors(spacings, orientations, lattice)
    if ph.ndim != 3 or ph.shape[1:] != (k.shape[0], 2):
        raise BadInput(f"phases: shape {np.shape(phases)}; expected (T, {k.shape[0]}, 2) "
                       "for the given spacings", param="phases")
    if not np.all(np.isfinite(ph)):
        raise BadInput("phases: non-finite values", param="phases")
    res = float(np.min(spacings)) / 20 if resolution is None else float(resolution)
    if not res > 0:
        raise BadInput(f"resolution={resolution!r}: must be > 0 (metres)", param="resolution")
    obs = module_phases(ph, lattice)
    kf = k.reshape(-1, 2)  # (MP, 2)
    of = obs.reshape(obs.shape[0], -1)
    x = _newton_refine(_grid_search(obs, k, box, res, chunk), kf, of, res, newton_steps)
    x = np.clip(x, 0.0, box.size)
    ll = np.cos(of - x @ kf.T).sum(1)
    return DecodedPositions(x, ll, res)


def _grid_search(obs: np.ndarray, k: np.ndarray, box: Box, res: float, chunk: int) -> np.ndarray:
    """The most likely point ``(T, 2)`` of a square grid of spacing ``res`` over the box for
    each time's module phases, ``chunk`` times at once."""
    n = int(math.ceil(box.size / res)) + 1
    axis = np.linspace(0.0, box.size, n)
    grid = np.stack(np.meshgrid(axis, axis, indexing="xy"), axis=-1).reshape(-1, 2)
    best = np.empty((obs.shape[0], 2))
    for a in range(0, obs.shape[0], chunk):
        ll = log_likelihood(obs[a:a + chunk], k, grid)
        best[a:a + chunk] = grid[np.argmax(ll, axis=1)]
    return best


def _newton_refine(x: np.ndarray, kf: np.ndarray, of: np.ndarray, res: float,
                   newton_steps: int) -> np.ndarray:
    """``newton_steps`` Newton steps on the log-likelihood from ``x`` ``(T, 2)``, with wave
    vectors ``kf`` ``(MP, 2)`` and phases ``of`` ``(T, MP)``; a step that is not finite or
    not shorter than ``res`` is not taken."""
    for _ in range(newton_steps):
        d = of - x @ kf.T  # (T, MP)
        grad = np.sin(d) @ kf  # d ell / dx
        hess = -np.einsum("tq,qa,qb->tab", np.cos(d), kf, kf)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        ok = np.all(np.isfinite(step), axis=1) & (np.linalg.norm(step, axis=1) < res)
        x = np.where(ok[:, None], x - step, x)
    return x


def code_error(spacings, orientations=0.0, lattice: str = "hex", box: Box | None = None,
               phase_noise: float = 0.0, samples: int = 2000, seed: int = 0,
               resolution: float | None = None) -> dict:
    """Error of the multi-module code itself: ideal phases plus Gaussian phase noise.

    Positions uniform in the box; each phase gets independent ``N(0, phase_noise^2)`` noise.

    Returns
    -------
    dict with ``median_error_m``, ``p95_error_m``, ``catastrophic_fraction`` (errors above
    half the smallest spacing: the decoder chose another lattice point) and the inputs.
    """
    from .phases import position_to_phase

    box = Box() if box is None else box
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, box.size, (samples, 2))
    sp = np.atleast_1d(np.asarray(spacings, float))
    ori = np.broadcast_to(np.asarray(orientations, float), sp.shape)
    ph = np.stack([position_to_phase(x, float(s), float(o), lattice)
                   for s, o in zip(sp, ori, strict=True)], axis=1)
    ph = ph + rng.normal(0.0, phase_noise, ph.shape) if phase_noise > 0 else ph
    dec = decode_position(np.mod(ph, 2 * np.pi), sp, ori, lattice, box, resolution)
    err = np.linalg.norm(dec.position - x, axis=1)
    return {"phase_noise": float(phase_noise), "samples": samples,
            "median_error_m": float(np.median(err)),
            "p95_error_m": float(np.quantile(err, 0.95)),
            "catastrophic_fraction": float(np.mean(err > sp.min() / 2)),
            "spacings_m": sp.tolist(), "box_m": box.size}
