"""Geometries of neural populations: a ring and a torus of preferred phases.

A geometry owns the discrete Fourier transform of population activity over its neuron axes, the
spectral derivative along each manifold coordinate, the exact spectral shift by a continuous offset
and the decoding of the manifold coordinate from the phases of the fundamental modes (the abstract
:class:`Geometry` with these transforms lives in :mod:`neurodyn.geometry.base`; this module holds
the ring and the torus, the sheet's cell corners and :func:`make_geometry`).

Conventions
-----------
Neuron ``j`` of a ring of ``N`` neurons prefers the angle ``theta_j = 2 pi j / N``. Neuron
``(i, j)`` of an ``n1 x n2`` torus prefers the phases ``(2 pi i / n1, 2 pi j / n2)``. The population
Fourier coefficients are normalised,

.. math:: z_k(r) = \\frac{1}{N} \\sum_j r_j e^{-i k \\cdot \\theta_j},

stored in the half spectrum of ``torch.fft.rfftn`` over the neuron axes (shape ``spectral_shape``).
A bump centred at the manifold coordinate ``psi`` has ``z_k = |z_k| e^{-i k . psi}``, so that
:meth:`Geometry.decode` returns ``psi = -arg z_k`` for the fundamental modes, and
:meth:`Geometry.shift` by ``psi`` moves activity toward increasing coordinates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from _runkit import BadInput, BadType

from .base import MIN_NEURONS, Geometry, wrap_angle

__all__ = ["Geometry", "Ring", "Torus", "make_geometry", "LATTICES", "wrap_angle",
           "sheet_corners", "MIN_NEURONS"]

LATTICES = ("hex", "square")


class Ring(Geometry):
    """A ring of ``n`` neurons with preferred angles ``2 pi j / n``.

    Examples
    --------
    >>> ring = Ring(128)
    >>> ring.shape, ring.spectral_shape
    ((128,), (65,))
    """

    kind = "ring"
    dim = 1

    def __init__(self, n: int = 128):
        if isinstance(n, bool) or not isinstance(n, int):
            raise BadType(f"n={n!r}: the number of neurons must be an int", param="n")
        super().__init__((n,))
        self.n = n

    def config(self) -> dict:
        return {"kind": "ring", "n": self.n}

    def fundamental_modes(self) -> list[tuple[int, ...]]:
        """Wave vectors of the fundamental modes: ``[(1,)]``."""
        return [(1,)]

    def neuron_distance(self, dtype=torch.float64) -> torch.Tensor:
        theta = self.coords(dtype)[0]
        return torch.minimum(theta, 2 * math.pi - theta)


class Torus(Geometry):
    """An ``n1 x n2`` sheet of neurons with periodic boundaries.

    ``lattice='square'``: phases ``(2 pi i / n1, 2 pi j / n2)`` on orthogonal axes.
    ``lattice='hex'``: the same index phases on lattice axes at 120 degrees,
    ``e1 = (1, 0)`` and ``e2 = (-1/2, sqrt(3)/2)``, so that the three shortest reciprocal vectors,
    the DFT modes ``(1,0)``, ``(0,1)`` and ``(1,-1)``, have equal length and give hexagonal grid
    fields. The metric, the neuron distances, the drawn sheet (:func:`sheet_corners`) and the
    triad all use these axes: the squared length of the reciprocal vector of mode ``k`` is
    ``k^T G^{-1} k`` with ``G`` the :meth:`metric`.

    Examples
    --------
    >>> g = Torus(16, 16, "hex")
    >>> ginv = torch.linalg.inv(g.metric())
    >>> [round(float(torch.tensor(k, dtype=torch.float64) @ ginv @ torch.tensor(
    ...     k, dtype=torch.float64)), 12) for k in g.fundamental_modes()]
    [1.333333333333, 1.333333333333, 1.333333333333]
    """

    kind = "torus"
    dim = 2

    def __init__(self, n1: int = 32, n2: int | None = None, lattice: str = "hex"):
        n2 = n1 if n2 is None else n2
        for name, v in (("n1", n1), ("n2", n2)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise BadType(f"{name}={v!r}: the sheet size must be an int", param=name)
        if lattice not in LATTICES:
            raise BadInput(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}",
                           param="lattice")
        super().__init__((n1, n2))
        self.lattice = lattice

    def config(self) -> dict:
        return {"kind": "torus", "n": list(self.shape), "lattice": self.lattice}

    def fundamental_modes(self) -> list[tuple[int, ...]]:
        """Wave vectors of the fundamental modes, ``(1,0), (0,1)`` (and ``(1,-1)`` for hex)."""
        modes = [(1, 0), (0, 1)]
        if self.lattice == "hex":
            modes.append((1, -1))
        return modes

    def metric(self, dtype=torch.float64) -> torch.Tensor:
        """Gram matrix ``G_ab = e_a . e_b`` of the lattice axes on the sheet, shape ``(2, 2)``.

        ``hex``: axes at 120 degrees (``e1 . e2 = -1/2``); ``square``: the identity.
        """
        c = -0.5 if self.lattice == "hex" else 0.0
        return torch.tensor([[1.0, c], [c, 1.0]], dtype=dtype)

    def sheet_offsets(self, dtype=torch.float64) -> torch.Tensor:
        """Position of every neuron relative to neuron ``(0, 0)`` on the flat sheet.

        Phase offsets ``d`` (radians, wrapped) sit at ``d_1 e1 + d_2 e2`` with the axes of
        :meth:`metric` (``e1 = (1, 0)``, ``e2 = (-1/2, sqrt(3)/2)`` for ``hex``); of the periodic
        images the nearest is taken (the shortest image on a skewed lattice may be a
        neighbouring copy).

        Returns
        -------
        torch.Tensor, shape (2, n1, n2)
            Cartesian ``(x, y)`` in radians of phase; ``neuron_distance`` is its norm.

        Examples
        --------
        >>> p = Torus(12, 12, "hex").sheet_offsets()
        >>> [round(float(v) * 12 / (2 * math.pi), 6) for v in p[:, 1, 1]]
        [0.5, 0.866025]
        """
        d = wrap_angle(self.coords(dtype))  # (2, n1, n2), offsets in [-pi, pi)
        c = float(self.metric(dtype)[0, 1])
        axes = torch.tensor([[1.0, c], [0.0, math.sqrt(1.0 - c * c)]], dtype=dtype)
        images = torch.stack([torch.einsum("xa,a...->x...", axes,
                                           d + 2 * math.pi * torch.tensor(
                                               [s1, s2], dtype=dtype).reshape(2, 1, 1))
                              for s1 in (-1, 0, 1) for s2 in (-1, 0, 1)])  # (9, 2, n1, n2)
        best = images.norm(dim=1).argmin(dim=0)  # first of equally near images
        return torch.take_along_dim(images, best[None, None], dim=0)[0]

    def neuron_distance(self, dtype=torch.float64) -> torch.Tensor:
        return self.sheet_offsets(dtype).norm(dim=0)

    def point_symmetries(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Integer maps of index offsets that preserve the sheet's metric and its periods.

        ``M`` (2 x 2, entries in ``{-1, 0, 1}``) with ``M^T G M = G`` (:meth:`metric`) that maps
        the period lattice ``n1 Z x n2 Z`` into itself: the rotations and reflections of the
        sheet about a neuron (12 on a square ``hex`` sheet, 8 on a square ``square`` sheet).
        A translation-invariant function of the sheet's geometry, such as a connectivity
        kernel, takes one value on each orbit of these maps.

        Returns
        -------
        list of ((m11, m12), (m21, m22))

        Examples
        --------
        >>> len(Torus(16, 16, "hex").point_symmetries()), len(Torus(16, 16, "square")
        ...                                                   .point_symmetries())
        (12, 8)
        """
        g = self.metric(torch.float64)
        n1, n2 = self.shape
        out = []
        for m in itertools.product((-1, 0, 1), repeat=4):
            mm = torch.tensor(m, dtype=torch.float64).reshape(2, 2)
            periodic = (m[0] * n1) % n1 == 0 and (m[2] * n1) % n2 == 0 \
                and (m[1] * n2) % n1 == 0 and (m[3] * n2) % n2 == 0
            if periodic and torch.allclose(mm.T @ g @ mm, g, atol=1e-12):
                out.append(((m[0], m[1]), (m[2], m[3])))
        return out


def sheet_corners(shape: tuple[int, int], lattice: str, centred: bool = False
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Corners of the neurons' cells on a torus sheet, in units of the neuron spacing.

    Neuron ``(i, j)`` sits at ``i e1 + j e2`` with ``e1 = (1, 0)`` and ``e2 = (-1/2, sqrt(3)/2)``
    (``hex``, the axes of :meth:`Torus.metric`) or ``(0, 1)`` (``square``); its cell spans index
    offsets ``+-1/2`` around it.

    Parameters
    ----------
    shape : tuple of int
        ``(n1, n2)``.
    lattice : str
        One of :data:`LATTICES`.
    centred : bool
        Index offsets counted from neuron ``(n1 // 2, n2 // 2)`` (so that a row rolled by
        ``(n1 // 2, n2 // 2)`` has offset 0 in the middle) instead of from neuron ``(0, 0)``.

    Returns
    -------
    x, y : ndarray, shape (n1 + 1, n2 + 1)
        Corner coordinates, as ``pcolormesh`` takes them.

    Examples
    --------
    >>> x, y = sheet_corners((2, 2), "square")
    >>> x[:, 0].tolist(), y[0].tolist()
    ([-0.5, 0.5, 1.5], [-0.5, 0.5, 1.5])
    >>> x, y = sheet_corners((2, 2), "hex")
    >>> round(float(x[0, 1]), 3), round(float(y[0, 1]), 3)
    (-0.75, 0.433)
    """
    if lattice not in LATTICES:
        raise BadInput(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}",
                       param="lattice")
    a = np.arange(shape[0] + 1) - 0.5 - (shape[0] // 2 if centred else 0)
    b = np.arange(shape[1] + 1) - 0.5 - (shape[1] // 2 if centred else 0)
    aa, bb = np.meshgrid(a, b, indexing="ij")
    if lattice == "hex":
        return aa - 0.5 * bb, bb * math.sqrt(3.0) / 2.0
    return aa, bb


def make_geometry(config: dict) -> Geometry:
    """Rebuild a geometry from :meth:`Geometry.config`.

    Parameters
    ----------
    config : dict
        ``{"kind": "ring", "n": N}`` or ``{"kind": "torus", "n": [n1, n2], "lattice": ...}``.
    """
    config = dict(config)
    kind = config.pop("kind", None)
    if kind == "ring":
        n = config.pop("n", 128)
        if config:
            raise BadInput(f"geometry: unknown keys {sorted(config)} for a ring; allowed: ['n']")
        return Ring(int(n))
    if kind == "torus":
        n = config.pop("n", [32, 32])
        lattice = config.pop("lattice", "hex")
        if config:
            raise BadInput(
                f"geometry: unknown keys {sorted(config)} for a torus; allowed: ['lattice', 'n']"
            )
        if isinstance(n, int):
            n = [n, n]
        if len(n) != 2:
            raise BadInput(f"n={n!r}: a torus needs two sizes (n1, n2)", param="n")
        return Torus(int(n[0]), int(n[1]), lattice)
    raise BadInput(f"geometry kind={kind!r}: unknown; choose one of ('ring', 'torus')")
