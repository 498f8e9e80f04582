"""The flat torus ``T^k = [0, 2 pi)^k`` (the circle for ``k = 1``): maps, geodesics, distances.

On a flat torus the exponential map is addition modulo ``2 pi`` and the logarithm the wrapped
difference, so the geodesic from ``x0`` to ``x1`` is ``x_t = exp(x0, t log(x0, x1))`` and its
velocity the constant ``log(x0, x1)`` (the shortest of the differences, each coordinate in
``[-pi, pi)``). The intrinsic (geodesic) W2 between two samples is the exact optimal assignment
under the squared wrapped distance, solved by POT.

Examples
--------
>>> import torch
>>> x0, x1 = torch.tensor([[0.1]]), torch.tensor([[6.2]])
>>> round(float(log_map(x0, x1)), 4)  # the short way round, through 0
-0.1832
>>> float(geodesic(x0, x1, 1.0)[0, 0]) == float(x1[0, 0])
True
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..errors import FlowsError, as_generator

TWO_PI = 2.0 * math.pi

__all__ = ["wrap", "log_map", "exp_map", "geodesic", "intrinsic_w2", "intrinsic_floor"]


def wrap(x: torch.Tensor) -> torch.Tensor:
    """Angles reduced to ``[0, 2 pi)``, any shape."""
    return torch.remainder(x, TWO_PI)


def log_map(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """The tangent vector at ``x0`` pointing along the shortest geodesic to ``x1``:
    the wrapped difference, each coordinate in ``[-pi, pi)``; shape of the inputs."""
    return torch.remainder(x1 - x0 + math.pi, TWO_PI) - math.pi


def exp_map(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The point reached from ``x`` along the tangent vector ``v`` (``wrap(x + v)``)."""
    return wrap(x + v)


def geodesic(x0: torch.Tensor, x1: torch.Tensor, t) -> torch.Tensor:
    """The point at time ``t`` of the constant-speed geodesic from ``x0`` (t = 0) to ``x1``
    (t = 1); ``t`` a number or a tensor broadcasting against ``(N, 1)``."""
    return exp_map(x0, t * log_map(x0, x1))


def _as_angles(x, name: str) -> np.ndarray:
    a = np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x)
    if np.iscomplexobj(a) or a.dtype.kind not in "fiu":
        raise FlowsError(f"{name}: real angles are required, got dtype {a.dtype}")
    a = a.astype(np.float64)
    a = a[:, None] if a.ndim == 1 else a
    if a.ndim != 2 or a.shape[0] < 1 or not np.isfinite(a).all():
        raise FlowsError(f"{name}: a finite (n,) or (n, k) array of angles is required, got "
                         f"shape {a.shape}")
    return a


def intrinsic_w2(a, b) -> float:
    """W2 between two equally weighted samples of the torus under the geodesic distance
    ``d(x, y) = ||log(x, y)||`` (exact: POT's network simplex on the squared distances).

    Parameters
    ----------
    a, b : array_like, shape (n,) / (m,) or (n, k) / (m, k)
        Angles in radians (any real values; they are wrapped).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> grid = 2 * np.pi * np.arange(64) / 64
    >>> round(intrinsic_w2(grid, grid + 0.03), 12)  # a rotation by less than the spacing
    0.03
    """
    import ot

    x, y = _as_angles(a, "a"), _as_angles(b, "b")
    if x.shape[1] != y.shape[1]:
        raise FlowsError(f"a has {x.shape[1]} angle(s) per point and b {y.shape[1]}")
    d = np.remainder(x[:, None, :] - y[None, :, :] + math.pi, TWO_PI) - math.pi
    cost = (d ** 2).sum(-1)
    wa, wb = np.full(len(x), 1.0 / len(x)), np.full(len(y), 1.0 / len(y))
    return float(math.sqrt(max(ot.emd2(wa, wb, cost, numItermax=10_000_000), 0.0)))


def intrinsic_floor(sample, n: int, pairs: int = 5, seed: int = 0) -> tuple[float, float]:
    """The i.i.d. floor of :func:`intrinsic_w2` at sample size ``n``: mean and standard
    deviation of the W2 between two disjoint random subsets of ``sample`` of ``n`` points each,
    over ``pairs`` draws. ``sample`` needs at least ``2 n`` rows."""
    x = _as_angles(sample, "sample")
    if len(x) < 2 * n:
        raise FlowsError(f"sample has {len(x)} points; the floor at n={n} needs {2 * n}")
    g = as_generator(seed)
    vals = []
    for _ in range(pairs):
        idx = torch.randperm(len(x), generator=g).numpy()
        vals.append(intrinsic_w2(x[idx[:n]], x[idx[n:2 * n]]))
    return float(np.mean(vals)), float(np.std(vals))
