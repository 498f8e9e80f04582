"""Pointwise interaction energies ``F(r) = sum_i h(r_i)``: the diagonal of the Hessian.

The derivative of ``h`` is expanded on the inverse rate function and powers of the rate in its
unit interval ``x = (r - r_lo) / w`` (``(r_lo, r_lo + w)`` the open range of ``phi``):

.. math:: h'(r) = c_0\\, \\phi^{-1}(r) + \\sum_{j=1}^{d} c_j x^j, \\qquad
          h(r) = c_0\\, G(r) + w \\sum_{j=1}^{d} \\frac{c_j}{j+1} x^{j+1}, \\qquad
          h''(r) = \\frac{c_0}{\\phi'(\\phi^{-1}(r))} + \\sum_{j=1}^{d} \\frac{j c_j}{w} x^{j-1}

with ``G(r) = int_0^r phi^{-1}`` the leak integral, so value, gradient and Hessian are closed
forms. Why this basis: the Hessian a network needs for normal attraction at rate ``kappa`` on its
manifold has the diagonal part ``(kappa - 1) D^{-1}``, ``D = diag(phi'(u*))``, which is
``h''(r*_i)`` for ``h' = (kappa - 1) phi^{-1}`` (see :mod:`neurodyn.energies.seal`). The
polynomial terms let a fit find it (or fail to) on its own; ``inverse=False`` removes the
first basis function, which the capacity experiments use. A term ``c r`` (``j = 0``) would
duplicate the uniform input ``b`` and is left out.
"""

from __future__ import annotations

import torch
from torch import nn

from _runkit import BadInput, BadType

from ..activation import Activation, Logistic, Tanh, make_activation
from ..geometry.populations import Geometry
from .base import InteractionEnergy, _flat

__all__ = ["PointwiseEnergy", "rate_range"]


def rate_range(activation: Activation) -> tuple[float, float]:
    """The open range ``(r_lo, r_hi)`` of the rate function."""
    if isinstance(activation, Logistic):
        return 0.0, float(activation.rmax)
    if isinstance(activation, Tanh):
        return -1.0, 1.0
    raise BadType(f"activation: no known rate range for {type(activation).__name__}; "
                  "use Logistic or Tanh", param="activation")


class PointwiseEnergy(InteractionEnergy):
    """``F(r) = sum_i h(r_i)`` with ``h'`` on the basis ``phi^{-1}(r), x, ..., x^d``.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    activation : Activation
        The network's rate function ``phi`` (its inverse and leak integral are used).
    degree : int
        ``d``, number of polynomial terms (0: only the inverse-rate term).
    inverse : bool
        Include the ``phi^{-1}`` basis function.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> from neurodyn.activation import Logistic
    >>> e = PointwiseEnergy(Ring(16), Logistic(), degree=2)
    >>> with torch.no_grad():
    ...     _ = e.coef.copy_(torch.tensor([0.5, 0.1, -0.2], dtype=torch.float64))
    >>> r = torch.full((16,), 0.3, dtype=torch.float64)
    >>> bool(torch.allclose(e.grad(r), InteractionEnergy.grad(e, r)))
    True
    """

    family = "pointwise"

    def __init__(self, geometry: Geometry, activation: Activation, degree: int = 3,
                 inverse: bool = True):
        super().__init__(geometry)
        if isinstance(degree, bool) or not isinstance(degree, int) or not 0 <= degree <= 12:
            raise BadInput(f"degree={degree!r}: must be an integer in [0, 12]", param="degree")
        if not inverse and degree == 0:
            raise BadInput("degree=0 with inverse=False: the family would be empty", param="degree")
        self.activation, self.degree, self.inverse = activation, degree, bool(inverse)
        self.lo, hi = rate_range(activation)
        self.width = hi - self.lo
        self.coef = nn.Parameter(torch.zeros(degree + 1, dtype=torch.float64))
        mask = torch.ones(degree + 1, dtype=torch.float64)
        mask[0] = float(self.inverse)
        self.register_buffer("mask", mask, persistent=False)

    # ------------------------------------------------------------------ helpers
    def _potential(self, r: torch.Tensor) -> torch.Tensor:
        """``phi^{-1}(r)``, with ``r`` kept strictly inside the open range."""
        tiny = torch.finfo(r.dtype).eps * self.width
        x = r.clamp(self.lo + tiny, self.lo + self.width - tiny)
        return self.activation.inverse(x)

    def _c(self, dtype) -> torch.Tensor:
        return (self.coef * self.mask).to(dtype)

    def _powers(self, x: torch.Tensor, start: int) -> torch.Tensor:
        """``x^j`` for ``j = start .. start + degree - 1`` on a last axis."""
        j = torch.arange(start, start + self.degree, dtype=x.dtype, device=x.device)
        return x.unsqueeze(-1) ** j

    def derivative(self, r: torch.Tensor) -> torch.Tensor:
        """``h'(r)``, elementwise, same shape as ``r``."""
        c = self._c(r.dtype)
        out = c[0] * self._potential(r) if self.inverse else torch.zeros_like(r)
        if self.degree:
            x = (r - self.lo) / self.width
            out = out + (self._powers(x, 1) * c[1:]).sum(-1)
        return out

    def curvature(self, r: torch.Tensor) -> torch.Tensor:
        """``h''(r)``, elementwise, same shape as ``r``."""
        c = self._c(r.dtype)
        out = torch.zeros_like(r)
        if self.inverse:
            out = out + c[0] / self.activation.derivative(self._potential(r))
        if self.degree:
            x = (r - self.lo) / self.width
            j = torch.arange(1, self.degree + 1, dtype=r.dtype, device=r.device)
            out = out + (self._powers(x, 0) * (j * c[1:])).sum(-1) / self.width
        return out

    # ------------------------------------------------------------------ interface
    def forward(self, r):
        c = self._c(r.dtype)
        val = torch.zeros_like(r)
        if self.inverse:
            val = val + c[0] * self.activation.integral(self._potential(r))
        if self.degree:
            x = (r - self.lo) / self.width
            j = torch.arange(1, self.degree + 1, dtype=r.dtype, device=r.device)
            val = val + self.width * (self._powers(x, 2) * (c[1:] / (j + 1))).sum(-1)
        return _flat(val, self.geometry).sum(-1)

    def grad(self, r):
        return self.derivative(r)

    def hvp(self, r, v):
        return self.curvature(r) * v

    def config(self):
        return {"family": self.family, "activation": self.activation.config(),
                "degree": self.degree, "inverse": self.inverse}

    @classmethod
    def from_config(cls, config: dict, geometry: Geometry) -> PointwiseEnergy:
        """Rebuild from :meth:`config` (without the ``family`` key)."""
        config = dict(config)
        act = make_activation(config.pop("activation", None))
        return cls(geometry, act, **config)
