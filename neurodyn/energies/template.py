"""A learned-template energy: any bump shape as a stable manifold with a learned normal rate.

.. math:: F(r) = c_0 \\sum_i G(r_i) - \\max_\\psi \\langle r, w(\\psi) \\rangle + b \\sum_i r_i,
          \\qquad w(\\psi) = w(\\theta - \\psi),

with ``G`` the leak integral (``G' = phi^{-1}``), ``w`` a learned template (band-limited: ``K``
harmonics per axis, the family's capacity) and ``w(psi)`` its exact spectral translates. It is the
closed form of :mod:`neurodyn.energies.seal` (step 4), ``F = (kappa - 1) sum G + kappa F_1`` with
``F_1 = -max_psi <r, u*(psi)>``, with the two things that were fixed there learned instead:
the leak coefficient ``c0`` (target ``kappa - 1``) and the template (target ``kappa u*``).

Derivation (dynamics ``tau du/dt = -u - grad F(r) + b``; ``psi_hat(r)`` the maximiser of the
overlap ``f(psi) = <r, w(psi)>``, assumed unique; ``w' = dw(psi)/dpsi``,
``A = d^2 f / dpsi^2 < 0`` at ``psi_hat``):

1. *Gradient (envelope theorem).* ``d/dr max_psi <r, w(psi)> = w(psi_hat)`` because
   ``df/dpsi = 0`` at the maximiser, so ``grad F = c0 u - w(psi_hat) + b`` and the field is
   ``tau du/dt = -(1 + c0) (u - w(psi_hat) / (1 + c0))`` at *every* state, not only near the
   manifold: the state relaxes straight towards the translate of the template it overlaps most.
2. *Fixed points.* ``u = v(psi) := w(psi) / (1 + c0)`` is a fixed point iff ``psi`` maximises
   ``<phi(v(psi)), w(psi')>`` over ``psi'``. The derivative at ``psi' = psi`` is
   ``-<phi(v), v'> (1 + c0) = -(1 + c0) sum_i d Phi(v(theta_i)) / dtheta`` (``Phi' = phi``),
   the lattice sum of the derivative of a smooth periodic function: zero up to aliasing (its
   Fourier coefficients at multiples of ``N``), for every template. So every translate of
   ``v`` is a fixed point, the fitted network's manifold is ``{v(psi)}``, and a fit makes ``v``
   the requested bump ``u*``.
3. *Neutral tangent.* Differentiating ``grad_r psi_hat`` from ``df/dpsi = 0`` gives
   ``dpsi_hat = -A^{-1} w'^T dr``, so the Hessian is
   ``H = c0 D^{-1} + w' A^{-1} w'^T`` (``D = diag(phi'(u))``; rank ``dim`` beyond the diagonal,
   symmetric). ``J = -(I + H D)/tau`` maps the tangent ``e = v'`` to
   ``-(1 + c0) (e + w' A^{-1} <w', D e>)/tau``; with ``w' = (1 + c0) e`` and
   ``A = <r, w''> = -<D e, w'>`` (summation by parts, exact up to aliasing) this is 0.
4. *Normal spectrum.* On the ``D``-orthogonal complement of the tangents (``w'^T D d = 0``)
   ``J d = -(1 + c0) d / tau`` exactly: every normal eigenvalue is ``-(1 + c0)/tau``, whatever
   the template's shape. The shape of the bump and the normal rate are independent parameters;
   the learned template decides *where* the manifold is, ``c0`` how fast it attracts.
5. *Energy descent.* ``F`` is a maximum of functions linear in ``r`` plus a convex pointwise
   term, so it is continuous, and differentiable wherever the maximiser is unique; along the
   flow ``dE/dt = -tau sum_i phi'(u_i) udot_i^2 <= 0`` as for every energy of the library
   (:mod:`neurodyn.energies.base`), and the energy audit checks it on simulated runs. With
   ``w = kappa u*``, ``c0 = kappa - 1`` the rise over the manifold is exactly ``kappa B``
   (the leak's Bregman divergence, :func:`neurodyn.manifold.bregman`).

Computation: the overlap is a trigonometric polynomial in ``psi``; it is evaluated on a
4x zero-padded grid by one inverse FFT, its maximum refined by Newton steps (as
:meth:`neurodyn.manifold.TargetManifold.distance`), all without gradients. One more Newton step
is taken differentiably, which leaves the value unchanged at the maximiser but carries the
implicit-function derivative of ``psi_hat`` with respect to the rates and the template, so
gradients in the template's coefficients (the fit, :mod:`neurodyn.fitting.template`) and
Hessian-vector products (closed form of step 3) are exact. The implementation uses tensor
operations only (no data-dependent branches on the template), so :mod:`torch.func` transforms
apply.
"""

from __future__ import annotations

import math

import torch

from _runkit import BadInput

from ..activation import Activation, make_activation
from ..geometry.populations import Geometry
from .base import InteractionEnergy

__all__ = ["TemplateEnergy", "template_basis"]


def template_basis(geometry: Geometry, harmonics: int) -> torch.Tensor:
    """Orthonormal real basis of the templates with ``max_a |k_a| <= harmonics``.

    One constant, then ``cos(k . theta)`` and ``sin(k . theta)`` for every wave vector ``k`` of
    the half spectrum in the band (Nyquist modes left out, their translates are not real).

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    harmonics : int
        ``K >= 1``, at most ``min(shape) // 2 - 1`` for an even size.

    Returns
    -------
    torch.Tensor, shape (P, *geometry.shape)
        ``P = 2 K + 1`` on a ring, ``(2 K + 1)^2`` on a torus.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring, Torus
    >>> b = template_basis(Ring(16), 3)
    >>> gram = b.flatten(1) @ b.flatten(1).T
    >>> b.shape, bool(torch.allclose(gram, torch.eye(7, dtype=torch.float64)))
    (torch.Size([7, 16]), True)
    >>> template_basis(Torus(8, 8), 2).shape
    torch.Size([25, 8, 8])
    """
    top = max_harmonics(geometry)
    if isinstance(harmonics, bool) or not isinstance(harmonics, int) \
            or not 1 <= harmonics <= top:
        raise BadInput(f"harmonics={harmonics!r}: must be an integer in [1, {top}]",
                       param="harmonics")
    x = geometry.coords()  # (dim, *shape)
    k = geometry.wavevectors().flatten(1).T  # (K, dim)
    out = [torch.ones(geometry.shape, dtype=torch.float64)]
    for kv in k.tolist():
        if max(abs(v) for v in kv) > harmonics or not _first_of_pair(kv):
            continue
        phase = sum(kv[a] * x[a] for a in range(geometry.dim))
        out += [torch.cos(phase), torch.sin(phase)]
    basis = torch.stack(out)
    return basis / basis.flatten(1).norm(dim=-1).reshape((-1,) + (1,) * geometry.dim)


def _first_of_pair(kv: list[float]) -> bool:
    """``k`` and ``-k`` give the same real functions: keep the one whose first nonzero entry
    (from the last axis) is positive, and not ``k = 0``."""
    for v in reversed(kv):
        if v != 0:
            return v > 0
    return False


def max_harmonics(geometry: Geometry) -> int:
    """The largest ``K`` of :func:`template_basis` (no Nyquist mode on any axis)."""
    return min((n - 1) // 2 for n in geometry.shape)


class TemplateEnergy(InteractionEnergy):
    """``F = c0 sum_i G(r_i) - max_psi <r, w(psi)> + b sum_i r_i`` with a learned template.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    activation : Activation
        The network's rate function.
    template : torch.Tensor or None, shape (*geometry.shape)
        The template ``w`` at ``psi = 0`` (``None``: zeros, to be fitted or loaded).
    leak : float
        ``c0``, the coefficient of the leak integral.
    bias : float
        The network's uniform input ``b`` (cancelled, so it does not move the fixed points).
    harmonics : int
        The capacity the template is fitted with (``max_a |k_a|``), recorded in the config.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> from neurodyn.activation import Logistic
    >>> g, act = Ring(64), Logistic()
    >>> u0 = -2 + 4 * torch.exp(2 * (torch.cos(g.coords()[0]) - 1))  # a von Mises bump
    >>> e = TemplateEnergy(g, act, 3.0 * u0, leak=2.0)                # kappa = 3
    >>> res = -u0 - e.grad(act(u0))                                     # fixed point
    >>> float(res.abs().max()) < 1e-9
    True
    >>> d = torch.randn(64, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> e_ = -g.derivative(u0); D = act.derivative(u0)                 # tangent, metric
    >>> d = d - e_ * (D * e_ * d).sum() / (D * e_ * e_).sum()          # D-orthogonal to e
    >>> jd = -d - e.hvp(act(u0), D * d)                                 # tau J d
    >>> float((jd + 3.0 * d).abs().max()) < 1e-8
    True
    """

    family = "template"

    def __init__(self, geometry: Geometry, activation: Activation,
                 template: torch.Tensor | None = None, leak: float = 0.0, bias: float = 0.0,
                 harmonics: int = 1):
        super().__init__(geometry)
        self.activation = activation
        w = torch.zeros(geometry.shape, dtype=torch.float64) if template is None else \
            torch.as_tensor(template, dtype=torch.float64).clone()
        if tuple(w.shape) != geometry.shape or not torch.isfinite(w).all():
            raise BadInput(f"template: must be finite with shape {geometry.shape}",
                           param="template")
        if not math.isfinite(float(leak)) or float(leak) <= -1:
            raise BadInput(f"leak={leak!r}: must be a finite number > -1", param="leak")
        self.harmonics = int(harmonics)
        self.register_buffer("template", w)
        self.register_buffer("leak", torch.as_tensor(float(leak), dtype=torch.float64))
        self.register_buffer("bias", torch.as_tensor(float(bias), dtype=torch.float64))

    # ------------------------------------------------------------------ the maximiser
    def _overlap(self, r: torch.Tensor, psi: torch.Tensor):
        """Value ``(...)``, gradient ``(..., dim)`` and Hessian ``(..., dim, dim)`` in ``psi``
        of ``<r, w(psi)>``."""
        g = self.geometry
        zr, zw = g.dft(r), g.dft(self.template.to(r.dtype))
        m = g.multiplicity(r.dtype, r.device)
        # q = z_r conj(z_w) m and t = q exp(i k.psi) in real arithmetic (fast under torch.func)
        qr = ((zr.real * zw.real + zr.imag * zw.imag) * m).flatten(-g.dim)
        qi = ((zr.imag * zw.real - zr.real * zw.imag) * m).flatten(-g.dim)
        kf = g.wavevectors(r.dtype, r.device).flatten(1)  # (dim, K)
        phase = psi @ kf
        c, s = torch.cos(phase), torch.sin(phase)
        tr, ti = qr * c - qi * s, qr * s + qi * c
        val = g.size * tr.sum(-1)
        grad = -g.size * (ti @ kf.T)
        hess = -g.size * ((tr.unsqueeze(-2) * kf) @ kf.T)
        return val, grad, hess

    def best_phase(self, r: torch.Tensor) -> torch.Tensor:
        """``psi_hat = argmax_psi <r, w(psi)>``, shape ``(..., dim)``, differentiable (one
        Newton step taken with gradients from the maximiser found without them)."""
        g = self.geometry
        with torch.no_grad():
            psi = _grid_argmax(g, r.detach(), self.template.detach().to(r.dtype))
            for _ in range(4):
                _, grad, hess = self._overlap(r.detach(), psi)
                step = _solve(hess, grad)
                cell = 2 * math.pi / (4 * max(g.shape))
                psi = psi - torch.clamp(step, -cell, cell)
        _, grad, hess = self._overlap(r, psi)
        return psi - _solve(hess, grad)

    # ------------------------------------------------------------------ interface
    def forward(self, r):
        g = self.geometry
        u = self.activation.inverse(r)
        psi = self.best_phase(r)
        val, _, _ = self._overlap(r, psi)
        leak = self.activation.integral(u).flatten(-g.dim).sum(-1)
        return self.leak * leak - val + self.bias * r.flatten(-g.dim).sum(-1)

    def grad(self, r):
        psi = self.best_phase(r)
        return self.leak * self.activation.inverse(r) - self.geometry.shift(
            self.template.to(r.dtype), psi) + self.bias

    def hvp(self, r, v):
        g = self.geometry
        v = v.expand_as(r) if v.shape != r.shape else v
        psi = self.best_phase(r)
        _, _, hess = self._overlap(r, psi)
        w = g.shift(self.template.to(r.dtype), psi)
        tang = torch.stack([-g.derivative(w, a) for a in range(g.dim)], -1)  # (..., *shape, dim)
        proj = (tang * v.unsqueeze(-1)).flatten(-g.dim - 1, -2).sum(-2)    # (..., dim)
        coef = _solve(hess, proj)
        diag = v / self.activation.derivative(self.activation.inverse(r))
        return self.leak * diag + (tang * coef.reshape(coef.shape[:-1] + (1,) * g.dim
                                                       + (g.dim,))).sum(-1)

    def config(self):
        return {"family": self.family, "activation": self.activation.config(),
                "bias": float(self.bias), "harmonics": self.harmonics}

    @classmethod
    def from_config(cls, config: dict, geometry: Geometry) -> TemplateEnergy:
        """Rebuild from :meth:`config` (without ``family``); load the state dict afterwards."""
        config = dict(config)
        act = make_activation(config.pop("activation", None))
        allowed = {"bias", "harmonics"}
        if set(config) - allowed:
            raise BadInput(f"template energy: unknown keys {sorted(set(config) - allowed)}; "
                           f"allowed: {sorted(allowed)}")
        return cls(geometry, act, None, **config)


def _solve(hess: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """``hess^{-1} vec`` for batches of ``dim x dim`` matrices, regularised so that a zero
    template gives zero (not NaN)."""
    eye = torch.eye(hess.shape[-1], dtype=hess.dtype, device=hess.device)
    return torch.linalg.solve(hess - 1e-12 * eye, vec.unsqueeze(-1)).squeeze(-1)


def _grid_argmax(g: Geometry, r: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The grid maximiser of ``<r, w(psi)>`` on a 4x oversampled lattice, ``(..., dim)``."""
    from ..manifold import _pad_half_spectrum

    big = tuple(4 * n for n in g.shape)
    q = g.dft(r) * torch.conj(g.dft(w))
    corr = torch.fft.irfftn(_pad_half_spectrum(q, g.shape, big).to(r.device), s=big,
                            dim=g.axes, norm="forward")
    idx = corr.flatten(-g.dim).argmax(-1)
    psi = []
    for n in reversed(big):
        psi.append(2 * math.pi * (idx % n).to(r.dtype) / n)
        idx = idx // n
    return torch.stack(list(reversed(psi)), dim=-1)
