"""Riemannian conditional flow matching on the flat torus ``T^k`` (the circle for ``k = 1``).

Source: the uniform distribution on ``T^k``. Path: the geodesic ``x_t = exp(x0, t log(x0, x1))``
between a source point and a data point, whose velocity is the constant ``u = log(x0, x1)``
(:mod:`.torus`). The field is a two-layer ReLU network of periodic features,

.. math:: v(x, t) = A\\, \\mathrm{relu}(W f(x, t) + b) + c, \\qquad
          f(x, t) = (\\cos j x_a, \\sin j x_a)_{a \\le k,\\, j \\le J} \\oplus (t, 1),

so ``v`` is a well-defined tangent field on the torus. Training minimises
``E ||v(x_t, t) - u||^2`` with ``t`` uniform; with ``coupling="ot"`` each minibatch pairs source
and data points by the exact assignment under the squared geodesic distance (POT), which makes
the learned paths nearly straight, so few solver steps suffice. Sampling integrates
``dx/dt = v(x, t)`` in the covering space with :func:`flows.integrate` (torchdiffeq) and wraps
the end point: on a flat torus the exponential map is addition, so this is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from _runkit.results import Result
from _runkit.seeds import derive_seed

from ..errors import FlowsError, as_generator, check_choice, check_positive_int
from .torus import TWO_PI, exp_map, log_map, wrap

__all__ = ["PeriodicField", "TorusFlow", "train_torus_flow", "sample_torus_flow"]


class PeriodicField(nn.Module):
    """A tangent field on ``T^k``: a two-layer ReLU network of ``J`` harmonics per angle.

    Parameters
    ----------
    dim : int
        ``k``, angles per point.
    width : int
        Hidden units ``m``.
    harmonics : int
        ``J``, harmonics of each angle among the features.
    seed : int
        Draws the initial weights (a private generator; the global RNG is untouched).
    """

    def __init__(self, dim: int, width: int = 256, harmonics: int = 3, seed: int = 0) -> None:
        super().__init__()
        self.dim = check_positive_int("dim", dim)
        self.harmonics = check_positive_int("harmonics", harmonics)
        m = check_positive_int("width", width)
        feats = 2 * self.dim * self.harmonics + 2
        g = as_generator(seed)
        self.W = nn.Parameter(torch.randn(m, feats, generator=g) / math.sqrt(feats))
        self.b = nn.Parameter(torch.zeros(m))
        self.A = nn.Parameter(torch.randn(dim, m, generator=g) / math.sqrt(m))
        self.c = nn.Parameter(torch.zeros(dim))

    def features(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``f(x, t)``, shape ``(N, 2 k J + 2)`` for ``x`` of shape ``(N, k)``."""
        j = torch.arange(1, self.harmonics + 1, dtype=x.dtype, device=x.device)
        ang = (x[:, :, None] * j).reshape(x.shape[0], -1)
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device).reshape(-1, 1).expand(len(x), 1)
        return torch.cat([ang.cos(), ang.sin(), t, torch.ones_like(t)], dim=1)

    def forward(self, x: torch.Tensor, t) -> torch.Tensor:
        """``v(x, t)``, shape ``(N, k)``."""
        h = torch.relu(self.features(x, t) @ self.W.T + self.b)
        return h @ self.A.T + self.c


@dataclass(frozen=True)
class TorusFlow(Result):
    """A trained flow on the torus.

    Attributes
    ----------
    field : PeriodicField
    losses : numpy.ndarray, shape (steps,)
    coupling : str
        ``"independent"`` or ``"ot"``.
    """

    field: PeriodicField
    losses: np.ndarray
    coupling: str

    def __repr__(self) -> str:
        return (f"TorusFlow(dim={self.field.dim}, coupling={self.coupling!r}, "
                f"steps={len(self.losses)}, final_loss={float(self.losses[-1]):.4g})")


def _paired(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """``x1`` reordered by the exact assignment to ``x0`` under the squared geodesic cost (the
    library's compiled auction when numba is installed, else scipy's)."""
    from ..assignment.auction import auction_assignment, available

    cost = (log_map(x0[:, None, :], x1[None, :, :]) ** 2).sum(-1).double().numpy()
    if available():
        sigma = auction_assignment(cost)
    else:
        from scipy.optimize import linear_sum_assignment

        sigma = linear_sum_assignment(cost)[1]
    return x1[torch.from_numpy(np.asarray(sigma, dtype=np.int64))]


def _check_angles(x, name: str = "angles") -> torch.Tensor:
    x = torch.as_tensor(x)
    if x.is_complex() or not x.is_floating_point():
        raise FlowsError(f"{name}: real angles are required, got dtype {x.dtype}")
    x = x[:, None] if x.ndim == 1 else x
    if x.ndim != 2 or len(x) < 2 or not torch.isfinite(x).all():
        raise FlowsError(f"{name}: a finite (n, k) tensor of at least 2 rows is required, got "
                         f"shape {tuple(x.shape)}")
    return wrap(x.float())


def train_torus_flow(angles, steps: int = 2000, batch: int = 256, width: int = 256,
                     harmonics: int = 3, lr: float = 3e-3, coupling: str = "ot",
                     seed: int = 0) -> TorusFlow:
    """Fit a :class:`PeriodicField` to data on the torus by Riemannian flow matching.

    Parameters
    ----------
    angles : array_like, shape (n,) or (n, k)
        Training points (radians; wrapped).
    steps, batch, width, harmonics, lr : int / float
        Adam steps, minibatch size, hidden units, harmonics per angle, learning rate.
    coupling : ``"ot"`` or ``"independent"``
        Minibatch pairing of source and data points.
    seed : int
        Seeds the weights, the minibatches and the source draws.

    Returns
    -------
    TorusFlow
    """
    data = _check_angles(angles)
    check_choice("coupling", coupling, ("ot", "independent"))
    steps, batch = check_positive_int("steps", steps), check_positive_int("batch", batch)
    field = PeriodicField(data.shape[1], width, harmonics, seed=derive_seed(seed, "init"))
    opt = torch.optim.Adam(field.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    g = as_generator(derive_seed(seed, "batches"))
    losses = np.empty(steps)
    for step in range(steps):
        x1 = data[torch.randint(len(data), (batch,), generator=g)]
        x0 = TWO_PI * torch.rand(batch, data.shape[1], generator=g)
        if coupling == "ot":
            x1 = _paired(x0, x1)
        t = torch.rand(batch, 1, generator=g)
        u = log_map(x0, x1)
        loss = ((field(exp_map(x0, t * u), t) - u) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses[step] = float(loss.detach())
    return TorusFlow(field, losses, coupling)


def sample_torus_flow(flow: TorusFlow, n: int, steps: int = 5, method: str = "midpoint",
                      seed: int = 0) -> tuple[torch.Tensor, int]:
    """Draw ``n`` points: uniform source points carried by the flow from t = 0 to t = 1.

    Returns the wrapped points ``(n, k)`` and the number of field evaluations used.
    """
    from ..sampling.ode import integrate

    n = check_positive_int("n", n)
    g = as_generator(derive_seed(seed, "source"))
    x0 = TWO_PI * torch.rand(n, flow.field.dim, generator=g)
    res = integrate(flow.field, x0, method=method, steps=steps)
    return wrap(res.x), res.nfe
