"""SEAL's spectral family: per-mode functions of the power spectrum ``|z_k|^2``."""

from __future__ import annotations

import math

import torch
from torch import nn

from _runkit import BadInput, check_int

from ..geometry.populations import Geometry
from .banded import BandedSpectralEnergy
from .base import InteractionEnergy

__all__ = ["LearnedFourierEnergy"]


class LearnedFourierEnergy(BandedSpectralEnergy):
    """SEAL's learned Fourier energy, invariant under every continuous spectral rotation.

    .. math:: F(r) = -N \\sum_k m_k f_k(|z_k|^2) - N h(x), \\qquad
              f'_k(p) = g'(x) \\Big[c_{k,1} + \\sum_{d=2}^{D}
              \\frac{c_{k,d}}{\\gamma_k} \\Big(\\frac{g(x) - g(x^*_k)}{\\gamma_k}\\Big)^{d-1}\\Big],
              \\qquad g(x) = \\frac{x}{1 + x}, \\quad x = p / s_k, \\quad \\gamma_k = g'(x^*_k)

    with ``x_k = |z_k|^2 / s_k`` on the learned modes, ``x*_k`` the anchor (the target power, see
    :meth:`anchor`), around which the coefficients measure slope and curvature directly, and
    ``h`` an optional cross-mode network. The saturating ``g`` keeps every mode's interaction
    bounded (``f'_k -> 0`` at large power), so no mode can run away. Only modes with
    ``max_a |k_a| <= bandwidth`` interact. The gradient is a spectral filter,

    .. math:: \\nabla F = -2\\, \\mathrm{idft}\\big((f'_k(|z_k|^2) + g_k/m_k)\\, z_k\\big),
              \\qquad g_k = \\partial h / \\partial |z_k|^2,

    so one evaluation costs two FFTs.

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
    cross_hidden : int
        Width of the cross-mode network (0: none).
    seed : int
        Initialises the cross-mode network.
    """

    family = "learned"

    def __init__(
        self,
        geometry: Geometry,
        bandwidth: int = 4,
        degree: int = 3,
        scale: torch.Tensor | None = None,
        cross_hidden: int = 0,
        seed: int = 0,
    ):
        if cross_hidden < 0:
            raise BadInput(f"cross_hidden={cross_hidden}: must be >= 0", param="cross_hidden")
        super().__init__(geometry, bandwidth, degree, scale, min_bandwidth=1)
        self.cross_hidden, self.seed = cross_hidden, seed
        self.cross = None
        if cross_hidden:
            n_in = int(self.mask.sum())
            gen = torch.Generator().manual_seed(check_int("seed", seed))
            self.cross = nn.Sequential(
                nn.Linear(n_in, cross_hidden, dtype=torch.float64),
                nn.Softplus(),
                nn.Linear(cross_hidden, 1, dtype=torch.float64),
            )
            with torch.no_grad():
                for layer in (self.cross[0], self.cross[2]):
                    layer.weight.normal_(0, 1e-2 / math.sqrt(layer.in_features), generator=gen)
                    layer.bias.zero_()

    # ---------------------------------------------------------------- anchoring
    def effective_coef(self) -> torch.Tensor:
        """The polynomial coefficients in use, shape ``(*spectral_shape, degree)``; with an anchor
        the first is ``c_{k,1} = slope_k / g'(x*_k)``."""
        if not torch.is_grad_enabled():
            key = (id(self.coef), self.coef._version, self.anchor_x._version,
                   id(self.anchor_slope), self.anchor_slope._version,
                   bool(self.anchored))
            cached = getattr(self, "_coef_cache", None)
            if cached is not None and cached[0] == key:
                return cached[1]
            with torch.enable_grad():
                value = self._effective_coef().detach()
            self._coef_cache = (key, value)
            return value
        return self._effective_coef()

    def _effective_coef(self) -> torch.Tensor:
        if not bool(self.anchored):
            return self.coef
        x = self.anchor_x
        slope_g = 1 / (1 + x) ** 2  # g'(x*)
        first = self.anchor_slope / slope_g
        return torch.cat([first.unsqueeze(-1), self.coef[..., 1:]], dim=-1)

    # ---------------------------------------------------------------- per-mode functions
    @staticmethod
    def _horner(x: torch.Tensor, coefs: torch.Tensor) -> torch.Tensor:
        """``sum_j coefs[:, j] x^j`` for ``x (..., M)``, ``coefs (M, J)``."""
        acc = coefs[:, -1].expand_as(x)
        for j in range(coefs.shape[1] - 2, -1, -1):
            acc = acc * x + coefs[:, j]
        return acc

    def _band_functions(self, pb: torch.Tensor, order: tuple[int, ...]):
        """``f``, ``f'`` and/or ``f''`` (``order`` in 0, 1, 2) on band powers ``pb (..., M)``.

        With ``g = x/(1+x)``, ``gamma = g'(x*)`` and ``y = (g - g(x*)) / gamma`` (``x*`` the
        anchor, 0 without one): ``f' = g'(x) H(g)``, ``H = c_1 + sum_{d>=2} (c_d/gamma) y^{d-1}``.
        """
        coef = self._band(self.effective_coef().movedim(-1, 0)).T.to(pb.dtype)  # (M, D)
        s = self._band(self.scale).to(pb.dtype)
        xs = self._band(self.anchor_x).to(pb.dtype)
        gs, gam = xs / (1 + xs), 1 / (1 + xs) ** 2
        x = pb / s
        g = x / (1 + x)
        g1 = 1 / (1 + x) ** 2  # dg/dx
        y = (g - gs) / gam
        c1, ch = coef[:, 0], coef[:, 1:]
        hcoef = torch.cat([c1.unsqueeze(-1), ch / gam.unsqueeze(-1)], dim=-1)  # H in powers of y
        out = []
        for o in order:
            if o == 0:
                val = c1 * g
                if self.degree > 1:
                    d = torch.arange(2, self.degree + 1, dtype=pb.dtype, device=pb.device)
                    y0 = -gs / gam
                    ypow = y.unsqueeze(-1) ** d - y0.unsqueeze(-1) ** d
                    val = val + (ch / d * ypow).sum(-1)
                out.append(s * val)
            elif o == 1:
                out.append(g1 * self._horner(y, hcoef))
            else:
                h = self._horner(y, hcoef)
                if self.degree > 1:
                    j = torch.arange(1, self.degree, dtype=pb.dtype, device=pb.device)
                    dh = self._horner(y, hcoef[:, 1:] * j) / gam  # dH/dg
                else:
                    dh = torch.zeros_like(y)
                out.append((-2 * g1 / (1 + x) * h + g1 * g1 * dh) / s)
        return out

    def _cross_input(self, pb):
        return pb / self._band(self.scale).to(pb.dtype)

    def _band_filter(self, pb: torch.Tensor) -> torch.Tensor:
        (phi,) = self._band_functions(pb, (1,))
        if self.cross is not None:
            outer = torch.is_grad_enabled()
            with torch.enable_grad():
                pp = pb if pb.requires_grad else pb.detach().requires_grad_(True)
                h = self.cross(self._cross_input(pp)).sum()
                (dh,) = torch.autograd.grad(h, pp, create_graph=outer)
            mult = self._band(self.geometry.multiplicity(pb.dtype, pb.device))
            phi = phi + dh / mult
        return phi

    # ---------------------------------------------------------------- interface
    def forward(self, r):
        out = super().forward(r)
        if self.cross is not None:
            _, pb = self._spectrum(r)
            out = out - self.geometry.size * self.cross(self._cross_input(pb)).squeeze(-1)
        return out

    def hvp(self, r, v):
        if self.cross is not None:
            return InteractionEnergy.hvp(self, r, v)
        return super().hvp(r, v)

    def config(self):
        return {"family": self.family, "bandwidth": self.bandwidth, "degree": self.degree,
                "cross_hidden": self.cross_hidden, "seed": self.seed}
