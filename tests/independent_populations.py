"""Recorded-like populations generated without the library: numpy only, Poisson counts, driven by
the real Tanni trajectory that ships in RatInABox's wheel.

The attractor verdict of ``neurodyn fit-activity`` is judged on these, so nothing here imports
``neurodyn`` or shares its generator's assumptions: cells have clustered (uneven) preferred
angles, heterogeneous widths, gains and baselines; the trajectory is the real rat's; the bump's
fluctuations and drift are simulated here by exact Ornstein-Uhlenbeck updates.

Head direction (``hd_population``), kinds:

- ``attractor``: the bump sits at ``heading + e``, ``e`` diffusing with coefficient ``D`` and
  pulled back at rate ``pull``; its amplitude and width fluctuate coherently (one process each,
  shared by every cell);
- ``gain``: feed-forward, the bump at the heading exactly, every cell's rate multiplied by one
  shared gain ``1 + a(t)`` (the classic confound: coherent, but only along the tuning itself);
- ``independent``: feed-forward, each cell's gain fluctuating on its own;
- ``shifted``: the attractor's counts with every cell shifted in time by its own lag (the
  attractor destroyed, each cell's statistics kept).

Grid module (``grid_population``): lattice phases of the position plus a diffusing offset,
coherent amplitude and width fluctuations, three cosines at 60 degrees per field, heterogeneous
field widths, mean rates 2-7 Hz. ``place`` and ``band`` cells (``spatial_population``) are the
spatial look-alikes: one Gaussian field each, or stripes along one direction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Population", "tanni", "hd_population", "grid_population", "spatial_population",
           "HD_KINDS", "SPATIAL_KINDS"]

HD_KINDS = ("attractor", "gain", "independent", "shifted")
SPATIAL_KINDS = ("grid", "place", "band")


@dataclass
class Population:
    """Counts ``(T, cells)`` in bins of ``dt`` s, the covariate and what made them."""

    counts: np.ndarray
    dt: float
    heading: np.ndarray | None = None
    position: np.ndarray | None = None
    truth: dict = field(default_factory=dict)

    def npz(self, path, covariate: bool = True) -> Path:
        """Write the library's activity file (``counts``, ``dt``, ``heading``/``position``)."""
        arrays = {"counts": self.counts, "dt": np.float64(self.dt)}
        if covariate and self.heading is not None:
            arrays["heading"] = self.heading
        if covariate and self.position is not None:
            arrays["position"] = self.position
        np.savez(path, **arrays)
        return Path(path)


def tanni(dt: float, seconds: float, start: float = 0.0):
    """Positions (m) and movement direction (rad) of the Tanni session resampled to ``dt``.

    The direction is that of the velocity of the positions smoothed over 0.1 s."""
    import ratinabox

    d = np.load(Path(ratinabox.__file__).parent / "data" / "tanni.npz")
    t, pos = d["t"] - d["t"][0], d["pos"]
    grid = start + np.arange(int(round(seconds / dt))) * dt
    if grid[-1] > t[-1]:
        raise ValueError(f"start={start} + seconds={seconds} is past the session ({t[-1]:.0f} s)")
    xy = np.stack([np.interp(grid, t, pos[:, k]) for k in range(2)], 1)
    k = max(1, int(round(0.1 / dt)))
    kernel = np.ones(k) / k
    v = np.stack([np.convolve(np.gradient(xy[:, j], dt), kernel, mode="same") for j in range(2)],
                 1)
    return xy, np.mod(np.arctan2(v[:, 1], v[:, 0]), 2 * np.pi)


def _ou(rng, T: int, dt: float, tau: float, sd: float, shape=()) -> np.ndarray:
    """Stationary Ornstein-Uhlenbeck paths ``(T, *shape)`` of correlation time ``tau``."""
    a = np.exp(-dt / tau)
    noise = rng.normal(0.0, sd * np.sqrt(1 - a * a), (T, *shape))
    x = np.empty((T, *shape))
    x[0] = rng.normal(0.0, sd, shape)
    for i in range(1, T):
        x[i] = a * x[i - 1] + noise[i]
    return x


def _drift(rng, T: int, dt: float, D: float, pull: float, axes: int = 1) -> np.ndarray:
    """Offsets diffusing with coefficient ``D`` (rad^2/s per axis), pulled to 0 at ``pull``."""
    a = np.exp(-pull * dt)
    sd = np.sqrt(2 * D * dt) if pull == 0 else np.sqrt(D / pull * (1 - a * a))
    steps = rng.normal(0.0, sd, (T, axes))
    e = np.empty((T, axes))
    e[0] = 0.0
    for i in range(1, T):
        e[i] = a * e[i - 1] + steps[i]
    return e[:, 0] if axes == 1 else e


def _clustered_angles(rng, cells: int) -> np.ndarray:
    centres = rng.uniform(0, 2 * np.pi, 4)
    which = rng.integers(0, 4, cells)
    return np.mod(centres[which] + rng.vonmises(0.0, 2.5, cells), 2 * np.pi)


def hd_population(kind: str = "attractor", seed: int = 0, cells: int = 60,
                  seconds: float = 1800.0, dt: float = 0.01, D: float = 0.01,
                  pull: float = 0.1, amplitude_sd: float = 0.25, width_sd: float = 0.25,
                  gain_sd: float = 0.18, tau: float = 0.5) -> Population:
    """Head-direction cells of the kind named (module docstring), Poisson counts."""
    if kind not in HD_KINDS:
        raise ValueError(f"kind={kind!r}: one of {HD_KINDS}")
    rng = np.random.default_rng(seed)
    _, heading = tanni(dt, seconds, start=float(rng.uniform(0, 3000)))
    T = heading.size
    theta = _clustered_angles(rng, cells)
    width = rng.uniform(1.5, 6.0, cells)            # von Mises concentrations
    peak = rng.lognormal(np.log(15.0), 0.5, cells)  # Hz
    base = rng.uniform(0.1, 1.5, cells)
    amp = np.ones((T, 1))
    wid = np.ones((T, 1))
    bump = heading.copy()
    gain = np.ones((T, cells))
    if kind in ("attractor", "shifted"):
        bump = heading + _drift(rng, T, dt, D, pull)
        amp = 1 + _ou(rng, T, dt, tau, amplitude_sd, (1,))
        wid = 1 + _ou(rng, T, dt, tau, width_sd, (1,))
    elif kind == "gain":
        gain = 1 + _ou(rng, T, dt, 0.3, gain_sd, (1,))
    else:
        gain = 1 + _ou(rng, T, dt, 0.3, gain_sd, (cells,))
    shape = np.exp(width * np.maximum(wid, 0.05) * (np.cos(bump[:, None] - theta) - 1))
    rate = np.maximum(base + peak * np.maximum(amp, 0) * np.maximum(gain, 0) * shape, 0)
    counts = rng.poisson(rate * dt).astype(np.uint8)
    if kind == "shifted":
        lags = rng.integers(int(20 / dt), T - int(20 / dt), cells)
        counts = np.stack([np.roll(counts[:, i], lags[i]) for i in range(cells)], 1)
    return Population(counts, dt, heading=np.mod(heading, 2 * np.pi),
                      truth={"kind": kind, "preferred": theta, "width": width,
                             "bump": np.mod(bump, 2 * np.pi), "D": D if kind in (
                                 "attractor", "shifted") else 0.0})


def _lattice(spacing: float, orientation: float) -> np.ndarray:
    """The three wave vectors (rows) of a hexagonal grid of ``spacing`` m."""
    k = 4 * np.pi / (np.sqrt(3) * spacing)
    ang = orientation + np.array([0.0, np.pi / 3, 2 * np.pi / 3])
    return k * np.stack([np.cos(ang), np.sin(ang)], 1)


def grid_population(seed: int = 0, cells: int = 80, seconds: float = 1800.0,
                    dt: float = 0.01, spacing: float = 0.6, D: float = 0.005,
                    pull: float = 0.1, amplitude_sd: float = 0.2, width_sd: float = 0.1,
                    tau: float = 0.5, rates=(2.0, 7.0)) -> Population:
    """One grid module: a hexagonal torus attractor driven by the real positions."""
    rng = np.random.default_rng(seed)
    pos, _ = tanni(dt, seconds, start=float(rng.uniform(0, 3000)))
    T = pos.shape[0]
    K = _lattice(spacing, rng.uniform(0, np.pi / 3))
    phase = pos @ K[:2].T                                   # two lattice phases (rad)
    offset = _drift(rng, T, dt, D, pull, axes=2)
    bump = phase + offset
    cell_phase = rng.uniform(0, 2 * np.pi, (cells, 2))
    width = rng.uniform(1.0, 3.0, cells)
    amp = 1 + _ou(rng, T, dt, tau, amplitude_sd, (1,))
    wid = 1 + _ou(rng, T, dt, tau, width_sd, (1,))
    d = bump[:, None, :] - cell_phase[None]                  # (T, cells, 2)
    s = np.cos(d[..., 0]) + np.cos(d[..., 1]) + np.cos(d[..., 0] - d[..., 1])
    shape = np.exp(width * np.maximum(wid, 0.05) * (s - 3) / 3)
    mean_rate = rng.uniform(*rates, cells)
    rate = np.maximum(amp, 0) * shape * (mean_rate / shape.mean(0))
    counts = rng.poisson(rate * dt).astype(np.uint8)
    return Population(counts, dt, position=pos,
                      truth={"kind": "grid", "spacing": spacing, "lattice": K,
                             "phases": cell_phase, "bump": np.mod(bump, 2 * np.pi)})


def spatial_population(kind: str = "place", seed: int = 0, cells: int = 80,
                       seconds: float = 1800.0, dt: float = 0.01, rates=(2.0, 7.0),
                       gain_sd: float = 0.18) -> Population:
    """Place cells (one Gaussian field each) or band cells (stripes along one direction),
    feed-forward with each cell's gain fluctuating on its own."""
    if kind not in ("place", "band"):
        raise ValueError(f"kind={kind!r}: 'place' or 'band'")
    rng = np.random.default_rng(seed)
    pos, _ = tanni(dt, seconds, start=float(rng.uniform(0, 3000)))
    T = pos.shape[0]
    if kind == "place":
        centres = np.stack([rng.uniform(pos[:, k].min(), pos[:, k].max(), cells)
                            for k in range(2)], 1)
        sigma = rng.uniform(0.15, 0.4, cells)
        d2 = ((pos[:, None, :] - centres[None]) ** 2).sum(-1)
        shape = np.exp(-0.5 * d2 / sigma**2)
    else:
        ang = rng.uniform(0, np.pi)
        k = 2 * np.pi / 0.6 * np.array([np.cos(ang), np.sin(ang)])
        ph = rng.uniform(0, 2 * np.pi, cells)
        width = rng.uniform(1.0, 3.0, cells)
        shape = np.exp(width * (np.cos((pos @ k)[:, None] - ph) - 1))
    gain = np.maximum(1 + _ou(rng, T, dt, 0.3, gain_sd, (cells,)), 0)
    mean_rate = rng.uniform(*rates, cells)
    rate = gain * shape * (mean_rate / shape.mean(0))
    counts = rng.poisson(rate * dt).astype(np.uint8)
    return Population(counts, dt, position=pos, truth={"kind": kind})
