"""Quadratic interaction energies: the classic Hopfield ``-1/2 r^T W r`` and the Fourier
construction (a circulant ``W`` given by its spectrum)."""

from __future__ import annotations

import torch

from _runkit import BadInput

from ..geometry.populations import Geometry
from .base import InteractionEnergy, _flat

__all__ = ["QuadraticEnergy", "FourierQuadraticEnergy"]


class QuadraticEnergy(InteractionEnergy):
    """Classic Hopfield interaction ``F(r) = -1/2 r^T W r`` with a symmetric ``W``.

    .. math:: \\nabla F = -W r

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    weights : torch.Tensor, shape (N, N)
        Symmetric matrix, ``N = geometry.size`` (neurons in row-major order).
    """

    family = "quadratic"

    def __init__(self, geometry: Geometry, weights: torch.Tensor):
        super().__init__(geometry)
        w = torch.as_tensor(weights)
        n = geometry.size
        if w.shape != (n, n):
            raise BadInput(f"weights: shape {tuple(w.shape)}, expected ({n}, {n})", param="weights")
        if not torch.isfinite(w).all():
            raise BadInput("weights: contains non-finite values", param="weights")
        if not torch.allclose(w, w.T, atol=1e-10 * (1 + float(w.abs().max()))):
            raise BadInput("weights: must be symmetric for a Hopfield energy (W == W.T)",
                           param="weights")
        self.register_buffer("weights", w.clone())

    def forward(self, r):
        x = _flat(r, self.geometry).to(self.weights.dtype)
        return -0.5 * torch.einsum("...i,ij,...j->...", x, self.weights, x)

    def grad(self, r):
        x = _flat(r, self.geometry).to(self.weights.dtype)
        return -(x @ self.weights).reshape(r.shape)

    def hvp(self, r, v):
        x = _flat(v.expand_as(r), self.geometry).to(self.weights.dtype)
        return -(x @ self.weights).reshape(r.shape)

    @classmethod
    def circulant(cls, geometry: Geometry, profile) -> QuadraticEnergy:
        """A translation-invariant ``W_ij = w(theta_i - theta_j)`` from a kernel on neuron offsets.

        Parameters
        ----------
        profile : callable or torch.Tensor, shape (*shape)
            Callable mapping offsets ``(dim, *shape)`` in radians (wrapped to ``[-pi, pi)``) to
            weights of shape ``shape``, or a tensor of shape ``shape`` with the weights from neuron
            0 to every neuron.
        """
        from ..geometry.populations import wrap_angle

        th = geometry.coords()
        kernel = profile(wrap_angle(th)) if callable(profile) else torch.as_tensor(profile)
        kernel = kernel.to(torch.float64)
        if tuple(kernel.shape) != geometry.shape:
            raise BadInput(f"profile: shape {tuple(kernel.shape)}, expected {geometry.shape}",
                           param="profile")
        # row i is the kernel shifted so that its origin sits on neuron i
        eye = torch.eye(geometry.size, dtype=torch.float64).reshape((-1,) + geometry.shape)
        w = geometry.idft(geometry.dft(eye) * geometry.dft(kernel) * geometry.size)
        w = w.reshape(geometry.size, geometry.size)
        return cls(geometry, 0.5 * (w + w.T))

    def config(self):
        return {"family": self.family}


class FourierQuadraticEnergy(InteractionEnergy):
    """The Fourier construction: a circulant quadratic energy given by its spectrum.

    .. math:: F(r) = -\\frac{N}{2} \\sum_k m_k w_k |z_k|^2, \\qquad
              \\nabla F = -\\mathrm{idft}(w \\odot z)

    equivalent to ``-1/2 r^T W r`` with circulant ``W`` of eigenvalues ``w_k``.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    spectrum : torch.Tensor, shape (*geometry.spectral_shape)
        ``w_k``, real tensor of shape ``geometry.spectral_shape``; must be even under ``k -> -k``
        for a symmetric ``W``.
    """

    family = "fourier"

    def __init__(self, geometry: Geometry, spectrum: torch.Tensor):
        super().__init__(geometry)
        w = torch.as_tensor(spectrum, dtype=torch.float64)
        if tuple(w.shape) != geometry.spectral_shape:
            raise BadInput(
                f"spectrum: shape {tuple(w.shape)}, expected {geometry.spectral_shape}",
                param="spectrum"
            )
        if not torch.isfinite(w).all():
            raise BadInput("spectrum: contains non-finite values", param="spectrum")
        self.register_buffer("spectrum", w.clone())

    def forward(self, r):
        g = self.geometry
        m = g.multiplicity(r.dtype, r.device)
        p = g.power(r)
        return -0.5 * g.size * (m * self.spectrum.to(r.dtype) * p).flatten(-g.dim).sum(-1)

    def grad(self, r):
        g = self.geometry
        return -g.idft(self.spectrum.to(r.dtype) * g.dft(r))

    def hvp(self, r, v):
        return self.grad(v.expand_as(r))

    def dense(self) -> torch.Tensor:
        """The equivalent circulant weight matrix ``W``, shape ``(N, N)``."""
        g = self.geometry
        eye = torch.eye(g.size, dtype=torch.float64).reshape((-1,) + g.shape)
        return (-self.grad(eye)).reshape(g.size, g.size)
