"""Couplings of a minibatch of source points x0 with a minibatch of target points x1.

- ``independent``: pairs (x0_i, x1_i) as drawn.
- ``ot``: exact minibatch optimal transport for the squared Euclidean cost, returned as a true
  permutation sigma (every point used exactly once):
  sigma = argmin_{sigma in S_B} sum_i ||x0_i - x1_sigma(i)||^2,
  solved by :mod:`flows.assignment.auction` when numba is installed, else by POT's network simplex.
- ``sinkhorn``: entropic OT plan P = argmin <P, C> - reg * mean(C) * H(P) (POT Sinkhorn, cost
  normalised by its mean so ``reg`` is scale free); each source point x0_i keeps its place and is
  paired with x1_j drawn from the row P_i. / sum_j P_ij with the caller's seed. Every source
  point is used once; target points may repeat.

Points may live on any device: the cost matrix is formed there (float64) and only the
assignment itself, a sequential combinatorial solve, runs on the CPU; the pairing is applied on
the device. With labels (:func:`couple_within_classes`) each class is coupled on its own, so a
target point is only ever paired within its class.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from _runkit import Registry

from .assignment import auction as assignment
from .assignment.warmstart import PriceMap
from .errors import FlowsError, as_generator, check_positive


def squared_distances(x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """C_ij = ||x_i - y_j||^2 as a float64 array, x (B, d), y (B', d) -> (B, B').

    Formed on the points' device; the result is copied to the CPU.
    """
    x64, y64 = x.double(), y.double()
    c = (x64.square().sum(1)[:, None] + y64.square().sum(1)[None, :]) - 2 * (x64 @ y64.T)
    return c.clamp_min_(0).cpu().numpy()


# exact assignment solvers of the "ot" coupling (see ot_permutation)
OT_SOLVERS = Registry("ot_solver")
for _name in ("auto", "auction", "emd", "lsa"):
    OT_SOLVERS.add(_name, _name)


def resolve_ot_solver(ot_solver: str = "auto") -> str:
    """The solver "auto" stands for here: "auction" when numba is installed, else "emd"."""
    OT_SOLVERS.get(ot_solver)
    if ot_solver == "auto":
        return "auction" if assignment.available() else "emd"
    return ot_solver


def ot_permutation(x0: torch.Tensor, x1: torch.Tensor, ot_solver: str = "auto",
                   warm: PriceMap | None = None) -> torch.Tensor:
    """Exact minibatch OT assignment as a permutation.

    sigma = argmin_{sigma in S_B} sum_i ||x0_i - x1_sigma(i)||^2  (the uniform-weight OT plan of
    two equal-size point clouds is a permutation matrix / B).

    Parameters
    ----------
    x0, x1 : torch.Tensor, shape (B, d)
    ot_solver : str
        "auction" (:func:`flows.assignment.auction.auction_assignment`: compiled auction and an
        exact sparse finish; needs numba), "emd" (POT's network simplex; the basic optimal plan
        is read off as a permutation, with a check), "lsa" (scipy's linear_sum_assignment) or
        "auto" (auction when numba is installed, else emd). All return an optimal assignment;
        they can differ only where two assignments tie in floating point.
    warm : flows.assignment.warmstart.PriceMap, optional
        Guessed prices of the target points, a warm start of the "auction" solver on the CPU
        (other solvers and devices ignore it). The answer does not depend on it.

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
    solver = resolve_ot_solver(ot_solver)
    if x0.shape != x1.shape:
        raise FlowsError(f"x1 has shape {tuple(x1.shape)}; it must equal x0's {tuple(x0.shape)}")
    if solver == "auction" and x0.device.type == "cpu":
        x, y = x0.double().numpy(), x1.double().numpy()
        return torch.from_numpy(assignment.squared_euclidean_assignment(
            x, y, None if warm is None else warm(y, x)))
    c = squared_distances(x0, x1)  # on the device; the solve below runs on the CPU
    if solver == "auction":
        return torch.from_numpy(assignment.auction_assignment(c))
    b = c.shape[0]
    if solver == "emd":
        import ot  # POT loads scikit-learn and scipy.stats (seconds): only where it solves

        w = np.full(b, 1.0 / b)
        plan, log = ot.emd(w, w, c, numItermax=max(100_000, 50 * b * b), log=True)
        if log.get("result_code") == 1:
            sigma = plan.argmax(axis=1)
            counts = np.bincount(sigma, minlength=b)
            if (counts == 1).all() and np.allclose(plan[np.arange(b), sigma], 1.0 / b):
                return torch.from_numpy(sigma.astype(np.int64))
    _, sigma = linear_sum_assignment(c)
    return torch.from_numpy(sigma.astype(np.int64))


def sinkhorn_pairing(x0: torch.Tensor, x1: torch.Tensor, seed: int | torch.Generator,
                     reg: float = 0.05) -> torch.Tensor:
    """Pair each x0_i with x1_j, j ~ P_i. / sum_j P_ij, P the entropic OT plan.

    P = argmin_{P in U(1/B, 1/B)} <P, C / mean(C)> - reg H(P),  C_ij = ||x0_i - x1_j||^2.

    Parameters
    ----------
    x0, x1 : torch.Tensor, shape (B, d)
    seed : int or torch.Generator
        Randomness of the draw.
    reg : float
        Entropic regularisation relative to the mean cost.

    Returns
    -------
    torch.Tensor of int64, shape (B,)
        Index j(i) into x1 for every source point.
    """
    reg = check_positive("reg", reg)
    g = as_generator(seed)
    c = squared_distances(x0, x1)
    c = c / max(c.mean(), 1e-12)
    b0, b1 = c.shape
    a, b = np.full(b0, 1.0 / b0), np.full(b1, 1.0 / b1)
    import ot  # POT loads scikit-learn and scipy.stats (seconds): only where it solves

    plan = ot.sinkhorn(a, b, c, reg, method="sinkhorn", numItermax=1000, stopThr=1e-4, warn=False)
    if not np.isfinite(plan).all() or (plan.sum(1) <= 0).any():
        plan = ot.sinkhorn(a, b, c, reg, method="sinkhorn_log", numItermax=1000, stopThr=1e-4,
                           warn=False)
    p = torch.from_numpy(np.asarray(plan)).clamp_min(0)  # CPU: the draw uses a CPU generator
    if not torch.isfinite(p).all() or (p.sum(1) <= 0).any():
        raise FlowsError(f"reg={reg!r} gave a degenerate Sinkhorn plan; use a larger reg")
    return torch.multinomial(p, 1, generator=g).squeeze(1)


def _independent(x0, x1, seed, reg, ot_solver, warm):
    return x0, x1


def _ot(x0, x1, seed, reg, ot_solver, warm):
    return x0, x1[ot_permutation(x0, x1, ot_solver, warm).to(x1.device)]


def _sinkhorn(x0, x1, seed, reg, ot_solver, warm):
    return x0, x1[sinkhorn_pairing(x0, x1, seed, reg).to(x1.device)]


# the couplings by name: f(x0, x1, seed, reg, ot_solver, warm) -> (x0, x1 paired)
COUPLINGS = Registry("coupling")
COUPLINGS.add("independent", _independent)
COUPLINGS.add("ot", _ot)
COUPLINGS.add("sinkhorn", _sinkhorn)


def couple(name: str, x0: torch.Tensor, x1: torch.Tensor,
           seed: int | torch.Generator | None = None, reg: float = 0.05,
           ot_solver: str = "auto", warm: PriceMap | None = None
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply a coupling by name; returns the paired (x0, x1), each of shape (B, d).

    ``seed`` is needed by "sinkhorn" only, ``ot_solver`` and ``warm`` (see
    :func:`ot_permutation`) by "ot" only.

    Examples
    --------
    >>> x = torch.tensor([[0.0], [1.0]])
    >>> couple("ot", x, x.flip(0))[1].tolist()
    [[0.0], [1.0]]
    """
    return COUPLINGS.get(name)(x0, x1, seed, reg, ot_solver, warm)


def couple_within_classes(name: str, x0: torch.Tensor, x1: torch.Tensor, labels: torch.Tensor,
                          seed: int | torch.Generator | None = None, reg: float = 0.05,
                          ot_solver: str = "auto"
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Couple source points with labelled target points class by class.

    The target points (and their labels) are ordered by class (a stable sort; the x1_i are
    i.i.d., so their order carries nothing), and each run of equal labels is coupled with the
    source points at the same positions: OT pairs within classes. Returns (x0, x1, labels),
    shapes (B, d), (B, d), (B,).

    Examples
    --------
    >>> x0 = torch.tensor([[0.0], [1.0], [2.0], [3.0]])
    >>> x1 = torch.tensor([[3.0], [0.0], [2.0], [1.0]])
    >>> _, y, c = couple_within_classes("ot", x0, x1, torch.tensor([1, 0, 1, 0]))
    >>> y.squeeze(1).tolist(), c.tolist()
    ([0.0, 1.0, 2.0, 3.0], [0, 0, 1, 1])
    """
    fn = COUPLINGS.get(name)
    if labels.shape != (x1.shape[0],):
        raise FlowsError(f"labels have shape {tuple(labels.shape)}; one label per target point "
                         f"({x1.shape[0]},) is required")
    order = torch.sort(labels.cpu(), stable=True).indices
    labels = labels.cpu()[order]
    x1 = x1[order.to(x1.device)]
    if name == "independent":
        return x0, x1, labels
    bounds = torch.unique_consecutive(labels, return_counts=True)[1].cumsum(0).tolist()
    parts, start = [], 0
    for end in bounds:
        parts.append(fn(x0[start:end], x1[start:end], seed, reg, ot_solver, None)[1])
        start = end
    return x0, torch.cat(parts), labels
