"""SEAL's spectral family on the Fourier amplitudes ``|z_k|``: the variable in which the target
energy is linear.

Why amplitudes: the exact solution of the SEAL targets (see :mod:`neurodyn.energies.seal`, step
4) is ``F = (kappa - 1) sum_i G(r_i) - kappa max_psi <r, u*(psi)> + b sum_i r_i``, whose field is
``-kappa (u - u*(psi_hat))`` everywhere, not only near ``M``. The overlap ``<r, u*(psi)>`` of a
bump ``u* = a + c p`` is a sum over the bump's own modes; on states whose mode phases agree
(a ring, or a torus whose triad phase is locked) its maximum is ``N sum_k m_k |u*_k| |z_k|``:
linear in ``|z_k| = sqrt(p_k)``. A function of the power ``p_k`` must then grow like
``sqrt(p_k)``, with a slope ``~ p^{-1/2}`` that no saturating polynomial in ``p`` follows once a
bump shrinks (the rates of the default hex bump lowered to 45% of its height keep 7% of the
power of the fundamental modes and 16% of that of the mean; the ``|z_k|^2`` family missed the
restoring field there by 49%). In the amplitude the same solution is the first term alone.

.. math:: F(r) = -N \\sum_k m_k s_k \\Phi_k(a_k), \\qquad
          a_k = \\sqrt{p_k / s_k + \\varepsilon}, \\qquad
          \\Phi_k'(a) = c_{k,1} + \\sum_{d=2}^{D} c_{k,d} (a - a^*_k)^{d-1}

so ``f_k(p) = s_k Phi_k(a)``, ``f'_k = Phi'_k(a) / (2 a)`` and
``f''_k = (a Phi''_k(a) - Phi'_k(a)) / (4 s_k a^3)``. The small ``eps`` rounds the cone of
``|z|`` at ``z = 0`` (where ``f'`` would diverge), so the energy stays smooth; it changes the
amplitude of a mode at its typical power (``p = s``) by ``eps / 2`` relative. The gradient is
the spectral filter ``-2 idft(f'_k z_k)`` (two FFTs), the Hessian-vector product a closed form.
"""

from __future__ import annotations

import math

import torch

from _runkit import BadInput

from ..geometry.populations import Geometry
from .banded import BandedSpectralEnergy

__all__ = ["AmplitudeFourierEnergy"]


class AmplitudeFourierEnergy(BandedSpectralEnergy):
    """Per-mode polynomials in the Fourier amplitude ``sqrt(p_k / s_k + eps)``, anchored.

    Invariant under every continuous spectral rotation (it depends on ``|z_k|`` only). Only
    modes with ``max_a |k_a| <= bandwidth`` interact. :meth:`anchor` imposes the slope
    ``f'_k(p*_k)`` exactly; the other coefficients measure the curvature around the anchor.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    bandwidth : int
        Highest wave number (per axis) of an interacting mode.
    degree : int
        Number ``D`` of polynomial terms per mode.
    scale : torch.Tensor or None, shape (*spectral_shape)
        ``s_k``, positive tensor of shape ``spectral_shape`` (typical power of each mode).
    eps : float
        The rounding of the amplitude at zero power, relative to ``s_k``.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> g = Ring(16)
    >>> e = AmplitudeFourierEnergy(g, bandwidth=3, degree=2)
    >>> with torch.no_grad():
    ...     _ = e.coef.normal_(0, 1, generator=torch.Generator().manual_seed(0))
    >>> r = 0.1 + 0.8 * torch.rand(16, dtype=torch.float64)
    >>> from neurodyn.energies.base import InteractionEnergy
    >>> bool(torch.allclose(e.grad(r), InteractionEnergy.grad(e, r)))
    True
    """

    family = "amplitude"

    def __init__(self, geometry: Geometry, bandwidth: int = 4, degree: int = 3,
                 scale: torch.Tensor | None = None, eps: float = 1e-3):
        if not (math.isfinite(eps) and eps > 0):
            raise BadInput(f"eps={eps!r}: must be a finite number > 0", param="eps")
        super().__init__(geometry, bandwidth, degree, scale, min_bandwidth=0)
        self.eps = float(eps)

    def effective_coef(self) -> torch.Tensor:
        """The coefficients in use, shape ``(*spectral_shape, degree)``; with an anchor the first
        is ``c_{k,1} = 2 a*_k slope_k`` (the other terms vanish at the anchor)."""
        if not bool(self.anchored):
            return self.coef
        first = 2 * torch.sqrt(self.anchor_x + self.eps) * self.anchor_slope
        return torch.cat([first.unsqueeze(-1), self.coef[..., 1:]], dim=-1)

    # ---------------------------------------------------------------- per-mode functions
    def _band_functions(self, pb: torch.Tensor, order: tuple[int, ...]) -> list[torch.Tensor]:
        """``f``, ``f'`` and/or ``f''`` (``order`` in 0, 1, 2) on band powers ``pb (..., M)``."""
        coef = self._band(self.effective_coef().movedim(-1, 0)).T.to(pb.dtype)  # (M, D)
        s = self._band(self.scale).to(pb.dtype)
        a_star = torch.sqrt(self._band(self.anchor_x).to(pb.dtype) + self.eps)
        a = torch.sqrt(pb / s + self.eps)
        y = a - a_star
        d = torch.arange(1, self.degree + 1, dtype=pb.dtype, device=pb.device)
        ypow = y.unsqueeze(-1) ** (d - 1)  # y^(d-1), d = 1..D
        h = (coef * ypow).sum(-1)  # Phi'(a)
        out = []
        for o in order:
            if o == 0:
                out.append(s * (coef / d * ypow * y.unsqueeze(-1)).sum(-1))
            elif o == 1:
                out.append(h / (2 * a))
            else:
                dh = (coef[:, 1:] * (d[1:] - 1) * ypow[..., :-1]).sum(-1)  # Phi''(a)
                out.append((a * dh - h) / (4 * s * a**3))
        return out

    def config(self):
        return {"family": self.family, "bandwidth": self.bandwidth, "degree": self.degree,
                "eps": self.eps}
