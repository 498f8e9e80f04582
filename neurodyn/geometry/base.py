"""The abstract :class:`Geometry`: Fourier transforms of population activity on a compact
manifold of preferred phases (DFT, spectral derivative, exact shift, decoding).

The concrete geometries (:class:`~neurodyn.geometry.populations.Ring`,
:class:`~neurodyn.geometry.populations.Torus`) and the conventions (preferred phases, the
normalised coefficients ``z_k``, the sign of the decoded coordinate) are in
:mod:`neurodyn.geometry.populations`, which also re-exports everything here.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch

from _runkit import BadInput, BadType

__all__ = ["Geometry", "wrap_angle", "MIN_NEURONS"]

MIN_NEURONS = 8


def wrap_angle(x: torch.Tensor) -> torch.Tensor:
    """Wrap angles to ``[-pi, pi)``.

    Parameters
    ----------
    x : torch.Tensor, shape (...)
        Angles in radians.
    """
    return torch.remainder(x + math.pi, 2 * math.pi) - math.pi


class Geometry(ABC):
    """A compact manifold of preferred phases for a population of ``size`` neurons.

    Subclasses fix ``shape`` (the neuron axes) and the fundamental modes. Every state tensor has
    shape ``(..., *shape)``; Fourier coefficients have shape ``(..., *spectral_shape)``.
    """

    kind: str = ""
    #: Manifold dimension: 1 for the ring, 2 for the torus.
    dim: int = 0

    def __init__(self, shape: Sequence[int]):
        shape = tuple(int(n) for n in shape)
        for n in shape:
            if n < MIN_NEURONS:
                raise BadInput(
                    f"n={shape}: every neuron axis needs at least {MIN_NEURONS} neurons", param="n"
                )
        self.shape = shape
        self.size = math.prod(shape)
        self.spectral_shape = shape[:-1] + (shape[-1] // 2 + 1,)
        self._cache: dict[tuple, tuple[torch.Tensor, ...]] = {}

    # ------------------------------------------------------------------ construction helpers
    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config()})"

    @abstractmethod
    def config(self) -> dict:
        """A JSON-serialisable description from which :func:`make_geometry` rebuilds it."""

    @abstractmethod
    def fundamental_modes(self) -> list[tuple[int, ...]]:
        """Wave vectors of the fundamental modes of the lattice."""

    @property
    def axes(self) -> tuple[int, ...]:
        """The neuron axes, counted from the end of a state tensor."""
        return tuple(range(-self.dim, 0))

    def _tables(self, dtype: torch.dtype, device: torch.device | str = "cpu"):
        key = (dtype, str(device))
        if key not in self._cache:
            ks = []
            for a, n in enumerate(self.shape):
                if a == self.dim - 1:
                    k = torch.arange(n // 2 + 1, dtype=dtype, device=device)
                else:
                    k = torch.fft.fftfreq(n, d=1.0 / n, dtype=dtype, device=device)
                view = [1] * self.dim
                view[a] = -1
                ks.append(k.reshape(view).expand(self.spectral_shape))
            wavevectors = torch.stack(ks)  # (dim, *spectral_shape)
            last = self.shape[-1]
            klast = wavevectors[-1]
            self_conjugate = (klast == 0) | ((last % 2 == 0) & (klast == last // 2))
            mult = torch.where(self_conjugate, 1.0, 2.0).to(dtype)
            # modes whose derivative and shift must stay real: Nyquist along any axis
            nyq = torch.zeros(self.spectral_shape, dtype=torch.bool, device=device)
            for a, n in enumerate(self.shape):
                if n % 2 == 0:
                    nyq |= wavevectors[a].abs() == n // 2
            coords = torch.stack(
                torch.meshgrid(
                    *[2 * math.pi * torch.arange(n, dtype=dtype, device=device) / n
                      for n in self.shape],
                    indexing="ij",
                )
            )
            self._cache[key] = (wavevectors, mult, nyq, coords)
        return self._cache[key]

    def wavevectors(self, dtype=torch.float64, device="cpu") -> torch.Tensor:
        """Integer wave vectors of the stored modes, shape ``(dim, *spectral_shape)``."""
        return self._tables(dtype, device)[0]

    def multiplicity(self, dtype=torch.float64, device="cpu") -> torch.Tensor:
        """How often each stored mode occurs in the full spectrum (1 or 2), ``spectral_shape``.

        With it, ``sum_j r_j^2 = N sum_k m_k |z_k|^2`` over the stored half spectrum.
        """
        return self._tables(dtype, device)[1]

    def coords(self, dtype=torch.float64, device="cpu") -> torch.Tensor:
        """Preferred phases of the neurons, shape ``(dim, *shape)``, in ``[0, 2 pi)``."""
        return self._tables(dtype, device)[3]

    # ------------------------------------------------------------------ checks
    def check_state(self, x: torch.Tensor, name: str = "u") -> torch.Tensor:
        """Raise ``BadInput`` unless ``x`` has shape ``(..., *shape)`` and finite entries."""
        if not isinstance(x, torch.Tensor):
            raise BadType(f"{name}: expected a torch.Tensor, got {type(x).__name__}", param=name)
        if x.dim() < self.dim or tuple(x.shape[x.dim() - self.dim:]) != self.shape:
            raise BadInput(
                f"{name}: shape {tuple(x.shape)} does not end with the population shape "
                f"{self.shape} of {self!r}", param=name
            )
        if not torch.isfinite(x).all():
            raise BadInput(f"{name}: contains non-finite values", param=name)
        return x

    # ------------------------------------------------------------------ transforms
    def dft(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised population Fourier coefficients.

        .. math:: z_k = \\frac{1}{N} \\sum_j x_j e^{-i k \\cdot \\theta_j}

        Parameters
        ----------
        x : torch.Tensor, shape (..., *shape)
            Values on the neurons.

        Returns
        -------
        Tensor ``(..., *spectral_shape)``, complex.
        """
        if self.dim == 1:
            return torch.fft.rfft(x, dim=-1, norm="forward")
        return torch.fft.rfftn(x, dim=self.axes, norm="forward")

    def idft(self, z: torch.Tensor) -> torch.Tensor:
        """Inverse of :meth:`dft`: ``x_j = sum_k z_k e^{i k . theta_j}`` (full spectrum).

        Parameters
        ----------
        z : torch.Tensor, shape (..., *spectral_shape)
            Complex Fourier coefficients.

        Returns
        -------
        Tensor ``(..., *shape)``, real.
        """
        if self.dim == 1:
            return torch.fft.irfft(z, n=self.shape[0], dim=-1, norm="forward")
        return torch.fft.irfftn(z, s=self.shape, dim=self.axes, norm="forward")

    def power(self, x: torch.Tensor) -> torch.Tensor:
        """Power spectrum ``|z_k|^2`` of ``x``, shape ``(..., *spectral_shape)``."""
        z = self.dft(x)
        return z.real**2 + z.imag**2

    def derivative(self, x: torch.Tensor, axis: int = 0) -> torch.Tensor:
        """Spectral derivative along manifold coordinate ``axis``: mode ``k`` times ``i k_axis``.

        Nyquist modes are dropped (their derivative is not real).

        Parameters
        ----------
        x : torch.Tensor, shape (..., *shape)
            Values on the neurons.
        axis : int
            Manifold coordinate, ``0 <= axis < dim``.
        """
        self._check_axis(axis)
        k, _, nyq, _ = self._tables(x.dtype, x.device)
        z = self.dft(x) * (1j * k[axis]) * (~nyq)
        return self.idft(z)

    def shift(self, x: torch.Tensor, psi: torch.Tensor | float | Sequence[float]) -> torch.Tensor:
        """Exact spectral shift of ``x`` by the continuous offset ``psi``.

        .. math:: z_k \\mapsto z_k e^{-i k \\cdot \\psi}

        so a bump at ``phi`` moves to ``phi + psi``.

        Parameters
        ----------
        x : torch.Tensor, shape (..., *shape)
            Values on the neurons.
        psi : torch.Tensor or float or sequence of float, shape (..., dim)
            Offset, broadcastable against the batch of ``x`` (a float is accepted for the
            ring).
        """
        k, _, _, _ = self._tables(x.dtype, x.device)
        psi = self._as_phase(psi, x)
        phase = torch.einsum("a...,ba->b...", k, psi.reshape(-1, self.dim))
        phase = phase.reshape(psi.shape[:-1] + self.spectral_shape)
        return self.idft(self.dft(x) * torch.exp(-1j * phase))

    def decode(self, r: torch.Tensor) -> torch.Tensor:
        """Manifold coordinate of activity from the phases of the fundamental modes.

        .. math:: \\psi_a = -\\arg z_{e_a}(r)  \\pmod{2\\pi}

        Parameters
        ----------
        r : torch.Tensor, shape (..., *shape)
            Rates.

        Returns
        -------
        Tensor ``(..., dim)`` in ``[0, 2 pi)``.
        """
        z = self.dft(r)
        out = []
        for a in range(self.dim):
            idx = [0] * self.dim
            idx[a] = 1
            out.append(-torch.angle(z[(Ellipsis, *idx)]))
        return torch.remainder(torch.stack(out, dim=-1), 2 * math.pi)

    # ------------------------------------------------------------------ helpers
    def _check_axis(self, axis: int) -> None:
        if not 0 <= axis < self.dim:
            raise BadInput(f"axis={axis}: must be in [0, {self.dim}) for {self!r}", param="axis")

    def _as_phase(self, psi, like: torch.Tensor) -> torch.Tensor:
        psi = torch.as_tensor(psi, dtype=like.dtype, device=like.device)
        if psi.dim() == 0:
            if self.dim != 1:
                raise BadInput(
                    f"psi: a scalar offset needs a ring; {self!r} needs shape (..., 2)",
                    param="psi")
            psi = psi.reshape(1)
        if psi.shape[-1] != self.dim:
            raise BadInput(
                f"psi: shape {tuple(psi.shape)} must end with the manifold dimension {self.dim}",
                param="psi"
            )
        return psi

    def random_phase(self, count: int, generator: torch.Generator, dtype=torch.float64):
        """``count`` uniformly random manifold coordinates, shape ``(count, dim)``."""
        return 2 * math.pi * torch.rand(count, self.dim, generator=generator, dtype=dtype)

    @abstractmethod
    def neuron_distance(self, dtype=torch.float64) -> torch.Tensor:
        """Distance on the manifold from neuron 0 to every neuron, shape ``shape``.

        Uses the flat metric of the sheet (for the ``hex`` torus the lattice axes are at 120
        degrees), in radians of phase.
        """
