"""Couplings of a minibatch of source points x0 with a minibatch of target points x1.

- ``independent``: pairs (x0_i, x1_i) as drawn.
- ``ot``: exact minibatch optimal transport for the squared Euclidean cost, returned as a true
  permutation sigma (every point used exactly once):
  sigma = argmin_{sigma in S_B} sum_i ||x0_i - x1_sigma(i)||^2,
  solved by :mod:`flows.assignment` when numba is installed, else by POT's network simplex.
- ``sinkhorn``: entropic OT plan P = argmin <P, C> - reg * mean(C) * H(P) (POT Sinkhorn, cost
  normalised by its mean so ``reg`` is scale free); each source point x0_i keeps its place and is
  paired with x1_j drawn from the row P_i. / sum_j P_ij with the caller's generator. Every source
  point is used once; target points may repeat.
"""

from __future__ import annotations

import numpy as np
import ot
import torch
from scipy.optimize import linear_sum_assignment

from . import assignment
from .errors import FlowsError, as_generator, check_choice, check_positive

COUPLINGS = ("independent", "ot", "sinkhorn")


def squared_distances(x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """C_ij = ||x_i - y_j||^2 as a float64 array, x (B, d), y (B', d) -> (B, B')."""
    x64, y64 = x.double(), y.double()
    c = (x64.square().sum(1)[:, None] + y64.square().sum(1)[None, :]) - 2 * (x64 @ y64.T)
    return c.clamp_min_(0).numpy()


OT_SOLVERS = ("auto", "auction", "emd", "lsa")


def ot_permutation(x0: torch.Tensor, x1: torch.Tensor, solver: str = "auto") -> torch.Tensor:
    """Exact minibatch OT assignment as a permutation.

    sigma = argmin_{sigma in S_B} sum_i ||x0_i - x1_sigma(i)||^2  (the uniform-weight OT plan of
    two equal-size point clouds is a permutation matrix / B).

    Parameters
    ----------
    x0, x1 : torch.Tensor, shape (B, d)
    solver : str
        "auction" (:func:`flows.assignment.auction_assignment`: compiled auction and an exact
        sparse finish; needs numba), "emd" (POT's network simplex; the basic optimal plan is read
        off as a permutation, with a check), "lsa" (scipy's linear_sum_assignment) or "auto"
        (auction when numba is installed, else emd). All return an optimal assignment; they can
        differ only where two assignments tie in floating point.

    Returns
    -------
    torch.Tensor of int64, shape (B,)
        sigma, a permutation of 0..B-1: x0_i is paired with x1_sigma(i).

    Examples
    --------
    >>> x = torch.tensor([[0.0], [1.0]])
    >>> ot_permutation(x, x.flip(0)).tolist()
    [1, 0]
    """
    check_choice("solver", solver, OT_SOLVERS)
    if x0.shape != x1.shape:
        raise FlowsError(f"x1 has shape {tuple(x1.shape)}; it must equal x0's {tuple(x0.shape)}")
    if solver == "auto":
        solver = "auction" if assignment.available() else "emd"
    if solver == "auction":
        return torch.from_numpy(assignment.squared_euclidean_assignment(
            x0.double().numpy(), x1.double().numpy()))
    c = squared_distances(x0, x1)
    b = c.shape[0]
    if solver == "emd":
        w = np.full(b, 1.0 / b)
        plan, log = ot.emd(w, w, c, numItermax=max(100_000, 50 * b * b), log=True)
        if log.get("result_code") == 1:
            sigma = plan.argmax(axis=1)
            counts = np.bincount(sigma, minlength=b)
            if (counts == 1).all() and np.allclose(plan[np.arange(b), sigma], 1.0 / b):
                return torch.from_numpy(sigma.astype(np.int64))
    _, sigma = linear_sum_assignment(c)
    return torch.from_numpy(sigma.astype(np.int64))


def sinkhorn_pairing(x0: torch.Tensor, x1: torch.Tensor, generator: torch.Generator | int,
                     reg: float = 0.05) -> torch.Tensor:
    """Pair each x0_i with x1_j, j ~ P_i. / sum_j P_ij, P the entropic OT plan.

    P = argmin_{P in U(1/B, 1/B)} <P, C / mean(C)> - reg H(P),  C_ij = ||x0_i - x1_j||^2.

    Parameters
    ----------
    x0, x1 : torch.Tensor, shape (B, d)
    generator : torch.Generator or int
        Randomness of the draw.
    reg : float
        Entropic regularisation relative to the mean cost.

    Returns
    -------
    torch.Tensor of int64, shape (B,)
        Index j(i) into x1 for every source point.
    """
    reg = check_positive("reg", reg)
    g = as_generator(generator, "generator")
    c = squared_distances(x0, x1)
    c = c / max(c.mean(), 1e-12)
    b0, b1 = c.shape
    a, b = np.full(b0, 1.0 / b0), np.full(b1, 1.0 / b1)
    plan = ot.sinkhorn(a, b, c, reg, method="sinkhorn", numItermax=1000, stopThr=1e-4, warn=False)
    if not np.isfinite(plan).all() or (plan.sum(1) <= 0).any():
        plan = ot.sinkhorn(a, b, c, reg, method="sinkhorn_log", numItermax=1000, stopThr=1e-4,
                           warn=False)
    p = torch.from_numpy(np.asarray(plan)).clamp_min(0)
    if not torch.isfinite(p).all() or (p.sum(1) <= 0).any():
        raise FlowsError(f"reg={reg!r} gave a degenerate Sinkhorn plan; use a larger reg")
    return torch.multinomial(p, 1, generator=g).squeeze(1)


def couple(name: str, x0: torch.Tensor, x1: torch.Tensor,
           generator: torch.Generator | int | None = None, reg: float = 0.05
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply a coupling by name; returns the paired (x0, x1), each of shape (B, d).

    ``generator`` is needed by "sinkhorn" only.
    """
    check_choice("coupling", name, COUPLINGS)
    if name == "independent":
        return x0, x1
    if name == "ot":
        return x0, x1[ot_permutation(x0, x1)]
    return x0, x1[sinkhorn_pairing(x0, x1, generator, reg)]  # type: ignore[arg-type]
