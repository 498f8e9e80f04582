"""Closed-form marginal velocities of the linear path from a N(0, I) source.

For x_t = (1 - t) x0 + t x1, x0 ~ N(0, I), the velocity that transports the marginals exactly is
u*(x, t) = E[x1 - x0 | x_t = x] = (E[x1 | x_t = x] - x) / (1 - t).

- Gaussian target N(mu, s^2 I): x_t ~ N(t mu, ((1-t)^2 + t^2 s^2) I) and
  u*(x, t) = mu + (t s^2 - (1 - t)) / ((1 - t)^2 + t^2 s^2) (x - t mu).
- Empirical target (1/n) sum_j delta_{y_j}: E[x1 | x_t = x] = sum_j w_j y_j with
  w = softmax_j(-||x - t y_j||^2 / (2 (1 - t)^2)). Its flow ends on the data points: it memorizes
  exactly, which makes it the memorizing reference of
  :func:`flows.evaluation.distances.memorization`.
"""

from __future__ import annotations

import torch


def gaussian_optimal_velocity(x: torch.Tensor, t: torch.Tensor | float, mean: torch.Tensor,
                              std: float) -> torch.Tensor:
    """u*(x, t) for N(0, I) -> N(mean, std^2 I) along the linear path.

    Parameters
    ----------
    x : torch.Tensor, shape (N, d)
    t : float or torch.Tensor, shape () or (N, 1)
    mean : torch.Tensor, shape (d,)
    std : float

    Returns
    -------
    torch.Tensor, shape (N, d)
    """
    t = torch.as_tensor(t, dtype=x.dtype)
    var = (1 - t) ** 2 + t**2 * std**2
    return mean + (t * std**2 - (1 - t)) / var * (x - t * mean)


class EmpiricalOptimalField:
    """Exact marginal velocity towards the empirical distribution of ``data``.

    u*(x, t) = (sum_j w_j(x, t) y_j - x) / (1 - t),  w = softmax_j(-||x - t y_j||^2 / (2 (1-t)^2)).

    Parameters
    ----------
    data : torch.Tensor, shape (n, d)
        The training points y_j.
    t_max : float
        t is clipped to t_max < 1 (the field is singular at t = 1).
    chunk : int
        Rows of x processed at once (memory is chunk x n).
    """

    def __init__(self, data: torch.Tensor, t_max: float = 1 - 1e-4, chunk: int = 1024) -> None:
        self.data = data
        self.t_max = t_max
        self.chunk = chunk
        self._sq = data.square().sum(1)

    def __call__(self, x: torch.Tensor, t: torch.Tensor | float) -> torch.Tensor:
        """u*(x, t), x of shape (N, d) and scalar t; returns (N, d)."""
        t = min(float(t), self.t_max)
        out = torch.empty_like(x)
        for i in range(0, x.shape[0], self.chunk):
            xc = x[i:i + self.chunk]
            d2 = xc.square().sum(1)[:, None] - 2 * t * xc @ self.data.T + t * t * self._sq[None]
            w = torch.softmax(-d2 / (2 * (1 - t) ** 2), dim=1)
            out[i:i + self.chunk] = (w @ self.data - xc) / (1 - t)
        return out
