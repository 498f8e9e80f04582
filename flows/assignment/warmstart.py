"""Warm starts of the exact minibatch assignment: OT prices as a function of the target point.

Exact-OT training solves the assignment between a batch of source points and a batch of target
points at every step, always between the same two distributions. The auction's final prices
of a batch (column potentials of the cost ||x_i - y_j||^2) sample one function of the target
point, up to a constant and the batch's own noise: the Kantorovich potential of the two
distributions. :class:`PriceMap` reads it off a few reference batches and evaluates it at the
points of a new batch, so the auction starts near its answer, with a smaller first eps than a
cold start (:data:`flows.assignment.auction.EPS0_WARM`). The assignment found does not depend on the
start.

Much of a batch's own noise is the offset of its means from the distributions' means. For the
squared Euclidean cost a translation is exact: with sources moved by a and targets by b, the
prices are P(y - b) + 2 (a - b) . y up to a constant, P those of the unmoved problem (the cost
changes by terms of x_i alone and the column terms -2 (a - b) . y_j). The map is fit on the
reference batches with their offsets removed this way, and a new batch's guess puts its own
back.

The map is piecewise linear on a grid over the reference points (dimension at most
:data:`MAX_DIM`, where a grid is cheap to read): each cell holds the mean first-order
expansion of the prices of the reference points in it, an empty cell that of the nearest filled
cell within ``reach`` cells, and a point outside gets no guess (NaN), so it starts at the cold
price.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy import ndimage

from ..errors import FlowsError
from .auction import _kernels, assignment_and_prices

MAX_DIM = 3  # grids in at most this many dimensions


class PriceMap:
    """Guessed OT prices of target points, piecewise linear on a grid (see the module).

    Build it with :meth:`fit`; call it on points y of shape (n, d) (and the batch's sources x)
    to get their prices, NaN where there is no guess. ``mean_x`` and ``mean_y`` are the
    reference batches' mean source and target points.
    """

    def __init__(self, lo: np.ndarray, width: np.ndarray, coef: np.ndarray, side: int,
                 mean_x: np.ndarray | None = None, mean_y: np.ndarray | None = None) -> None:
        self.lo, self.width, self.coef, self.side = lo, width, coef, side
        zero = np.zeros_like(lo)
        self.mean_x = zero if mean_x is None else np.asarray(mean_x, dtype=np.float64)
        self.mean_y = zero if mean_y is None else np.asarray(mean_y, dtype=np.float64)

    @property
    def dim(self) -> int:
        """The dimension of the points."""
        return int(self.lo.shape[0])

    @classmethod
    def fit(cls, pairs: Iterable[tuple[np.ndarray, np.ndarray]], reach: int = 2
            ) -> PriceMap | None:
        """The map from the exact assignments of reference batches (x, y), each (n, d).

        Each batch is solved exactly (:func:`flows.assignment.auction.assignment_and_prices`); its
        prices, with its offsets from the mean source and target points removed (see the module)
        and less their mean (a batch's prices are defined up to a constant), are averaged per
        grid cell of about four reference points. Returns None when no batch has prices (all
        were solved through their few distinct points) or the dimension exceeds
        :data:`MAX_DIM`.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> pairs = [(rng.standard_normal((256, 2)), rng.standard_normal((256, 2)) + 3.0)
        ...          for _ in range(2)]
        >>> PriceMap.fit(pairs).dim
        2
        """
        if isinstance(reach, bool) or not isinstance(reach, int) or reach < 0:
            raise FlowsError(f"reach={reach!r} is not allowed; it must be an int >= 0")
        solved = cls._solve_batches(pairs)
        if not solved:
            return None
        mean_x = np.mean([s[0] for s in solved], axis=0)
        mean_y = np.mean([s[1].mean(0) for s in solved], axis=0)
        y, p, g = cls._centred_prices(solved, mean_x, mean_y)
        lo, width, coef, side = cls._cell_expansions(y, p, g, reach)
        return cls(lo, width, coef, side, mean_x, mean_y)

    @staticmethod
    def _solve_batches(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> list | None:
        """``(mean x, y, prices, paired source)`` of each batch solved with prices; None as soon
        as a batch's dimension exceeds :data:`MAX_DIM`."""
        solved = []
        for x, y in pairs:
            x = np.asarray(x, dtype=np.float64)
            y = np.asarray(y, dtype=np.float64)
            if y.ndim != 2 or y.shape[1] > MAX_DIM:
                return None
            sigma, p = assignment_and_prices(x, y)
            if p is not None:
                source = np.empty_like(x)
                source[sigma] = x  # the source point paired with each y
                solved.append((x.mean(0), y, p, source))
        return solved

    @staticmethod
    def _centred_prices(solved: list, mean_x: np.ndarray, mean_y: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every batch's targets, prices and price gradients, ``(N, d)``, ``(N,)``, ``(N, d)``,
        with its offsets from the means removed and its prices less their mean."""
        ys, ps, gs = [], [], []
        for xm, y, p, source in solved:
            a, b = xm - mean_x, y.mean(0) - mean_y  # this batch's offsets
            ys.append(y - b)  # the prices P(y - b) + 2 (a - b) . y, read back as P
            p = p - 2.0 * (y @ (a - b))
            ps.append(p - p.mean())
            gs.append(2.0 * (source - y) - 2.0 * (a - b))  # grad P = 2 (T^-1(y) - y)
        return np.concatenate(ys), np.concatenate(ps), np.concatenate(gs)

    @staticmethod
    def _cell_expansions(y: np.ndarray, p: np.ndarray, g: np.ndarray, reach: int):
        """``(lo, width, coef, side)``: a grid of about four points ``y`` per cell and each
        cell's averaged first-order expansion ``(side**d, d + 1)`` (an empty cell takes its
        nearest filled cell's within ``reach`` cells, else NaN)."""
        n, d = y.shape
        side = max(1, int((n / 4) ** (1 / d)))
        lo, hi = y.min(0), y.max(0)
        width = np.where(hi > lo, (hi - lo) / side, 1.0)
        cells = np.minimum(((y - lo) / width).astype(np.int64), side - 1)
        flat = np.ravel_multi_index(cells.T, (side,) * d)
        count = np.bincount(flat, minlength=side**d)
        filled = count > 0
        # each reference point's first-order expansion P_r + g_r . (y - y_r), averaged per cell
        terms = np.column_stack([p - (g * y).sum(1), g])
        coef = np.full((side**d, d + 1), np.nan)
        for k in range(d + 1):
            coef[filled, k] = np.bincount(flat, terms[:, k], side**d)[filled] / count[filled]
        coef = coef.reshape((side,) * d + (d + 1,))
        empty = ~filled.reshape((side,) * d)
        if empty.any():  # an empty cell takes its nearest filled cell's expansion, within reach
            dist, nearest = ndimage.distance_transform_edt(empty, return_indices=True)
            coef = np.where((dist <= reach)[..., None], coef[tuple(nearest)], np.nan)
        return lo, width, coef.reshape(side**d, d + 1), side

    def __call__(self, y: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
        """Guessed prices of the points y (n, d), NaN outside the reference points' box.

        With the batch's source points x (m, d), the guess carries the batch's offsets from the
        reference means, a = mean(x) - mean_x and b = mean(y) - mean_y:
        P(y - b) + 2 (a - b) . y; without x, the map P itself.
        """
        y = np.ascontiguousarray(y, dtype=np.float64)
        if y.ndim != 2 or y.shape[1] != self.dim:
            raise FlowsError(f"y has shape {y.shape}; points of dimension {self.dim} are "
                             "required")
        auction = _kernels()[0]
        if x is None:
            zero = np.zeros(self.dim)
            return auction.grid_prices(y, self.lo, self.width, self.side, self.coef, zero, zero)
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim or x.shape[0] == 0:
            raise FlowsError(f"x has shape {x.shape}; a non-empty batch of points of dimension "
                             f"{self.dim} is required")
        return auction.batch_grid_prices(y, x, self.lo, self.width, self.side, self.coef,
                                         self.mean_x, self.mean_y)
