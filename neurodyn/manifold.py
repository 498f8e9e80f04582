"""Target attractor manifolds: the family of bumps ``u*(psi)`` and distances to it.

The target attractor is ``u*(psi) = a + c p(theta - psi)``, ``r*(psi) = phi(u*(psi))``, with ``p``
a cosine (ring), the sum of the three hexagonal cosines (hex torus), a product of cosines (square
torus) or a user profile. Every point is an exact spectral shift of ``u*(0)``, so ``||u*(psi)||``
is the same for all ``psi``.

The geometry the fit and the attraction measurements share is defined here too: the nearest
manifold point ``psi_hat`` in the metric of the dynamics (:func:`nearest_point`), the leak's
Bregman divergence to it (:func:`bregman`), and probe directions at a manifold point with their
tangent part removed along the dynamics' own splitting (:func:`probe_directions`,
:func:`oblique_projection`; see :mod:`neurodyn.analysis.attraction`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from _runkit import BadInput
from _runkit.results import Result

from .activation import Activation
from .geometry.populations import Geometry, Ring, Torus

__all__ = ["TargetManifold", "ManifoldDistance", "PROFILES", "bump_profile", "PROBES",
           "probe_directions", "nearest_point", "bregman", "oblique_projection"]

PROFILES = ("cosine", "hex", "square")


def bump_profile(geometry: Geometry, profile: str = "auto") -> torch.Tensor:
    """Bump shape ``p(theta)`` centred at phase 0, peak value 1, shape ``geometry.shape``.

    - ``cosine`` (ring): ``cos theta``.
    - ``hex`` (torus): ``cos t1 + cos t2 + cos(t1 - t2)``, rescaled from ``[-3/2, 3]`` to
      ``[-1, 1]``.
    - ``square`` (torus): ``(1 + cos t1)(1 + cos t2)/2 - 1``, in ``[-1, 1]``.

    ``auto`` picks ``cosine`` for a ring and the torus's lattice otherwise.
    """
    if profile == "auto":
        profile = "cosine" if isinstance(geometry, Ring) else geometry.lattice
    th = geometry.coords()
    if profile == "cosine":
        if not isinstance(geometry, Ring):
            raise BadInput(f"profile='cosine' needs a ring, got {geometry!r}", param="profile")
        return torch.cos(th[0])
    if not isinstance(geometry, Torus):
        raise BadInput(f"profile={profile!r} needs a torus, got {geometry!r}", param="profile")
    if profile == "hex":
        s = torch.cos(th[0]) + torch.cos(th[1]) + torch.cos(th[0] - th[1])  # in [-1.5, 3]
        return (s + 1.5) / 2.25 - 1.0
    if profile == "square":
        return (1 + torch.cos(th[0])) * (1 + torch.cos(th[1])) / 2 - 1.0
    raise BadInput(f"profile={profile!r}: unknown; choose one of {('auto',) + PROFILES}",
                   param="profile")


@dataclass(frozen=True)
class ManifoldDistance(Result):
    """Distance of states to the manifold.

    Attributes
    ----------
    distance : ``min_psi ||u - u*(psi)|| / ||u*||``, shape ``(...)``.
    psi : the nearest manifold coordinate, shape ``(..., dim)``, in ``[0, 2 pi)``.
    """

    distance: torch.Tensor
    psi: torch.Tensor


class TargetManifold:
    """The family of bump states ``u*(psi)``, exact spectral shifts of a profile ``u*(0)``.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    activation : Activation
        The rate function ``phi``.
    u0 : torch.Tensor, shape (*geometry.shape)
        Potentials of the bump centred at ``psi = 0``, shape ``geometry.shape``.
    """

    def __init__(self, geometry: Geometry, activation: Activation, u0: torch.Tensor):
        geometry.check_state(torch.as_tensor(u0), "u0")
        if torch.as_tensor(u0).shape != torch.Size(geometry.shape):
            raise BadInput(f"u0: shape {tuple(u0.shape)}, expected {geometry.shape}", param="u0")
        self.geometry = geometry
        self.activation = activation
        self.u0 = torch.as_tensor(u0, dtype=torch.float64).clone()
        self.norm = float(self.u0.norm())
        if self.norm == 0:
            raise BadInput("u0: the zero state cannot define a manifold", param="u0")

    @classmethod
    def bump(cls, geometry: Geometry, activation: Activation, a: float = -2.0, c: float = 4.0,
             profile: str | torch.Tensor = "auto") -> TargetManifold:
        """``u*(theta) = a + c p(theta)`` with a named or given profile ``p`` (peak 1 at 0)."""
        for key, v in (("a", a), ("c", c)):
            if not math.isfinite(v):
                raise BadInput(f"{key}={v!r}: must be finite", param=key)
        if c <= 0:
            raise BadInput(f"c={c!r}: the bump height must be > 0", param="c")
        p = bump_profile(geometry, profile) if isinstance(profile, str) else torch.as_tensor(
            profile, dtype=torch.float64)
        return cls(geometry, activation, a + c * p)

    def to(self, device: torch.device | str) -> TargetManifold:
        """This manifold with its profile on ``device`` (``self`` when it is already there)."""
        if self.u0.device == torch.device(device):
            return self
        return TargetManifold(self.geometry, self.activation, self.u0.to(device))

    # ------------------------------------------------------------------ points and tangents
    def u_star(self, psi: torch.Tensor) -> torch.Tensor:
        """Potentials ``u*(psi)``, shape ``(..., *shape)`` for ``psi`` of shape ``(..., dim)``."""
        psi = torch.as_tensor(psi, dtype=self.u0.dtype)
        psi = self.geometry._as_phase(psi, self.u0)
        return self.geometry.shift(self.u0, psi)

    def r_star(self, psi: torch.Tensor) -> torch.Tensor:
        """Rates ``phi(u*(psi))``, shape ``(..., *shape)``."""
        return self.activation(self.u_star(psi))

    def tangent(self, psi: torch.Tensor, axis: int = 0) -> torch.Tensor:
        """``d u*(psi) / d psi_axis``, shape ``(..., *shape)``."""
        return -self.geometry.derivative(self.u_star(psi), axis)

    def tangents(self, psi: torch.Tensor) -> torch.Tensor:
        """All tangents stacked on a last axis: ``(..., *shape, dim)``."""
        return torch.stack([self.tangent(psi, a) for a in range(self.geometry.dim)], dim=-1)

    # ------------------------------------------------------------------ distance
    def distance(self, u: torch.Tensor, refine: int = 4) -> ManifoldDistance:
        """Relative distance of potentials ``u`` to the manifold and the nearest point.

        .. math:: d(u) = \\min_\\psi \\|u - u^*(\\psi)\\| / \\|u^*\\|

        The overlap ``<u, u*(psi)>`` is a trigonometric polynomial in ``psi``: it is evaluated on a
        4x oversampled grid by one inverse FFT (cross-correlation), then refined by Newton steps.

        Parameters
        ----------
        u : torch.Tensor, shape (..., *shape)
            Potentials.
        refine : int
            Number of Newton refinement steps.
        """
        g = self.geometry
        u = g.check_state(torch.as_tensor(u), "u").to(torch.float64)
        batch = u.shape[: u.dim() - g.dim]
        q = g.dft(u) * torch.conj(g.dft(self.u0))  # overlap spectrum
        # grid search on an oversampled lattice
        factor = 4
        big = tuple(factor * n for n in g.shape)
        qpad = _pad_half_spectrum(q, g.shape, big)
        corr = torch.fft.irfftn(qpad, s=big, dim=g.axes, norm="forward") * g.size
        flat = corr.flatten(-g.dim)
        idx = flat.argmax(-1)
        psi = []
        rem = idx
        for n in reversed(big):
            psi.append(2 * math.pi * (rem % n).to(torch.float64) / n)
            rem = rem // n
        psi = torch.stack(list(reversed(psi)), dim=-1)  # (..., dim)
        k = g.wavevectors()  # (dim, *spec)
        m = g.multiplicity()
        kf = k.flatten(1)  # (dim, K)
        qf = (q * m).flatten(-g.dim)  # (..., K)
        for _ in range(refine):
            ph = torch.exp(1j * (psi @ kf))  # (..., K)
            t = qf * ph
            grad = g.size * -(t.imag @ kf.T)  # d/dpsi Re(q e^{ik psi}) = -k Im(...)
            hess = -g.size * torch.einsum("...k,ak,bk->...ab", t.real, kf, kf)
            # Newton ascent on the overlap, with a trust region of one grid cell
            step = torch.linalg.solve(
                hess - 1e-12 * torch.eye(g.dim, dtype=hess.dtype), grad.unsqueeze(-1)
            ).squeeze(-1)
            cell = 2 * math.pi / (factor * max(g.shape))
            step = torch.clamp(step, -cell, cell)
            psi = psi - step
        psi = torch.remainder(psi, 2 * math.pi)
        dist = (u - self.u_star(psi)).flatten(-g.dim).norm(dim=-1) / self.norm
        return ManifoldDistance(dist.reshape(batch), psi)

    def split(self, u: torch.Tensor, psi_ref: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Split ``u - u*(psi_ref)`` into tangent and normal parts (relative norms).

        Returns
        -------
        tangent, normal : Tensors ``(...)``: norms of the projection of the displacement on the
            tangent space at ``psi_ref`` and of the remainder, each divided by ``||u*||``.
        """
        delta = (u - self.u_star(psi_ref)).flatten(-self.geometry.dim)
        t = self.tangents(psi_ref).flatten(-self.geometry.dim - 1, -2)  # (..., N, dim)
        normal = oblique_projection(delta, t, t)
        return (delta - normal).norm(dim=-1) / self.norm, normal.norm(dim=-1) / self.norm

    # ------------------------------------------------------------------ Fourier construction
    def fourier_construction(self, bias: float = 0.0, reg: float = 1e-12) -> torch.Tensor:
        """Circulant spectrum ``w_k`` making every ``u*(psi)`` a fixed point with bias ``b``.

        .. math:: w_k = \\frac{\\mathrm{Re}(\\hat u^*_k \\bar z^*_k)
                  - b\\,\\delta_{k0}\\,\\bar z^*_0}
                  {|z^*_k|^2 + \\epsilon \\max_k |z^*_k|^2}

        (mode-wise division of the target potential's spectrum by the target rate spectrum,
        regularised), so that ``u* = W r* + b`` up to the regularisation.

        Returns
        -------
        Tensor ``spectral_shape``.
        """
        g = self.geometry
        uh = g.dft(self.u0)
        zh = g.dft(self.activation(self.u0))
        num = (uh * torch.conj(zh)).real
        num = num - bias * (g.wavevectors().abs().sum(0) == 0) * zh.real
        den = zh.real**2 + zh.imag**2
        return num / (den + reg * den.max())


def _pad_half_spectrum(q: torch.Tensor, shape: tuple[int, ...], big: tuple[int, ...]):
    """Zero-pad a half spectrum of a signal of ``shape`` into the half spectrum of ``big``."""
    dim = len(shape)
    out_shape = q.shape[: q.dim() - dim] + big[:-1] + (big[-1] // 2 + 1,)
    out = torch.zeros(out_shape, dtype=q.dtype)
    # non-last axes: positive frequencies at the start, negative at the end
    index_pairs = []
    for n, nb in zip(shape[:-1], big[:-1], strict=True):
        pos = n // 2 + 1 if n % 2 else n // 2
        index_pairs.append(((slice(0, pos), slice(0, pos)),
                            (slice(pos, n), slice(nb - (n - pos), nb))))
    last = shape[-1] // 2 + 1
    if not index_pairs:
        out[..., :last] = q
        return out
    for combo in itertools.product(*index_pairs):
        src = tuple(c[0] for c in combo) + (slice(0, last),)
        dst = tuple(c[1] for c in combo) + (slice(0, last),)
        out[(Ellipsis, *dst)] = q[(Ellipsis, *src)]
    return out


PROBES = ("white", "smooth", "odd", "amplitude")


def _reflect(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``x(-theta)`` on the neuron lattice (index ``j -> -j`` on every axis)."""
    axes = tuple(range(-dim, 0))
    return torch.roll(torch.flip(x, axes), (1,) * dim, axes)


def oblique_projection(delta: torch.Tensor, tangents: torch.Tensor, left: torch.Tensor):
    """``delta - T (L^T T)^{-1} L^T delta`` for flat ``delta (B, N)``, ``T, L (B, N, dim)``.

    With ``L = D T`` this removes the part of ``delta`` that the dynamics turns into a shift
    along the manifold; with ``L = T`` it is the orthogonal projection off the tangent space.

    The inner products are elementwise sums and the ``dim x dim`` system is solved in closed
    form, so the result does not depend on where the arrays lie in memory (the BLAS and LAPACK
    kernels of small products and solves round differently with the arrays' alignment, which
    made two runs with one seed differ in the last bits).
    """
    dim = tangents.shape[-1]
    gram = (left.unsqueeze(-1) * tangents.unsqueeze(-2)).sum(-3)  # (B, dim, dim)
    rhs = (left * delta.unsqueeze(-1)).sum(-2)  # (B, dim)
    coef = _solve_small(gram, rhs) if dim <= 2 else torch.linalg.solve(gram, rhs)
    return delta - (tangents * coef.unsqueeze(-2)).sum(-1)


def _solve_small(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a^{-1} b`` for ``a (..., d, d)``, ``b (..., d)`` with ``d`` 1 or 2, in closed form."""
    if a.shape[-1] == 1:
        return b / a[..., 0]
    det = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    x0 = (a[..., 1, 1] * b[..., 0] - a[..., 0, 1] * b[..., 1]) / det
    x1 = (a[..., 0, 0] * b[..., 1] - a[..., 1, 0] * b[..., 0]) / det
    return torch.stack([x0, x1], dim=-1)


def probe_directions(manifold: TargetManifold, psi: torch.Tensor, kind: str,
                     generator: torch.Generator, bandwidth: int = 4) -> torch.Tensor:
    """Unit probe directions at ``u*(psi)``, ``D``-orthogonal to the tangents.

    Kinds: ``white`` (Gaussian on every neuron), ``smooth`` (random modes up to
    ``bandwidth``), ``odd`` (the part of white noise odd about the bump centre, which the power
    spectrum alone cannot restore faster than the leak), ``amplitude`` (bump height, up or down).

    Parameters
    ----------
    manifold : TargetManifold
        The target manifold.
    psi : torch.Tensor, shape (B, dim)
        Manifold coordinates.
    kind : str
        One of :data:`PROBES`.
    generator : torch.Generator
        Source of randomness.

    Returns
    -------
    Tensor ``(B, *shape)`` with unit Euclidean norm.
    """
    g = manifold.geometry
    us = manifold.u_star(psi)
    b = us.shape[0]
    if kind in ("white", "odd"):
        d = torch.randn(us.shape, generator=generator, dtype=us.dtype)
        if kind == "odd":
            centred = g.shift(d, -psi)
            d = g.shift(0.5 * (centred - _reflect(centred, g.dim)), psi)
    elif kind == "smooth":
        k = g.wavevectors().abs().amax(0)
        band = (k <= bandwidth)
        spec = torch.complex(torch.randn((b,) + g.spectral_shape, generator=generator,
                                         dtype=us.dtype),
                             torch.randn((b,) + g.spectral_shape, generator=generator,
                                         dtype=us.dtype))
        d = g.idft(spec * band)
    elif kind == "amplitude":
        sign = torch.where(torch.rand(b, generator=generator, dtype=us.dtype) < 0.5, -1.0, 1.0)
        d = sign.reshape((b,) + (1,) * g.dim) * (
            us - us.flatten(1).mean(-1).reshape((b,) + (1,) * g.dim))
    else:
        raise BadInput(f"kind={kind!r}: unknown probe; choose one of {PROBES}", param="kind")
    t = manifold.tangents(psi).flatten(1, -2)
    left = manifold.activation.derivative(us).flatten(1).unsqueeze(-1) * t
    flat = oblique_projection(d.flatten(1), t, left)
    flat = flat / flat.norm(dim=-1, keepdim=True)
    return flat.reshape(us.shape)


def nearest_point(manifold: TargetManifold, u: torch.Tensor) -> torch.Tensor:
    """``psi_hat = argmax_psi <phi(u), u*(psi)>``: the minimiser of the Bregman divergence.

    Returns
    -------
    Tensor ``(..., dim)``.
    """
    # the overlap of the rates with the potential bump is what manifold.distance maximises
    return manifold.distance(manifold.activation(u)).psi


def bregman(manifold: TargetManifold, u: torch.Tensor, psi: torch.Tensor) -> torch.Tensor:
    """``B(u, psi) = sum_i G(r_i) - G(r*_i) - u*_i (r_i - r*_i)`` (>= 0), shape ``(...)``."""
    act, g = manifold.activation, manifold.geometry
    us = manifold.u_star(psi)
    r, rs = act(u), act(us)
    val = act.integral(u) - act.integral(us) - us * (r - rs)
    return val.flatten(-g.dim).sum(-1)
