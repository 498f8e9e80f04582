"""Fitting the learned-template family (:class:`~neurodyn.energies.template.TemplateEnergy`).

The learnable entries are the leak coefficient ``c0`` and the template's coordinates in the
band-limited basis of :func:`~neurodyn.energies.template.template_basis` (``K`` harmonics per
axis, ``2K + 1`` coordinates on a ring and ``(2K + 1)^2`` on a torus): the capacity. They start
from knowledge of nothing about the target: ``c0 = 0`` (the leak rate) and the lattice's plain
cosine bump (:func:`neurodyn.manifold.bump_profile`) of height one as the template, the same for
every profile. They are learned from the fit's own samples and residuals
(:func:`neurodyn.fitting.core.fit`: linearised normal field at probes, finite restoring field
and energy against ``kappa B`` on perturbed states), never from the target's spectrum.

The residuals are not linear in the template (the maximiser ``psi_hat`` depends on it), so each
step draws its batch and takes ``INNER`` Levenberg-Marquardt (damped Gauss-Newton) steps on the
weighted residuals, starting from the previous step's solution. The checkpoint holds ``c0``, the
template and the history, so a resumed fit repeats the same arithmetic as an uninterrupted one.

The Jacobian in the coordinates is exact and analytic (:func:`residual_jacobian`), derived from
the structure of the family. With ``S = w(psi_hat)``, each basis function ``b_j = f(k_j . theta)``
(``f`` a cosine or sine, ``q_j = f'(k_j . theta)`` its quarter-period partner) has translates
``b_j(psi) = cos(k_j . psi) b_j - sin(k_j . psi) q_j`` and derivatives
``d_a b_j(psi) = k_ja t_j``, ``t_j = q_j(psi) = cos(k_j . psi) q_j + sin(k_j . psi) b_j``, so
every derivative of a residual in ``theta_j`` is a rotated basis row plus a part of rank ``dim``
carried by the maximiser's implicit derivative (``A`` the overlap's Hessian in ``psi``):

- ``dpsi_hat = A^{-1} k_j <r, t_j>`` (differentiating ``d<r, w(psi)>/dpsi = 0``);
- field ``-(1 + c0) u + S``: ``b_j(psi_hat) - sum_a d_a S dpsi_a``;
- energy ``c0 sum G - <r, S>``: ``-<r, b_j(psi_hat)>`` (envelope theorem: ``psi_hat`` drops out);
- normal field ``-(1 + c0) d + sum_a d_a S c_a`` with ``c = A^{-1} p``, ``p_a = -<d_a S, D d>``:
  ``(k_j . c) t_j - sum_ab c_a d_ab S dpsi_b + sum_a d_a S dc_a``, where
  ``dc = A^{-1} (dp - dA c)``, ``dp_a = -k_ja <t_j, D d> + sum_b <d_ab S, D d> dpsi_b`` and
  ``dA_ab = -k_ja k_jb <r, b_j(psi_hat)> - sum_c <r, d_abc S> dpsi_c``.

Every column costs a few multiplications per neuron and sample, where a forward-mode derivative
through the energy costs its whole computation (on the 32 x 32 torus with 962 coordinates, about
1.5 minutes per Jacobian, against seconds). The analytic Jacobian is checked against one
forward-mode directional derivative (:func:`torch.func.jvp`) per sampled batch; if they disagree
(the residuals were changed without it), the fit uses forward-mode columns
(:func:`torch.func.vmap` over the coordinate directions) for that batch.
"""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import NamedTuple

import torch

from _runkit.files import check_like

from ..energies.template import TemplateEnergy, template_basis
from ..manifold import bump_profile
from .checkpoint import checkpointed_steps, save_checkpoint

__all__ = ["train_template", "INNER", "template_harmonics"]

#: Levenberg-Marquardt steps on each sampled batch
INNER = 6

#: vmapped coordinate directions per forward-mode pass (bounds the memory of the Jacobian)
_CHUNK = 64


def template_harmonics(config, geometry) -> int:
    """The template's capacity ``K``: ``config.bandwidth``, or (None) the most the lattice
    holds without Nyquist modes."""
    from ..energies.template import max_harmonics

    top = max_harmonics(geometry)
    if config.bandwidth is not None and not 1 <= config.bandwidth <= top:
        raise ValueError(f"bandwidth={config.bandwidth!r}: the template's harmonics must be in "
                         f"[1, {top}] for {geometry!r}")
    return config.bandwidth if config.bandwidth is not None else top


def train_template(net, config, call, ckpt: Path | None, resume: bool, progress, batch_fn,
                   load_fn, interrupted_cls, failed_cls, target=None):
    """Fit ``c0`` and the template of ``net.energy_fn``; returns ``(history, first_step)``.

    ``call(tensors, batch)`` evaluates the residual vectors per term with the energy's
    ``template`` and ``leak`` replaced by ``tensors``, ``batch_fn(step)`` samples a batch,
    ``load_fn(path)`` reads and checks a checkpoint. With the ``target`` manifold the
    Jacobian is the analytic one of :func:`residual_jacobian` (``call`` must then be the
    residuals of :func:`neurodyn.fitting.core.fit`, which the per-batch check confirms);
    without it, forward-mode columns.
    """
    energy = net.energy_fn
    g = energy.geometry
    dev = energy.template.device
    basis = template_basis(g, energy.harmonics).flatten(1).to(dev)  # (P, N)
    weights = {"linear": config.weight_linear, "field": config.weight_field,
               "energy": config.weight_energy}
    history, step0 = {k: [] for k in weights}, 0
    start = bump_profile(g, "auto").to(dev).reshape(-1)
    theta = torch.cat([torch.zeros(1, dtype=torch.float64, device=dev), basis @ start])
    if ckpt is not None and resume and ckpt.exists():
        state = load_fn(ckpt)
        check_like(state.get("template"), {"template": energy.template, "leak": energy.leak},
                   "fit checkpoint", ckpt, "template")
        saved = state["template"]
        theta = torch.cat([saved["leak"].reshape(1).to(dev),
                           basis @ saved["template"].to(dev).reshape(-1)])
        history, step0 = state["history"], int(state["step"])

    def tensors(th):
        return {"template": (th[1:] @ basis).reshape(g.shape), "leak": th[0]}

    def save(step):
        save_checkpoint(ckpt, config, template={k: v.detach() for k, v in
                                                tensors(theta).items()},
                        history=history, step=step)

    rows = _basis_rows(g, basis.reshape((-1,) + g.shape)) if target is not None else None

    def step_fn(step):
        nonlocal theta
        batch = batch_fn(step)
        normal = None if rows is None else _AnalyticNormal(
            energy, rows, target, config.kappa, batch, weights,
            (config.seed * 1_000_003 + step) % 2**63)
        theta, losses = _levenberg_marquardt(lambda th: call(tensors(th), batch), theta,
                                             weights, step, failed_cls, normal)
        for k in weights:
            history[k].append(losses[k])
        return {k: f"{v:.2e}" for k, v in losses.items()}

    checkpointed_steps(config, step0, history, step_fn, save, progress=progress, ckpt=ckpt,
                       holds=lambda done: f"the template after {done} steps",
                       interrupted_cls=interrupted_cls)
    with torch.no_grad():
        for k, v in tensors(theta).items():
            getattr(energy, k).copy_(v)
    return history, step0


def _flat(res: dict, weights: dict) -> torch.Tensor:
    return torch.cat([weights[k] ** 0.5 * res[k] for k in weights])


def _levenberg_marquardt(residuals, theta, weights: dict, step: int, failed_cls, normal=None):
    """``INNER`` damped Gauss-Newton steps on ``sum_k w_k |R_k(theta)|^2``; returns the new
    ``theta`` and each term's loss there. ``normal(flat, theta, r0)`` gives ``(J^T J, J^T r0)``
    of the weighted residuals (default: forward-mode columns)."""
    def flat(th):
        return _flat(residuals(th), weights)

    normal = normal or _forward_normal
    with torch.no_grad():
        r0 = flat(theta)
    loss, lam = float(r0 @ r0), 1e-3
    for _ in range(INNER):
        a, grad = normal(flat, theta, r0)
        scale = a.diagonal().clamp(min=1e-6 * float(a.diagonal().max()) + 1e-300)
        for _ in range(8):  # raise the damping until the loss falls
            delta = torch.linalg.solve(a + lam * torch.diag(scale), -grad)
            with torch.no_grad():
                r1 = flat(theta + delta)
            new = float(r1 @ r1)
            if new == new and new <= loss:
                theta, r0, done = theta + delta, r1, loss - new <= 1e-9 * loss
                loss, lam = new, max(lam / 3, 1e-9)
                break
            lam *= 4
        else:
            break  # no decrease in this direction: at the minimum within precision
        if done:  # converged: a further step would change the loss by less than 1e-9
            break
    if not loss == loss or loss > 1e12:
        raise failed_cls(f"fit: the template's loss left a sane range ({loss:.3g}) at step "
                         f"{step}")
    with torch.no_grad():
        res = residuals(theta)
    return theta, {k: float((res[k] ** 2).sum()) for k in weights}


def _forward_normal(flat, theta: torch.Tensor, r0: torch.Tensor):
    """``(J^T J, J^T r0)`` from the forward-mode Jacobian."""
    jac = _jacobian(flat, theta)  # (P, M)
    return jac @ jac.T, jac @ r0


def _jacobian(flat, theta: torch.Tensor) -> torch.Tensor:
    """``d flat / d theta`` as ``(P, M)``: one forward-mode derivative per coordinate."""
    eye = torch.eye(theta.numel(), dtype=theta.dtype, device=theta.device)

    def column(t):
        return torch.func.jvp(flat, (theta,), (t,))[1]

    with torch.no_grad():
        return torch.func.vmap(column, chunk_size=_CHUNK)(eye)


# ---------------------------------------------------------------------- the analytic Jacobian
class _Rows(NamedTuple):
    """Basis rows ``b (P, N)``, their quarter-period partners ``q (P, N)`` and wave vectors
    ``k (P, dim)``: ``b_j = f(k_j . theta)``, ``q_j = f'(k_j . theta)``."""

    b: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor


def _basis_rows(geometry, basis: torch.Tensor) -> _Rows:
    """:class:`_Rows` of a basis ``(P, *shape)`` of single-wave-vector sinusoids."""
    g, p = geometry, basis.shape[0]
    kf = g.wavevectors(basis.dtype, basis.device).flatten(1)  # (dim, K)
    k = kf[:, g.dft(basis).flatten(1).abs().argmax(-1)].T  # (P, dim)
    axis = k.abs().argmax(-1)
    deriv = torch.stack([g.derivative(basis, a).flatten(1) for a in range(g.dim)])
    kk = k.gather(1, axis.unsqueeze(1)).squeeze(1)
    q = deriv[axis, torch.arange(p, device=basis.device)] / torch.where(kk == 0, 1.0, kk)[:, None]
    return _Rows(basis.flatten(1), torch.where(kk[:, None] == 0, 0.0, q), k)


def _turn(rows: _Rows, psi: torch.Tensor, x: torch.Tensor):
    """``<x, b_j(psi)>`` and ``<x, t_j>`` (``t_j = q_j(psi)``) for states ``x (c, N)`` at
    phases ``psi (c, dim)``: two ``(c, P)``; and ``(cos, sin)`` of ``k_j . psi``."""
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


def _phase_terms(et, r: torch.Tensor):
    """Maximiser ``psi (c, dim)``, overlap Hessian ``A (c, dim, dim)`` and the translate
    ``S (c, *shape)`` of the template of ``et`` for rates ``r``."""
    psi = et.best_phase(r)
    _, _, hess = et._overlap(r, psi)
    return psi, hess, et.geometry.shift(et.template, psi)


def _linear_block(et, rows: _Rows, us, dirs, scale: float) -> torch.Tensor:
    """Rows ``(c, N, 1 + P)`` of the normal-field residual's Jacobian (module docstring)."""
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
    t = cs.unsqueeze(-1) * rows.q + sn.unsqueeze(-1) * rows.b  # (c, P, N)
    jac = (k @ coef.T).T.unsqueeze(-1) * t
    jac = jac - torch.einsum("sa,absn,spb->spn", coef, d2, dpsi) \
        + torch.einsum("asn,spa->spn", d1, d_coef)
    return torch.cat([-dirs.flatten(1).unsqueeze(1), jac], 1).transpose(1, 2) * scale


def _field_block(et, rows: _Rows, u, scale: torch.Tensor) -> torch.Tensor:
    """Rows ``(c, N, 1 + P)`` of the restoring-field residual's Jacobian, ``scale (c,)``."""
    g = et.geometry
    r = et.activation(u)
    psi, hess, s = _phase_terms(et, r)
    (d1,) = _derivatives(g, s, 1)
    _, r_t, (cs, sn) = _turn(rows, psi, r.flatten(1))
    dpsi = torch.linalg.solve(hess.unsqueeze(1), (rows.k * r_t.unsqueeze(-1)).unsqueeze(-1)
                              ).squeeze(-1)  # (c, P, dim)
    jac = cs.unsqueeze(-1) * rows.b - sn.unsqueeze(-1) * rows.q \
        - torch.einsum("asn,spa->spn", d1, dpsi)
    jac = torch.cat([-u.flatten(1).unsqueeze(1), jac], 1).transpose(1, 2)
    return jac * scale.reshape(-1, 1, 1)


def _energy_rows(et, rows: _Rows, u, u0) -> torch.Tensor:
    """``d F(phi(u)) / d theta`` for states ``u (c, *shape)`` minus that of ``u0``: ``(c, 1+P)``
    (envelope theorem: the maximiser does not move the value)."""
    act = et.activation
    uu = torch.cat([u0.unsqueeze(0), u])
    r = act(uu)
    psi = et.best_phase(r)
    r_b, _, _ = _turn(rows, psi, r.flatten(1))
    jac = torch.cat([act.integral(uu).flatten(1).sum(-1, keepdim=True), -r_b], 1)
    return jac[1:] - jac[:1]


#: basis-row x neuron entries of one Jacobian block (samples per block = this / (P N))
_BLOCK_ELEMENTS = 2**22


def residual_jacobian(energy, rows: _Rows, theta: torch.Tensor, target, kappa: float,
                      batch: dict):
    """The Jacobian of the fit's residuals in ``theta = (c0, template coordinates)``, by blocks.

    The residuals are those of :func:`neurodyn.fitting.core.fit` (normal field at probes,
    restoring field and energy rise on perturbed states), with ``theta`` in the template
    basis whose rows are ``rows`` (module docstring for the derivation).

    Parameters
    ----------
    energy : TemplateEnergy
        The fitted energy (its geometry, activation and harmonics; its template is replaced).
    rows : _Rows
        The template basis with partners and wave vectors, ``P`` rows.
    theta : torch.Tensor, shape (1 + P,)
        Leak coefficient and template coordinates.
    target : TargetManifold
        The target manifold.
    kappa : float
        The requested normal rate.
    batch : dict
        One sampled batch (``psi``, ``dirs``, ``u``, ``us_near``, ``bregman``).

    Yields
    ------
    (str, int, torch.Tensor)
        Term name, first residual row, and the rows ``(R, 1 + P)`` of that term's Jacobian.
    """
    g = energy.geometry
    et = TemplateEnergy(g, energy.activation, (theta[1:] @ rows.b).reshape(g.shape),
                        harmonics=energy.harmonics).to(theta.device)
    dirs, u = batch["dirs"], batch["u"]
    count = dirs.shape[0]
    per = max(1, _BLOCK_ELEMENTS // (rows.b.numel()))
    delta = (u - batch["us_near"]).flatten(1).norm(dim=-1)
    for i in range(0, count, per):
        sl = slice(i, i + per)
        us = target.u_star(batch["psi"][sl])
        yield "linear", i * g.size, _linear_block(et, rows, us, dirs[sl],
                                                  1 / (kappa * count**0.5)).flatten(0, 1)
        yield "field", i * g.size, _field_block(
            et, rows, u[sl], 1 / (kappa * delta[sl] * count**0.5)).flatten(0, 1)
    scale = 1 / (kappa * batch["bregman"] * count**0.5)
    yield "energy", 0, _energy_rows(et, rows, u, target.u0) * scale.unsqueeze(-1)


#: largest relative disagreement of the analytic and forward-mode directional derivatives
CHECK_TOL = 1e-6


class _AnalyticNormal:
    """``(J^T J, J^T r0)`` from :func:`residual_jacobian` for one batch, checked once against a
    forward-mode directional derivative along a seeded random direction; forward mode from then
    on if they disagree by more than :data:`CHECK_TOL` (``self.checked`` records the outcome:
    ``None`` before the check, then ``True`` or ``False``)."""

    def __init__(self, energy, rows: _Rows, target, kappa: float, batch: dict, weights: dict,
                 seed: int):
        self.energy, self.rows, self.target, self.kappa = energy, rows, target, kappa
        self.batch, self.weights, self.seed, self.checked = batch, weights, seed, None

    def __call__(self, flat, theta: torch.Tensor, r0: torch.Tensor):
        if self.checked is False:
            return _forward_normal(flat, theta, r0)
        n = theta.numel()
        a = torch.zeros(n, n, dtype=theta.dtype, device=theta.device)
        grad = torch.zeros_like(theta)
        if self.checked is None:
            gen = torch.Generator().manual_seed(self.seed)
            v = torch.randn(n, generator=gen, dtype=theta.dtype).to(theta.device)
            jv = torch.zeros_like(r0)
        sizes = _term_sizes(self.batch, self.energy.geometry.size)
        starts = dict(zip(self.weights, accumulate([0] + [sizes[k] for k in self.weights]),
                          strict=False))
        with torch.no_grad():
            for term, i, jac in residual_jacobian(self.energy, self.rows, theta, self.target,
                                                  self.kappa, self.batch):
                jac = self.weights[term] ** 0.5 * jac
                rows = slice(starts[term] + i, starts[term] + i + jac.shape[0])
                a += jac.T @ jac
                grad += jac.T @ r0[rows]
                if self.checked is None:
                    jv[rows] = jac @ v
        if self.checked is None:
            ref = torch.func.jvp(flat, (theta,), (v,))[1]
            self.checked = bool((jv - ref).norm() <= CHECK_TOL * ref.norm())
            if not self.checked:
                return _forward_normal(flat, theta, r0)
        return a, grad


def _term_sizes(batch: dict, size: int) -> dict:
    """Residual rows per term."""
    count = batch["dirs"].shape[0]
    return {"linear": count * size, "field": count * size, "energy": count}
