"""The analytic Jacobian of a template fit's residuals, and its normal equations by structure.

The template fit (:mod:`neurodyn.fitting.template`) takes Levenberg-Marquardt steps in
``theta = (c0, template coordinates)``, the coordinates in the orthonormal basis of
:func:`~neurodyn.energies.template.template_basis`. Its residuals are those of
:func:`neurodyn.fitting.core.fit`: the normal field ``tau J d + kappa d`` at probes ``d``, the
restoring field ``tau du/dt + kappa delta`` and the energy rise against ``kappa B`` on perturbed
states, each scaled as there.

Derivation. With ``S = w(psi_hat)`` the template's translate to the maximiser of its overlap
with the rates, each basis function ``b_j = f(k_j . theta)`` (``f`` a cosine or sine) has a
quarter-period partner ``q_j = f'(k_j . theta)``, translates
``b_j(psi) = cos(k_j . psi) b_j - sin(k_j . psi) q_j`` and derivatives
``d_a b_j(psi) = k_ja t_j``, ``t_j = q_j(psi) = cos(k_j . psi) q_j + sin(k_j . psi) b_j``.
Differentiating in ``theta_j`` (``A`` the overlap's Hessian in ``psi``, ``r`` the rates):

- the maximiser (from ``d<r, w(psi)>/dpsi = 0``): ``dpsi = A^{-1} k_j <r, t_j>``;
- restoring field ``-(1 + c0) u + S``: ``b_j(psi_hat) - sum_a d_a S dpsi_a``;
- energy ``c0 sum G(u) - <r, S>``: ``-<r, b_j(psi_hat)>`` (envelope theorem);
- normal field ``-(1 + c0) d + sum_a d_a S c_a``, ``c = A^{-1} p``, ``p_a = -<d_a S, D d>``:
  ``(k_j . c) t_j - sum_ab c_a d_ab S dpsi_b + sum_a d_a S dc_a`` with
  ``dc = A^{-1} (dp - dA c)``, ``dp_a = -k_ja <t_j, D d> + sum_b <d_ab S, D d> dpsi_b`` and
  ``dA_ab = -k_ja k_jb <r, b_j(psi_hat)> - sum_c <r, d_abc S> dpsi_c``;
- in ``c0``: ``-u``, ``sum G(u)`` and ``-d``.

So each sample's rows are ``J_s = [z_s | X_s diag(e_s) + U_s V_s^T]``: ``X_s`` the rotated basis
(``b_j(psi_hat)`` or ``t_j``, as columns), a diagonal ``e_s`` and a part of rank ``dim`` or
``2 dim`` (:class:`Block`). The translates of an orthonormal band-limited basis are orthonormal
(the spectral shift is orthogonal on the band, and Nyquist modes are left out), so
``X_s^T X_s`` is the identity (the ``t_j`` of the constant is zero), and the normal equations
``J^T J``, ``J^T r`` need only ``X_s^T`` applied to the ``2 + rank`` columns of ``z_s``,
``U_s`` and the residual, never the ``N x P`` rows themselves: about ``P N`` operations per
sample where the dense product costs ``P^2 N`` (on a 32 x 32 torus with 962 coordinates, a
fraction of a second against a minute and a half for forward-mode columns).
"""

from __future__ import annotations

from itertools import accumulate
from typing import NamedTuple

import torch

from ..energies.template import TemplateEnergy

__all__ = ["AnalyticNormal", "Block", "Rows", "basis_rows", "normal_equations",
           "residual_jacobian", "CHECK_TOL"]

#: largest relative disagreement of the analytic and forward-mode directional derivatives
CHECK_TOL = 1e-6

#: state entries times derivative orders in one block of samples
_BLOCK_ELEMENTS = 2**22


class Rows(NamedTuple):
    """A template basis as its rows ``b (P, N)``, their quarter-period partners ``q (P, N)``,
    wave vectors ``k (P, dim)`` and ``qq = |q_j|^2 (P,)`` (0 for the constant, else 1)."""

    b: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    qq: torch.Tensor


def basis_rows(geometry, basis: torch.Tensor) -> Rows:
    """:class:`Rows` of a basis of single-wave-vector sinusoids.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    basis : torch.Tensor, shape (P, *geometry.shape)
        Rows ``f(k_j . theta)``, as :func:`~neurodyn.energies.template.template_basis` gives.

    Returns
    -------
    Rows

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> from neurodyn.energies.template import template_basis
    >>> rows = basis_rows(Ring(16), template_basis(Ring(16), 2))
    >>> rows.k.flatten().tolist(), rows.qq.round().tolist()
    ([0.0, 1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 1.0, 1.0, 1.0])
    """
    g, p = geometry, basis.shape[0]
    kf = g.wavevectors(basis.dtype, basis.device).flatten(1)  # (dim, K)
    k = kf[:, g.dft(basis).flatten(1).abs().argmax(-1)].T  # (P, dim)
    axis = k.abs().argmax(-1)
    deriv = torch.stack([g.derivative(basis, a).flatten(1) for a in range(g.dim)])
    kk = k.gather(1, axis.unsqueeze(1)).squeeze(1)
    q = deriv[axis, torch.arange(p, device=basis.device)] / torch.where(kk == 0, 1.0, kk)[:, None]
    q = torch.where(kk[:, None] == 0, 0.0, q)
    return Rows(basis.flatten(1), q, k, (q * q).sum(-1))


class Block(NamedTuple):
    """Rows of one term's Jacobian for ``c`` samples of ``N`` residuals each:
    ``J_s = scale_s [z_s | X_s diag(e_s) + U_s V_s^T]`` (``N x (1 + P)``), ``X_s`` the basis
    rotated to ``psi_s`` (``kind`` ``"b"``: the translates ``b_j(psi)``; ``"t"``: ``t_j``)."""

    term: str
    start: int
    kind: str
    scale: torch.Tensor  # (c,)
    z: torch.Tensor      # (c, N)
    e: torch.Tensor      # (c, P)
    u: torch.Tensor      # (c, N, m)
    v: torch.Tensor      # (c, P, m)
    cs: torch.Tensor     # (c, P): cos(k_j . psi_s)
    sn: torch.Tensor     # (c, P)

    def rotated_t(self, rows: Rows, y: torch.Tensor) -> torch.Tensor:
        """``X_s^T y_s`` for ``y (c, N, m')``: ``(c, P, m')``."""
        yb, yq = rows.b @ y, rows.q @ y
        cs, sn = self.cs.unsqueeze(-1), self.sn.unsqueeze(-1)
        return cs * yb - sn * yq if self.kind == "b" else cs * yq + sn * yb

    def rotated(self, rows: Rows, x: torch.Tensor) -> torch.Tensor:
        """``X_s x_s`` for ``x (c, P)``: ``(c, N)``."""
        if self.kind == "b":
            return (self.cs * x) @ rows.b - (self.sn * x) @ rows.q
        return (self.cs * x) @ rows.q + (self.sn * x) @ rows.b

    def dense(self, rows: Rows) -> torch.Tensor:
        """The rows themselves, ``(c N, 1 + P)`` (for checks; the fit never forms them)."""
        c, p = self.e.shape
        eye = torch.eye(p, dtype=self.e.dtype, device=self.e.device)
        xd = torch.stack([self.rotated(rows, self.e * eye[j]) for j in range(p)], -1)
        jac = torch.cat([self.z.unsqueeze(-1), xd + self.u @ self.v.transpose(1, 2)], -1)
        return (jac * self.scale.reshape(-1, 1, 1)).flatten(0, 1)


def _turn(rows: Rows, psi: torch.Tensor, x: torch.Tensor):
    """``<x, b_j(psi)>``, ``<x, t_j>`` for ``x (c, N)`` at ``psi (c, dim)``, and the
    ``(cos, sin)`` of ``k_j . psi``, each ``(c, P)``."""
    ph = psi @ rows.k.T
    cs, sn = torch.cos(ph), torch.sin(ph)
    xb, xq = x @ rows.b.T, x @ rows.q.T
    return cs * xb - sn * xq, cs * xq + sn * xb, (cs, sn)


def _derivatives(g, s: torch.Tensor, order: int) -> list[torch.Tensor]:
    """Spectral derivatives of ``s (c, *shape)`` up to ``order``: ``(dim,)*m + (c, N)``."""
    out, cur = [], s
    for _ in range(order):
        cur = torch.stack([g.derivative(cur, a) for a in range(g.dim)])
        out.append(cur.flatten(-g.dim))
    return out


def _phase_terms(et: TemplateEnergy, r: torch.Tensor):
    """Maximiser ``psi (c, dim)``, overlap Hessian ``A (c, dim, dim)`` and translate
    ``S (c, *shape)`` of the template of ``et`` for rates ``r``."""
    psi = et.best_phase(r)
    _, _, hess = et._overlap(r, psi)
    return psi, hess, et.geometry.shift(et.template, psi)


def _linear_block(et: TemplateEnergy, rows: Rows, us, dirs, scale, start: int) -> Block:
    """The normal-field residual's rows at ``u*(psi_s)`` along probes ``dirs``."""
    g, act = et.geometry, et.activation
    r = act(us)
    v = (act.derivative(us) * dirs).flatten(1)
    psi, hess, s = _phase_terms(et, r)
    d1, d2, d3 = _derivatives(g, s, 3)
    rf, k = r.flatten(1), rows.k
    coef = torch.linalg.solve(hess, -torch.einsum("asn,sn->sa", d1, v))
    r_b, r_t, (cs, sn) = _turn(rows, psi, rf)
    _, v_t, _ = _turn(rows, psi, v)
    hinv = torch.linalg.inv(hess).unsqueeze(1)  # (c, 1, dim, dim)
    dpsi = (hinv @ (k * r_t.unsqueeze(-1)).unsqueeze(-1)).squeeze(-1)  # (c, P, dim)
    d_hess = -(k.unsqueeze(-1) * k.unsqueeze(-2)) * r_b[..., None, None] - torch.einsum(
        "abcsn,sn,spc->spab", d3, rf, dpsi)
    d_proj = -k * v_t.unsqueeze(-1) + torch.einsum("absn,sn,spb->spa", d2, v, dpsi)
    d_coef = (hinv @ (d_proj - torch.einsum("spab,sb->spa", d_hess, coef)).unsqueeze(-1)
              ).squeeze(-1)
    u = torch.cat([-torch.einsum("sa,absn->snb", coef, d2), d1.permute(1, 2, 0)], -1)
    return Block("linear", start, "t", scale, -dirs.flatten(1), coef @ k.T, u,
                 torch.cat([dpsi, d_coef], -1), cs, sn)


def _field_block(et: TemplateEnergy, rows: Rows, u, scale, start: int) -> Block:
    """The restoring-field residual's rows at perturbed states ``u``."""
    r = et.activation(u)
    psi, hess, s = _phase_terms(et, r)
    (d1,) = _derivatives(et.geometry, s, 1)
    _, r_t, (cs, sn) = _turn(rows, psi, r.flatten(1))
    dpsi = torch.linalg.solve(hess.unsqueeze(1), (rows.k * r_t.unsqueeze(-1)).unsqueeze(-1)
                              ).squeeze(-1)  # (c, P, dim)
    return Block("field", start, "b", scale, -u.flatten(1), torch.ones_like(cs),
                 -d1.permute(1, 2, 0), dpsi, cs, sn)


def _energy_rows(et: TemplateEnergy, rows: Rows, u, u0) -> torch.Tensor:
    """``d F(phi(u)) / d theta`` at states ``u (c, *shape)`` minus that at ``u0``,
    ``(c, 1 + P)`` (envelope theorem: the maximiser does not move the value)."""
    act = et.activation
    uu = torch.cat([u0.unsqueeze(0), u])
    r = act(uu)
    r_b, _, _ = _turn(rows, et.best_phase(r), r.flatten(1))
    jac = torch.cat([act.integral(uu).flatten(1).sum(-1, keepdim=True), -r_b], 1)
    return jac[1:] - jac[:1]


def residual_jacobian(energy: TemplateEnergy, rows: Rows, theta: torch.Tensor, target,
                      kappa: float, batch: dict):
    """The Jacobian of the fit's residuals in ``theta``, by blocks of samples.

    Parameters
    ----------
    energy : TemplateEnergy
        The fitted energy (its geometry, activation and capacity; the template is ``theta``'s).
    rows : Rows
        The template basis, ``P`` rows.
    theta : torch.Tensor, shape (1 + P,)
        Leak coefficient and template coordinates.
    target : TargetManifold
        The target manifold.
    kappa : float
        The requested normal rate.
    batch : dict
        One sampled batch of the fit (``psi``, ``dirs``, ``u``, ``us_near``, ``bregman``; the
        perturbed states ``u`` may be fewer than the probes ``dirs``).

    Yields
    ------
    Block or (str, int, torch.Tensor)
        The normal and restoring fields' rows as :class:`Block` (residual rows from
        ``start``), then ``("energy", 0, rows (count, 1 + P))``.
    """
    g = energy.geometry
    et = TemplateEnergy(g, energy.activation, (theta[1:] @ rows.b).reshape(g.shape),
                        harmonics=energy.harmonics).to(theta.device)
    dirs, u = batch["dirs"], batch["u"]
    count = dirs.shape[0]
    per = max(1, _BLOCK_ELEMENTS // (g.size * (1 + g.dim) ** 3 + rows.b.shape[0] * 8))
    delta = (u - batch["us_near"]).flatten(1).norm(dim=-1)
    for i in range(0, count, per):
        sl = slice(i, i + per)
        lin = torch.full((len(dirs[sl]),), 1 / (kappa * count**0.5), dtype=u.dtype,
                         device=u.device)
        yield _linear_block(et, rows, target.u_star(batch["psi"][sl]), dirs[sl], lin,
                            i * g.size)
    for i in range(0, u.shape[0], per):  # (as many as the probes, or fewer: trimmed)
        sl = slice(i, i + per)
        yield _field_block(et, rows, u[sl], 1 / (kappa * delta[sl] * count**0.5), i * g.size)
    scale = 1 / (kappa * batch["bregman"] * count**0.5)
    yield "energy", 0, _energy_rows(et, rows, u, target.u0) * scale.unsqueeze(-1)


def normal_equations(blocks, rows: Rows, weights: dict, sizes: dict, r0: torch.Tensor,
                     probe: torch.Tensor | None = None):
    """``J^T J``, ``J^T r0`` (and ``J probe``) of the weighted residuals from their blocks.

    Parameters
    ----------
    blocks : iterable
        What :func:`residual_jacobian` yields.
    rows : Rows
        The template basis.
    weights : dict
        Weight of each term; ``r0`` holds the terms in this order, each times its weight's root.
    sizes : dict
        Residual rows of each term.
    r0 : torch.Tensor, shape (M,)
        The weighted residuals.
    probe : torch.Tensor or None, shape (1 + P,)
        A direction in ``theta`` whose image ``J probe`` is returned too.

    Returns
    -------
    (torch.Tensor, torch.Tensor, torch.Tensor or None)
        ``(1 + P, 1 + P)``, ``(1 + P,)`` and ``(M,)``.
    """
    starts = dict(zip(weights, accumulate([0] + [sizes[k] for k in weights]), strict=False))
    n = rows.b.shape[0] + 1
    a = torch.zeros(n, n, dtype=r0.dtype, device=r0.device)
    grad = torch.zeros(n, dtype=r0.dtype, device=r0.device)
    jv = None if probe is None else torch.zeros_like(r0)
    for blk in blocks:
        if not isinstance(blk, Block):
            term, _, jac = blk
            jac = weights[term] ** 0.5 * jac
            at = slice(starts[term], starts[term] + jac.shape[0])
            a, grad = a + jac.T @ jac, grad + jac.T @ r0[at]
            if jv is not None:
                jv[at] = jac @ probe
            continue
        c, size = blk.z.shape
        at = slice(starts[blk.term] + blk.start, starts[blk.term] + blk.start + c * size)
        _block_normal(blk, rows, weights[blk.term] ** 0.5 * blk.scale,
                      r0[at].reshape(c, size), a, grad)
        if jv is not None:
            jv[at] = _block_apply(blk, rows, weights[blk.term] ** 0.5 * blk.scale, probe)
    return a, grad, jv


def _block_normal(blk: Block, rows: Rows, sigma, res, a, grad) -> None:
    """Add one block's ``J^T J`` and ``J^T res`` to ``a`` and ``grad`` (in place)."""
    y = torch.cat([blk.z.unsqueeze(-1), blk.u, res.unsqueeze(-1)], -1)  # (c, N, m + 2)
    xy = blk.rotated_t(rows, y)
    xz, xu, xr = xy[..., 0], xy[..., 1:-1], xy[..., -1]
    uy = blk.u.transpose(1, 2) @ y  # (c, m, m + 2)
    s2 = (sigma**2).reshape(-1, 1, 1)
    mask = torch.ones_like(rows.qq) if blk.kind == "b" else rows.qq
    cross = torch.einsum("spm,sqm->pq", s2 * blk.e.unsqueeze(-1) * xu, blk.v)
    low = torch.einsum("spm,smn,sqn->pq", s2 * blk.v, uy[..., 1:-1], blk.v)
    a[1:, 1:] += torch.diag(((sigma**2).unsqueeze(-1) * blk.e**2).sum(0) * mask) \
        + cross + cross.T + low
    a0 = (s2[..., 0] * (blk.e * xz + (blk.v @ uy[..., 0].unsqueeze(-1)).squeeze(-1))).sum(0)
    a[0, 1:] += a0
    a[1:, 0] += a0
    a[0, 0] += ((sigma**2) * (blk.z**2).sum(-1)).sum()
    gw = blk.e * xr + (blk.v @ uy[..., -1].unsqueeze(-1)).squeeze(-1)
    grad[1:] += (sigma.unsqueeze(-1) * gw).sum(0)
    grad[0] += (sigma * (blk.z * res).sum(-1)).sum()


def _block_apply(blk: Block, rows: Rows, sigma, x: torch.Tensor) -> torch.Tensor:
    """``J x`` of one block, flattened ``(c N,)``."""
    xw = x[1:].expand_as(blk.e)
    low = blk.u @ (blk.v.transpose(1, 2) @ x[1:]).unsqueeze(-1)
    out = blk.z * x[0] + blk.rotated(rows, blk.e * xw) + low.squeeze(-1)
    return (sigma.unsqueeze(-1) * out).flatten()


class AnalyticNormal:
    """``(J^T J, J^T r0)`` of one batch from :func:`residual_jacobian`, checked once.

    The first call compares ``J v`` for a seeded random ``v`` with a forward-mode directional
    derivative of the residuals (:func:`torch.func.jvp`); if they disagree by more than
    :data:`CHECK_TOL` (relative), this and every later call return ``fallback(flat, theta,
    r0)``. ``checked`` is ``None`` before the check, then its outcome.

    Parameters
    ----------
    energy : TemplateEnergy
        The fitted energy.
    rows : Rows
        The template basis.
    target : TargetManifold
        The target manifold.
    kappa : float
        The requested normal rate.
    batch : dict
        The sampled batch.
    weights : dict
        The terms' weights.
    seed : int
        Seeds the check's direction.
    fallback : callable
        ``(flat, theta, r0) -> (J^T J, J^T r0)`` by forward mode.
    """

    def __init__(self, energy, rows: Rows, target, kappa: float, batch: dict, weights: dict,
                 seed: int, fallback):
        self.energy, self.rows, self.target, self.kappa = energy, rows, target, kappa
        self.batch, self.weights, self.seed, self.fallback = batch, weights, seed, fallback
        self.checked = None

    def __call__(self, flat, theta: torch.Tensor, r0: torch.Tensor):
        if self.checked is False:
            return self.fallback(flat, theta, r0)
        probe = None
        if self.checked is None:
            gen = torch.Generator().manual_seed(self.seed)
            probe = torch.randn(theta.numel(), generator=gen, dtype=theta.dtype).to(theta.device)
        count, states = self.batch["dirs"].shape[0], self.batch["u"].shape[0]
        size = self.energy.geometry.size
        sizes = {"linear": count * size, "field": states * size, "energy": states}
        with torch.no_grad():
            a, grad, jv = normal_equations(
                residual_jacobian(self.energy, self.rows, theta, self.target, self.kappa,
                                  self.batch), self.rows, self.weights, sizes, r0, probe)
        if self.checked is None:
            ref = torch.func.jvp(flat, (theta,), (probe,))[1]
            self.checked = bool((jv - ref).norm() <= CHECK_TOL * ref.norm())
            if not self.checked:
                return self.fallback(flat, theta, r0)
        return a, grad
