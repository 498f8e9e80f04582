"""What SEAL's per-mode spectral energies share: the band of interacting modes, per-mode
polynomial coefficients with an exact anchor, and the energy, gradient and Hessian-vector
product of ``F(r) = -N sum_k m_k f_k(|z_k|^2)`` given the per-mode functions ``f, f', f''``.

A subclass sets ``family`` and implements ``_band_functions(pb, order)`` (``f``, ``f'``,
``f''`` of the band powers ``pb``) and ``effective_coef()``.
"""

from __future__ import annotations

import abc
import math

import torch
from torch import nn

from _runkit import BadInput

from ..geometry.populations import Geometry
from .base import InteractionEnergy


class BandedSpectralEnergy(InteractionEnergy, abc.ABC):
    """Base of the per-mode spectral energies: ``F(r) = -N sum_k m_k f_k(|z_k|^2)``.

    The gradient is the spectral filter ``-2 idft(f'_k z_k)`` (two FFTs) and the
    Hessian-vector product ``-2 idft(f''_k dp_k z_k + f'_k dz_k)``.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    bandwidth : int
        Highest wave number (per axis) of an interacting mode, in ``[min_bandwidth, max(shape) //
        2]``.
    degree : int
        Number ``D`` of polynomial terms per mode, in ``[1, 8]``.
    scale : torch.Tensor or None, shape (*spectral_shape)
        ``s_k``, positive tensor of shape ``spectral_shape`` (typical power of each mode).
    min_bandwidth : int
        The smallest bandwidth the family accepts.
    """

    def __init__(self, geometry: Geometry, bandwidth: int, degree: int,
                 scale: torch.Tensor | None, min_bandwidth: int):
        super().__init__(geometry)
        top = max(geometry.shape) // 2
        if not min_bandwidth <= bandwidth <= top:
            raise BadInput(f"bandwidth={bandwidth}: must be in [{min_bandwidth}, {top}]",
                           param="bandwidth")
        if not 1 <= degree <= 8:
            raise BadInput(f"degree={degree}: must be in [1, 8]", param="degree")
        self.bandwidth, self.degree = int(bandwidth), int(degree)
        k = geometry.wavevectors()
        mask = (k.abs().amax(0) <= bandwidth).to(torch.float64)
        self.register_buffer("mask", mask)
        self.register_buffer("band", mask.flatten().nonzero().squeeze(-1), persistent=False)
        s = torch.ones(geometry.spectral_shape, dtype=torch.float64) if scale is None else scale
        s = torch.as_tensor(s, dtype=torch.float64)
        if tuple(s.shape) != geometry.spectral_shape or not (s > 0).all():
            raise BadInput(f"scale: must be positive with shape {geometry.spectral_shape}",
                           param="scale")
        self.register_buffer("scale", s.clone())
        self.coef = nn.Parameter(torch.zeros(geometry.spectral_shape + (degree,),
                                             dtype=torch.float64))
        # Optional anchor: f'_k(p*_k) = slope_k imposed exactly (fixed points of a target).
        self.register_buffer("anchor_x", torch.zeros(geometry.spectral_shape, dtype=torch.float64))
        self.register_buffer("anchor_slope",
                             torch.zeros(geometry.spectral_shape, dtype=torch.float64))
        self.register_buffer("anchored", torch.zeros((), dtype=torch.bool))

    def anchor(self, power: torch.Tensor, slope: torch.Tensor) -> None:
        """Impose ``f'_k(power_k) = slope_k`` exactly on every interacting mode.

        The constraint fixes the first coefficient of each mode (see the family's
        ``effective_coef``); ``coef[..., 0]`` is then ignored.

        Parameters
        ----------
        power : torch.Tensor, shape (*spectral_shape)
            ``p*_k``, shape ``spectral_shape``.
        slope : torch.Tensor, shape (*spectral_shape)
            ``f'_k(p*_k)``, shape ``spectral_shape``.
        """
        with torch.no_grad():
            self.anchor_x.copy_(torch.as_tensor(power, dtype=torch.float64) / self.scale)
            self.anchor_slope.copy_(torch.as_tensor(slope, dtype=torch.float64) * self.mask)
            self.anchored.fill_(True)

    # ---------------------------------------------------------------- per-mode functions
    def _band(self, x: torch.Tensor) -> torch.Tensor:
        """Restrict ``(..., *spectral_shape)`` to the interacting modes: ``(..., M)``."""
        return x.flatten(-self.geometry.dim)[..., self.band]

    def _unband(self, y: torch.Tensor) -> torch.Tensor:
        """Scatter ``(..., M)`` back to ``(..., *spectral_shape)`` with zeros elsewhere."""
        g = self.geometry
        out = torch.zeros(y.shape[:-1] + (math.prod(g.spectral_shape),), dtype=y.dtype,
                          device=y.device)
        # out of place, so the energy can be evaluated under torch.func.vmap over its
        # coefficients (the batched design matrix of neurodyn.fitting.core)
        return out.index_copy(-1, self.band, y).reshape(y.shape[:-1] + g.spectral_shape)

    @abc.abstractmethod
    def effective_coef(self) -> torch.Tensor:
        """The coefficients in use, shape ``(*spectral_shape, degree)`` (the family's own)."""

    @abc.abstractmethod
    def _band_functions(self, pb: torch.Tensor, order: tuple[int, ...]) -> list[torch.Tensor]:
        """``f``, ``f'`` and/or ``f''`` (``order`` in 0, 1, 2) on band powers ``pb (..., M)``;
        each family defines its own."""

    def mode_value(self, p: torch.Tensor) -> torch.Tensor:
        """``f_k(p)`` per mode, ``p`` of shape ``(..., *spectral_shape)`` (zero off the band)."""
        return self._unband(self._band_functions(self._band(p), (0,))[0])

    def mode_slope(self, p: torch.Tensor) -> torch.Tensor:
        """``f'_k(p)`` per mode (zero off the band)."""
        return self._unband(self._band_functions(self._band(p), (1,))[0])

    def mode_curvature(self, p: torch.Tensor) -> torch.Tensor:
        """``f''_k(p)`` per mode (zero off the band)."""
        return self._unband(self._band_functions(self._band(p), (2,))[0])

    # ---------------------------------------------------------------- interface
    def _spectrum(self, r):
        """Band coefficients ``z_k`` and powers ``|z_k|^2`` of ``r``."""
        zb = self._band(self.geometry.dft(r))
        return zb, zb.real**2 + zb.imag**2

    def _band_filter(self, pb: torch.Tensor) -> torch.Tensor:
        """The gradient's filter on the band, ``f'_k(p_k)``."""
        return self._band_functions(pb, (1,))[0]

    def forward(self, r):
        g = self.geometry
        _, pb = self._spectrum(r)
        m = self._band(g.multiplicity(r.dtype, r.device))
        (f,) = self._band_functions(pb, (0,))
        return -g.size * (m * f).sum(-1)

    def grad(self, r):
        zb, pb = self._spectrum(r)
        return -2 * self.geometry.idft(self._unband(self._band_filter(pb) * zb))

    def hvp(self, r, v):
        g = self.geometry
        zb, pb = self._spectrum(r)
        zv = self._band(g.dft(v.expand_as(r)))
        dp = 2 * (zb.real * zv.real + zb.imag * zv.imag)
        f1, f2 = self._band_functions(pb, (1, 2))
        return -2 * g.idft(self._unband(f2 * dp * zb + f1 * zv))
