r"""What each segment of a grid-cell run needs: velocity samples, cue currents, map sums.

A long run is simulated in consecutive segments
(:func:`neurodyn.spatial.gridcells.run.run_grid_cells`). Each one reads the phase velocity on the
half-sample grid (:func:`_midpoint_samples`), the cue current of the samples it covers, and adds its
rates to the rate-map sums (:class:`_MapAccumulator`).

Cues of grid cells are encounters: while the agent is within ``distance`` m of a wall
(``boundary_cue``) or within ``radius`` m of a landmark (``landmark_cue``) an input of the cue's
strength, shaped like the bump (:func:`neurodyn.spatial.cues.cue_profile`), sits at each module's
phase ``K x`` of the true position, so the encounter pulls the integrator back to where the agent
is. Overlapping encounters add their strengths.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from _runkit import BadInput

from ...network import HopfieldNetwork
from ..agent import Box, Trajectory
from ..cues import cue_profile
from ..phases import position_to_phase
from ..ratemaps import RateMaps, rate_maps

__all__ = []


def _finite(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating)) \
        and math.isfinite(float(x))


def check_cues(boundary_cue, landmark_cue, box: Box, arena=None) -> None:
    """Raise ``BadInput`` naming the cue whose numbers are malformed (a landmark must lie in
    the arena ``(width, height)``, default the box)."""
    if boundary_cue is not None:
        if len(tuple(boundary_cue)) != 2 or not all(_finite(x) for x in boundary_cue) \
                or not (boundary_cue[0] >= 0 and boundary_cue[1] > 0):
            raise BadInput(f"boundary_cue={boundary_cue!r}: needs (strength, distance) with "
                           "strength >= 0 (units of u) and distance > 0 (m)", param="boundary_cue")
    if landmark_cue is not None:
        if len(tuple(landmark_cue)) != 4 or not all(_finite(x) for x in landmark_cue) \
                or not (landmark_cue[0] >= 0 and landmark_cue[3] > 0):
            raise BadInput(f"landmark_cue={landmark_cue!r}: needs (strength, x, y, radius) "
                           "with strength >= 0 (units of u) and radius > 0 (m)",
                           param="landmark_cue")
        w, h = (box.size, box.size) if arena is None else arena
        x, y = float(landmark_cue[1]), float(landmark_cue[2])
        if not (bool(box.contains(np.array([[x, y]]))[0]) and x <= w and y <= h):
            where = "box" if arena is None else "arena"
            raise BadInput(f"landmark_cue={landmark_cue!r}: the landmark ({landmark_cue[1]}, "
                           f"{landmark_cue[2]}) m lies outside the {where} [0, {w:g}] x "
                           f"[0, {h:g}] m", param="landmark_cue")


def cue_gain(trajectory: Trajectory, boundary_cue, landmark_cue, arena=None
             ) -> np.ndarray | None:
    """Cue strength at every sample (``(steps,)``), or None when no cue is ever on; the walls
    of the boundary cue are those of the arena ``(width, height)`` (default the box)."""
    pos = trajectory.position
    gain = np.zeros(pos.shape[0])
    if boundary_cue is not None:
        strength, distance = (float(x) for x in boundary_cue)
        size = trajectory.box.size
        sides = np.array([size, size] if arena is None else [float(a) for a in arena])
        gain += strength * (np.minimum(pos, sides - pos).min(axis=1) < distance)
    if landmark_cue is not None:
        strength, x, y, radius = (float(v) for v in landmark_cue)
        gain += strength * (np.hypot(pos[:, 0] - x, pos[:, 1] - y) < radius)
    return gain if gain.any() else None


def cue_current(network: HopfieldNetwork, gain: np.ndarray, trajectory: Trajectory, first: int,
                last: int, spacings, orientation: float, dt_sample: float):
    """Cue current over samples ``first..last`` (time from the segment's start): the gain at
    each sample times the bump-shaped profile at the true positions' phases."""
    g = network.geometry
    pos = trajectory.position[first:last + 1]
    amp = gain[first:last + 1]
    phase = np.stack([position_to_phase(pos, s, orientation, g.lattice) for s in spacings],
                     axis=1)  # (n + 1, modules, 2)
    q = cue_profile(network)
    zero = torch.zeros((1,) + g.shape, dtype=torch.float64)

    def current(t: float) -> torch.Tensor:
        i = min(int(math.floor(t / dt_sample + 1e-9)), len(amp) - 1)
        if amp[i] == 0:
            return zero
        return float(amp[i]) * g.shift(q, torch.as_tensor(phase[i], dtype=torch.float64))

    return current


def _midpoint_samples(vel: np.ndarray) -> np.ndarray:
    """Velocity samples on the half-interval grid for linear interpolation.

    ``vel[i] = (x_{i+1} - x_i) / dt`` is the mean velocity over ``[t_i, t_{i+1}]``, so it is
    placed at the midpoint ``t_i + dt/2``; at the sample times the neighbours are averaged:

    ``w_{2i+1} = v_i``, ``w_{2i} = (v_{i-1} + v_i) / 2`` (``w_0 = v_0``).

    The linear interpolant of ``w`` then integrates to the true displacement up to
    ``dt^2 |dv/dt| / 8``, an error that does not accumulate; the interpolant of ``v`` placed at
    ``t_i`` would be off by ``(v_n - v_0) dt / 2`` at ``t_n``.

    Parameters
    ----------
    vel : array (steps, ...), velocities of the intervals starting at each sample.

    Returns
    -------
    array (2 steps - 1, ...), samples every ``dt / 2`` from ``t_0`` to ``t_{steps-1}``.
    """
    n = vel.shape[0]
    out = np.empty((2 * n - 1,) + vel.shape[1:])
    out[1::2] = vel[:-1]
    out[0] = vel[0]
    out[2::2] = 0.5 * (vel[:-1] + vel[1:])
    return out


class _MapAccumulator:
    """Rate maps built segment by segment: rate sums and occupancy add up."""

    def __init__(self, box: Box, bins: int):
        self.box, self.bins = box, bins
        self.sums = None
        self.occ = None
        self.edges = None

    def add(self, positions: np.ndarray, rates: np.ndarray) -> None:
        rm = rate_maps(positions, rates, self.box, self.bins)
        sums = np.where(np.isfinite(rm.maps), rm.maps, 0.0) * rm.occupancy
        if self.sums is None:
            self.sums, self.occ, self.edges = sums, rm.occupancy.copy(), rm
        else:
            self.sums += sums
            self.occ += rm.occupancy

    def result(self) -> RateMaps:
        maps = np.full_like(self.sums, np.nan)
        np.divide(self.sums, self.occ, out=maps, where=self.occ > 0)
        return RateMaps(maps=maps, x_edges=self.edges.x_edges, y_edges=self.edges.y_edges,
                        occupancy=self.occ)


#: entries of the index arrays of one chunk of :meth:`_NullAccumulator.add` (8 bytes each)
_CHUNK = 1 << 20


class _NullAccumulator:
    """The shuffled gridness null of :func:`neurodyn.spatial.gridnull.shuffled_gridness`, built
    segment by segment without keeping the rates.

    Shifting cell ``c``'s rates circularly by ``L`` samples against the positions bins the rate
    of sample ``t`` at the position of sample ``(t + L) mod T``; every position is known before
    the run, so each segment's rates are binned at once for every lag (drawn as
    :func:`~neurodyn.spatial.gridnull.shifted_null` draws them) and only the rate sums
    ``(shuffles + 1, cells, bins, bins)`` are kept (the unshifted maps first)."""

    def __init__(self, trajectory: Trajectory, bins: int, cells: int, shuffles: int,
                 min_shift: float, seed: int):
        steps, size = trajectory.steps, trajectory.box.size
        idx = np.minimum((trajectory.position * (bins / size)).astype(np.intp), bins - 1)
        self.flat = idx[:, 1] * bins + idx[:, 0]
        lo = int(np.ceil(min_shift / float(trajectory.dt)))
        rng = np.random.default_rng(seed)
        lags = [np.zeros(cells, dtype=np.int64)]
        lags += [rng.integers(lo, steps - lo, size=cells) for _ in range(shuffles)]
        self.lags = np.stack(lags)  # (shuffles + 1, cells)
        self.bins, self.steps, self.min_shift = bins, steps, float(min_shift)
        self.sums = np.zeros(self.lags.shape + (bins * bins,))
        self.occ = np.bincount(self.flat, minlength=bins * bins).astype(float).reshape(bins, bins)

    def add(self, first: int, rates: np.ndarray) -> None:
        """Bin ``rates`` ``(n, cells)`` of samples ``first .. first + n - 1`` at every lag, in
        chunks whose ``(samples, lags, cells)`` indices take about :data:`_CHUNK` entries."""
        rows = np.arange(self.lags.size).reshape(self.lags.shape) * self.bins ** 2
        chunk = max(1, _CHUNK // self.lags.size)
        for a in range(0, rates.shape[0], chunk):
            r = rates[a:a + chunk]
            t = np.arange(first + a, first + a + r.shape[0])
            where = self.flat[(t[:, None, None] + self.lags[None]) % self.steps]  # (n, S, C)
            total = np.bincount((where + rows[None]).ravel(),
                                weights=np.broadcast_to(r[:, None, :], where.shape).ravel(),
                                minlength=self.sums.size)
            self.sums += total.reshape(self.sums.shape)

    def result(self, box: Box, smoothing: float, percentile: float = 95.0):
        """The :class:`~neurodyn.spatial.gridnull.GridClassification` of the binned rates."""
        from scipy import ndimage

        from ..gridnull import GridClassification
        from ..gridscores import grid_scores

        n = self.bins
        sums = ndimage.gaussian_filter(self.sums.reshape(-1, n, n), sigma=(0, smoothing,
                                       smoothing), mode="constant")
        occ = ndimage.gaussian_filter(self.occ, sigma=smoothing, mode="constant")
        maps = np.full_like(sums, np.nan)
        np.divide(sums, occ, out=maps, where=(self.occ > 0) & (occ > 0))
        edges = np.linspace(0.0, box.size, n + 1)
        scores = grid_scores(RateMaps(maps=maps, x_edges=edges, y_edges=edges.copy(),
                                      occupancy=self.occ)).classic.reshape(self.lags.shape)
        real, null = scores[0], scores[1:]
        pooled = null[np.isfinite(null)]
        thr = float(np.percentile(pooled, percentile)) if pooled.size else np.nan
        per = np.array([np.nanpercentile(null[:, c], percentile) if np.isfinite(null[:, c]).any()
                        else np.nan for c in range(real.size)])
        is_grid = np.where(np.isfinite(real), real, -np.inf) > thr
        return GridClassification(real, null, thr, per, is_grid, float(is_grid.mean()),
                                  float(percentile), float(smoothing), self.min_shift)
