r"""The manifold's topology from the activity alone, robust to amplitude noise and uneven tuning.

The point cloud (:func:`activity_cloud`): ``samples`` evenly spaced bins of the counts smoothed
by a Gaussian of ``smooth`` seconds, square-rooted (Anscombe: Poisson noise of equal variance at
every rate), z-scored per cell and **normalised to unit length per bin**, so that a shared gain
or a fluctuating bump amplitude moves no point (only the pattern across cells counts); then its
leading principal components (4 for a ring, 6 for a torus: the fundamental modes of a
hexagonal bump), a mean shift (each point averaged with its ``neighbours`` nearest,
``rounds`` times, as in Gardner et al. 2022, Nature 602: 123) and the densest ``density``
fraction of the points (distance to the 20th neighbour): Poisson noise and sparse
bins spread points into the ring's hole, uneven tuning thins some arcs, and neither survives
a density cut.

Persistent homology (:func:`neurodyn.analysis.topology.persistent_homology`, Rips on max-min
landmarks) of the cloud and of ``nulls`` copies of the data with every cell shifted in time by
its own lag (each cell's statistics kept, the population's manifold destroyed). A bar counts
when it outlives ``margin`` times the longest bar of its dimension in every null. The Betti
numbers are then read:

- **torus**: at the birth of the longest counted H2 bar (the scale at which the Rips complex
  closes into a surface): bars alive there. A hexagonal torus's third shortest loop (the sum
  of the other two) also shows in the filtration, but dies before the surface closes;
- **ring** (and a torus without a void): the counted bars above the widest gap of their
  lifetimes (sorted, closed by the null's level).

Status: ``pass`` when the numbers are the geometry's; ``inconclusive`` when the data could not
have shown them -- a covariate arc wider than ``max_gap`` with no tuned cell, or no bar of any
dimension above the null (nothing but noise to read); ``fail`` otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from ...analysis.topology import ATTRACTOR_BETTI, persistent_homology
from .rule import Evidence

__all__ = ["activity_cloud", "activity_topology", "coverage_gap", "SMOOTH", "EXPECTED_BETTI"]

#: smoothing (s) of the activity for its topology, per geometry
SMOOTH = {"ring": 0.1, "torus": 0.2}
#: principal components of the cloud, per geometry
COMPONENTS = {"ring": 4, "torus": 6}
#: Betti numbers of each geometry's manifold (the ring read to dimension 1)
EXPECTED_BETTI = {"ring": ATTRACTOR_BETTI[1][:2], "torus": ATTRACTOR_BETTI[2]}


def _smoothed_rows(x: np.ndarray, sigma: float, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of ``x`` smoothed by a Gaussian of ``sigma`` bins (edges repeated), without
    smoothing every bin. A NaN (not observed) carries no weight: where a window holds one, the
    sum is divided by the weight of the observed bins (NaN where none was observed), so a gap
    does not pull the rates towards zero."""
    r = int(4 * sigma + 0.5)
    j = np.arange(-r, r + 1)
    w = np.exp(-0.5 * (j / max(sigma, 1e-12)) ** 2)
    w /= w.sum()
    y = np.zeros((idx.size, x.shape[1]))
    seen = np.zeros_like(y)
    for jj, ww in zip(j, w, strict=True):
        rows = x[np.clip(idx + jj, 0, x.shape[0] - 1)]
        finite = np.isfinite(rows)
        y += ww * np.where(finite, rows, 0.0)
        seen += ww * finite
    gap = seen < 1 - 1e-9
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(gap, y / np.where(seen > 0, seen, np.nan), y)


def activity_cloud(counts, dt: float, geometry: str = "ring", smooth: float | None = None,
                   samples: int = 5000, neighbours: int = 30, rounds: int = 2,
                   density: float = 0.3) -> np.ndarray:
    """The denoised, gain-free point cloud of the activity (module docstring).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin (NaN: not observed; it carries no weight in the smoothing).
    dt : float
        Bin width (s).
    geometry : {'ring', 'torus'}
        Sets the smoothing and the principal components kept.
    smooth : float or None
        Smoothing (s); None: :data:`SMOOTH`.
    samples : int
        Evenly spaced bins used at most.
    neighbours, rounds : int
        The mean shift.
    density : float
        Fraction of the densest points kept (1: all).

    Returns
    -------
    ndarray, shape (points, components)

    Examples
    --------
    >>> t = np.linspace(0, 200, 10000)
    >>> theta = np.arange(12) * 2 * np.pi / 12
    >>> gain = 1 + 0.5 * np.sin(t / 3)[:, None]          # a shared gain moves no point
    >>> x = np.random.default_rng(0).poisson(3 * gain * np.exp(2 * np.cos(t[:, None] - theta)))
    >>> y = activity_cloud(x, 0.02)
    >>> r = np.hypot(y[:, 0], y[:, 1])
    >>> bool(r.std() / r.mean() < 0.1)
    True
    """
    x = np.asarray(counts, dtype=float)
    smooth = SMOOTH[geometry] if smooth is None else smooth
    idx = np.linspace(0, x.shape[0] - 1, min(samples, x.shape[0])).astype(int)
    y = _smoothed_rows(x, smooth / dt, idx)
    y = np.sqrt(y[np.isfinite(y).all(axis=1)] + 0.375)  # windows with nothing observed left out
    y = (y - y.mean(0)) / (y.std(0) + 1e-12)
    y = y / (np.linalg.norm(y, axis=1, keepdims=True) + 1e-12)
    y = y - y.mean(0)
    _, _, vt = np.linalg.svd(y, full_matrices=False)
    y = y @ vt[:COMPONENTS[geometry]].T
    y = y / np.sqrt(np.mean(np.sum(y**2, axis=1)) + 1e-300)
    k = min(neighbours, y.shape[0])
    for _ in range(rounds):
        _, near = cKDTree(y).query(y, k)
        y = y[near].mean(axis=1)
    if density < 1:
        dist, _ = cKDTree(y).query(y, min(20, y.shape[0]))
        y = y[dist[:, -1] <= np.quantile(dist[:, -1], density)]
    return y


def _bars(homology) -> list[np.ndarray]:
    """Finite ``(birth, death)`` bars per dimension."""
    return [d[np.isfinite(d[:, 1])] for d in homology.diagrams]


def _counted(bars, floor, margin):
    return [b[(b[:, 1] - b[:, 0]) > margin * f] for b, f in zip(bars, floor, strict=True)]


def _above_gap(life: np.ndarray, bottom: float) -> int:
    if not life.size:
        return 0
    seq = np.r_[np.sort(life)[::-1], bottom]
    return int(np.argmax(seq[:-1] - seq[1:])) + 1


def read_betti(bars, floor, margin: float, maxdim: int) -> tuple[tuple[int, ...], float]:
    """Betti numbers from finite bars per dimension and the null's longest bars (module
    docstring); also the scale read at (NaN: by lifetimes).

    Parameters
    ----------
    bars : list of ndarray, shape (bars, 2)
        Finite bars per dimension.
    floor : sequence of float
        The null's longest bar per dimension.
    margin : float
        A bar counts above ``margin * floor``.
    maxdim : int
        Highest dimension.

    Returns
    -------
    betti : tuple of int
    scale : float

    Examples
    --------
    >>> b = [np.zeros((0, 2)), np.array([[.5, 1.3], [.55, 1.29], [.6, 1.05]]),
    ...      np.array([[1.1, 1.5]])]
    >>> read_betti(b, [0.1, 0.1, 0.1], 1.5, 2)     # the third loop dies before the void
    ((1, 2, 1), 1.1)
    """
    kept = _counted(bars, floor, margin)
    if maxdim >= 2 and kept[2].size:
        void = kept[2][np.argmax(kept[2][:, 1] - kept[2][:, 0])]
        r = float(void[0])
        alive = [int(np.count_nonzero((b[:, 0] <= r) & (b[:, 1] > r))) for b in kept]
        return (1 + alive[0], *alive[1:]), r
    counts = [_above_gap(b[:, 1] - b[:, 0], margin * f) for b, f in zip(kept, floor,
                                                                          strict=True)]
    return (1 + counts[0], *counts[1:]), float("nan")


def coverage_gap(preferred, tuned=None) -> float:
    """The widest arc of the ring (rad) with no tuned cell's preferred angle in it.

    Parameters
    ----------
    preferred : array_like, shape (cells,)
        Preferred angles (rad).
    tuned : array_like of bool, shape (cells,), or None
        Which cells count (None: all).

    Returns
    -------
    float

    Examples
    --------
    >>> round(coverage_gap(np.array([0.0, 0.5, 1.0])), 4)     # from 1 back round to 2 pi
    5.2832
    """
    a = np.sort(np.mod(np.asarray(preferred, dtype=float)[
        np.ones(len(preferred), bool) if tuned is None else np.asarray(tuned, bool)], 2 * np.pi))
    if a.size == 0:
        return 2 * math.pi
    return float(np.max(np.diff(np.r_[a, a[0] + 2 * np.pi])))


def activity_topology(counts, dt: float, geometry: str = "ring", *, gap: float | None = None,
                      max_gap: float = math.pi / 2, smooth: float | None = None,
                      nulls: int = 2, margin: float = 1.5, landmarks: int = 250,
                      seed: int = 0) -> Evidence:
    """The ``topology`` test of the verdict (module docstring).

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Counts per bin.
    dt : float
        Bin width (s).
    geometry : {'ring', 'torus'}
        The manifold looked for (Betti numbers :data:`EXPECTED_BETTI`).
    gap : float or None
        The widest covariate arc with no tuned cell (:func:`coverage_gap`); None: not known.
    max_gap : float
        Wider arcs leave the test without power.
    smooth : float or None
        Smoothing (s); None: :data:`SMOOTH`.
    nulls : int
        Time-shifted copies.
    margin : float
        A bar counts above ``margin`` times the nulls' longest of its dimension.
    landmarks : int
        Max-min landmarks of the persistent homology.
    seed : int
        Seeds the landmarks and the shifts.

    Returns
    -------
    Evidence
        ``statistic`` the Betti numbers, ``threshold`` the geometry's; ``details`` the four
        longest bars per dimension, the nulls' longest, the scale read at and the ratio of the
        longest bar to the null's per dimension.
    """
    from ...datasets.controls import time_shifted

    maxdim = 2 if geometry == "torus" else 1

    def homology(x, s):
        cloud = activity_cloud(x, dt, geometry, smooth)
        return persistent_homology(cloud, maxdim=maxdim, pca_components=None, seed=s,
                                   max_points=landmarks)

    floor = np.zeros(maxdim + 1)
    for n in range(nulls):
        for k, b in enumerate(_bars(homology(time_shifted(counts, seed=seed + 1 + n), seed))):
            floor[k] = max(floor[k], float((b[:, 1] - b[:, 0]).max()) if b.size else 0.0)
    bars = _bars(homology(counts, seed))
    betti, scale = read_betti(bars, floor, margin, maxdim)
    expected = EXPECTED_BETTI[geometry]
    life = [np.sort(b[:, 1] - b[:, 0])[::-1] for b in bars]
    ratio = [float(lv[0] / f) if lv.size and f > 0 else 0.0 for lv, f in zip(life, floor,
                                                                              strict=True)]
    details = {"lifetimes": [lv[:4].tolist() for lv in life], "null_longest": floor.tolist(),
               "scale": scale, "ratio_to_null": ratio, "margin": margin,
               "coverage_gap_deg": None if gap is None else math.degrees(gap)}
    structure = any(r > margin for r in ratio[1:])
    if betti == expected:
        status, why = "pass", f"Betti numbers {betti} are the {geometry}'s"
    elif gap is not None and gap > max_gap:
        status, why = "inconclusive", (f"an arc of {math.degrees(gap):.0f} degrees has no "
                                       "tuned cell: the manifold cannot be seen whole")
    elif not structure:
        status, why = "inconclusive", ("no bar of dimension >= 1 outlives the time-shifted "
                                       "null: only noise to read")
    else:
        status, why = "fail", f"Betti numbers {betti}, not the {geometry}'s {expected}"
    return Evidence("topology", "necessary", status, list(betti), list(expected),
                    power=status != "inconclusive", reason=why, details=details)
