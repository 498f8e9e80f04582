"""Diagnostics of the over-parameterized (theory) regime: the kernel, its rates, the drift.

- Kernel at initialisation (inputs on the unit sphere, W rows ~ N(0, I)):
  H_ij = z_i . z_j (pi - arccos(z_i . z_j)) / (2 pi),  lambda_0 = lambda_min(H).
  It is the expected Gram matrix E_w[z_i . z_j 1{w.z_i > 0} 1{w.z_j > 0}] of the first layer.
- Linear convergence of full-batch gradient descent: log L_t ~ a + b t (b < 0), fitted by
  least squares with its R^2, and the slowest kernel mode's rate 4 lr lambda_0 / N
  (:func:`guaranteed_log_rate`); the whole curve against the kernel's prediction is in
  :mod:`flows.theory.ntk`.
- Relative weight drift ||W_t - W_0||_F / ||W_0||_F, expected to shrink like m^{-1/2}.

The theory-regime runs that measure them, and their sweeps over width and n, are in
:mod:`flows.theory.regime`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from _runkit import Result

from ..errors import FlowsError, check_positive_int

__all__ = ["guaranteed_log_rate", "kernel_h", "lambda_0", "log_loss_slope", "weight_drift"]


def kernel_h(z: torch.Tensor) -> torch.Tensor:
    """H_ij = z_i.z_j (pi - angle(z_i, z_j)) / (2 pi) on the normalised rows of z.

    Parameters
    ----------
    z : torch.Tensor, shape (N, p)
        Inputs; rows are normalised to unit length first.

    Returns
    -------
    torch.Tensor, float64, shape (N, N)

    Examples
    --------
    >>> kernel_h(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))[0].tolist()
    [0.5, 0.0]
    """
    if z.ndim != 2 or z.shape[0] == 0:
        raise FlowsError(f"z has shape {tuple(z.shape)}; a non-empty (N, p) tensor is required")
    u = z.double() / z.double().norm(dim=1, keepdim=True)
    g = (u @ u.T).clamp_(-1.0, 1.0)
    return g * (math.pi - torch.arccos(g)) / (2 * math.pi)


def lambda_0(z: torch.Tensor) -> float:
    """Smallest eigenvalue of :func:`kernel_h` (z of shape (N, p))."""
    return float(torch.linalg.eigvalsh(kernel_h(z))[0])


@dataclass(frozen=True)
class LogLinearFit(Result):
    """Least-squares fit log y = intercept + slope * x, with its coefficient of determination."""

    slope: float
    intercept: float
    r2: float


def log_loss_slope(losses: torch.Tensor | np.ndarray, start: int = 0) -> LogLinearFit:
    """Fit log L_t = a + b t over steps t >= ``start``; b < 0 is the linear rate.

    losses of shape (T,), all > 0.
    """
    y = np.log(np.asarray(losses, dtype=np.float64)[start:])
    if y.size < 2 or not np.isfinite(y).all():
        raise FlowsError("losses must hold at least 2 positive finite values after start")
    return _fit(np.arange(start, start + y.size, dtype=np.float64), y)


def loglog_slope(x: np.ndarray | list, y: np.ndarray | list) -> LogLinearFit:
    """Fit log y = a + b log x (x, y positive, same length)."""
    return _fit(np.log(np.asarray(x, dtype=np.float64)), np.log(np.asarray(y, dtype=np.float64)))


def _fit(x: np.ndarray, y: np.ndarray) -> LogLinearFit:
    b, a = np.polyfit(x, y, 1)
    ss = ((y - y.mean()) ** 2).sum()
    r2 = 1.0 - ((y - (a + b * x)) ** 2).sum() / ss if ss > 0 else 1.0
    return LogLinearFit(float(b), float(a), float(r2))


def guaranteed_log_rate(lambda0: float, lr: float, n_points: int) -> float:
    """Decay rate of log L of the slowest kernel mode: 4 lr lambda_0 / N (per step).

    With L = (1/N) sum_i ||v(z_i) - u_i||^2 and A = +-1, each output's residual follows
    r_{t+1} = (I - 2 lr H / N) r_t as m -> infinity, so L_t <= L_0 (1 - 2 lr lambda_0 / N)^{2t}
    ~ L_0 exp(-rate t). It is a bound only in that limit and far weaker than the early decay of
    the faster modes; the check that can fail compares the whole curve with the kernel's
    prediction (:func:`flows.theory.ntk.ntk_comparison`).
    """
    check_positive_int("n_points", n_points)
    return 4.0 * lr * lambda0 / n_points


def weight_drift(w: torch.Tensor, w0: torch.Tensor) -> float:
    """Relative drift ||W - W0||_F / ||W0||_F (shapes (m, p))."""
    return float((w.detach() - w0.detach()).norm() / w0.detach().norm())
