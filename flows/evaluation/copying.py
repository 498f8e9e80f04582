"""The data-copying test (Meehan, Chaudhuri and Dasgupta, 2020, "A non-parametric test to
detect data-copying in generative models", AISTATS).

A sampler that copies its training set puts its samples closer to the training points than
fresh data lies. With T the training set, H a held-out sample of the data (never trained on)
and G the generated samples, compare the nearest-training-point distances

    a_i = min_t ||g_i - t||   (G, n points)      b_j = min_t ||h_j - t||   (H, m points)

by the Mann-Whitney U statistic U = #{(i, j) : a_i > b_j} (ties count 1/2). Under the null (G
another fresh sample of the data, independent of T) the a's and b's are exchangeable, so
Z = (U - n m / 2) / sqrt(n m (n + m + 1) / 12) is approximately N(0, 1); Z << 0 is copying,
Z >> 0 is underfitting (samples farther from the data than fresh data).

Copying in one region can hide behind underfitting in another, so the statistic is computed
per cell of a partition of the space (``cells`` k-means cells of T, seeded) and averaged with
the held-out weights pi_c of the cells: C_T = sum_c pi_c Z_c over the cells holding at least
``min_points`` of both G and H. Under the null the Z_c are independent N(0, 1), so
z = C_T / sqrt(sum_c pi_c^2) is N(0, 1) and the one-sided p-value is Phi(z) (small for copying).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch

from _runkit.results import Result

from ..errors import FlowsError, as_generator, check_int, check_positive_int
from .nearest import _points

__all__ = ["DataCopying", "data_copying"]


@dataclass(frozen=True)
class DataCopying(Result):
    """Result of :func:`data_copying`.

    Attributes
    ----------
    z : float
        C_T / sqrt(sum pi_c^2): N(0, 1) under the null; negative for copying.
    p_value : float
        Phi(z), the one-sided p-value against copying.
    c_t : float
        Meehan et al.'s C_T = sum_c pi_c Z_c.
    cells_used, cells : int
        Cells with enough points of both sets, and cells made.
    median_generated, median_heldout : float
        Median nearest-training-point distance of the samples and of the held-out points.
    n_samples, n_heldout, n_train : int
    """

    z: float
    p_value: float
    c_t: float
    cells_used: int
    cells: int
    median_generated: float
    median_heldout: float
    n_samples: int
    n_heldout: int
    n_train: int

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def nearest_distance(x: torch.Tensor, train: torch.Tensor, chunk: int = 2048) -> torch.Tensor:
    """Distance from each row of x (N, d) to its nearest row of train (n, d); shape (N,)."""
    out = torch.empty(x.shape[0], dtype=torch.float64)
    t_sq = train.square().sum(1)
    for i in range(0, x.shape[0], chunk):
        xc = x[i:i + chunk]
        sq = xc.square().sum(1)[:, None] - 2.0 * xc @ train.T + t_sq[None, :]
        out[i:i + chunk] = sq.min(1).values.clamp_min(0.0).sqrt()
    return out


def kmeans_cells(train: torch.Tensor, cells: int, seed: int | torch.Generator,
                 iterations: int = 25) -> torch.Tensor:
    """Centres ``(cells, d)`` of a seeded k-means (Lloyd) partition of train ``(n, d)``.

    Starts from ``cells`` distinct random training points; an emptied cell keeps its centre.
    """
    g = as_generator(seed)
    centres = train[torch.randperm(train.shape[0], generator=g)[:cells]].clone()
    for _ in range(iterations):
        lab = torch.cdist(train, centres).argmin(1)
        for c in range(centres.shape[0]):
            members = train[lab == c]
            if members.shape[0]:
                centres[c] = members.mean(0)
    return centres


def mann_whitney_z(a: torch.Tensor, b: torch.Tensor) -> float:
    """Z of the Mann-Whitney U = #{a_i > b_j} + #{a_i = b_j} / 2 (normal approximation).

    Examples
    --------
    >>> mann_whitney_z(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))  # U = 0
    -1.5491933384829668
    """
    n, m = a.numel(), b.numel()
    ranks = _midranks(torch.cat([a, b]).double())
    u = float(ranks[:n].sum()) - n * (n + 1) / 2
    return (u - n * m / 2) / math.sqrt(n * m * (n + m + 1) / 12)


def _midranks(v: torch.Tensor) -> torch.Tensor:
    """1-based ranks of v with ties given their average rank."""
    order = v.argsort()
    sv = v[order]
    ranks = torch.empty_like(v)
    i = 0
    while i < len(sv):
        j = i
        while j + 1 < len(sv) and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def data_copying(samples: torch.Tensor | np.ndarray, train: torch.Tensor | np.ndarray,
                 heldout: torch.Tensor | np.ndarray, cells: int = 3, min_points: int = 10,
                 seed: int = 0) -> DataCopying:
    """Meehan et al.'s data-copying test of samples against a training set.

    z = sum_c pi_c Z_c / sqrt(sum_c pi_c^2), Z_c the Mann-Whitney Z in cell c between the
    samples' and the held-out points' distances to their nearest training point (see the
    module docstring); p = Phi(z).

    Parameters
    ----------
    samples : array, shape (N, d)
    train : array, shape (n, d)
        The points the sampler was trained on.
    heldout : array, shape (M, d)
        Fresh points of the data that were not trained on.
    cells : int
        k-means cells of the training set (1: one global test).
    min_points : int
        Cells with fewer samples or held-out points are left out.
    seed : int
        Seed of the k-means start.

    Returns
    -------
    DataCopying

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> train, held = torch.randn(500, 4, generator=g), torch.randn(200, 4, generator=g)
    >>> copies = train[:200] + 0.05 * torch.randn(200, 4, generator=g)
    >>> data_copying(copies, train, held).p_value < 1e-6
    True
    >>> data_copying(torch.randn(200, 4, generator=g), train, held).p_value > 0.01
    True
    """
    s, t, h = _points(samples, "samples"), _points(train, "train"), _points(heldout, "heldout")
    if not s.shape[1] == t.shape[1] == h.shape[1]:
        raise FlowsError(f"samples, train and heldout have dimensions {s.shape[1]}, "
                         f"{t.shape[1]}, {h.shape[1]}; they must be equal")
    cells = check_positive_int("cells", cells)
    min_points = check_positive_int("min_points", min_points)
    if cells > t.shape[0]:
        raise FlowsError(f"cells={cells} is more than the {t.shape[0]} training points")
    a, b = nearest_distance(s, t), nearest_distance(h, t)
    centres = kmeans_cells(t, cells, check_int("seed", seed))
    ls, lh = torch.cdist(s, centres).argmin(1), torch.cdist(h, centres).argmin(1)
    weights, zs = [], []
    for c in range(cells):
        ia, ib = ls == c, lh == c
        if int(ia.sum()) >= min_points and int(ib.sum()) >= min_points:
            weights.append(float(ib.double().mean()))
            zs.append(mann_whitney_z(a[ia], b[ib]))
    if not zs:
        raise FlowsError(f"no cell holds {min_points} samples and {min_points} held-out points; "
                         "give fewer cells, a smaller min_points or more points")
    w = np.array(weights) / sum(weights)
    c_t = float(w @ np.array(zs))
    z = c_t / math.sqrt(float(w @ w))
    return DataCopying(z, 0.5 * math.erfc(-z / math.sqrt(2)), c_t, len(zs), cells,
                       float(a.median()), float(b.median()), s.shape[0], h.shape[0], t.shape[0])
