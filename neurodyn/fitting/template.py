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

A perturbed state whose overlap has two nearly equal maxima (a bump all but erased by a large
perturbation) decides its nearest manifold point by small differences; while the template is
not yet the target's, its own maximiser can sit at the other maximum, and the state's
restoring-field residual is then orders of magnitude above the rest and jumps rather than
changes with the template: no Gauss-Newton step can reduce it, and it pulls the template away
from the target (on the 32 x 32 torus with a von Mises bump, one such state per batch left the
template 0.5% off). Each step therefore leaves out the perturbed states whose field residual
exceeds :data:`TRIM` times the batch's median (trimmed least squares). The solution is
unchanged where the family reaches the target: there every residual vanishes and nothing is
left out.

The Jacobian in the coordinates is exact and analytic
(:mod:`neurodyn.fitting.template_jacobian`, derived there), checked against one forward-mode
directional derivative (:func:`torch.func.jvp`) per sampled batch; if they disagree (the
residuals were changed without it), the fit uses forward-mode columns (:func:`torch.func.vmap`
over the coordinate directions) for that batch.
"""

from __future__ import annotations

from pathlib import Path

import torch

from _runkit import BadInput
from _runkit.files import check_like

from ..energies.template import template_basis
from ..manifold import bump_profile
from .checkpoint import checkpointed_steps, save_checkpoint
from .template_jacobian import AnalyticNormal, basis_rows

__all__ = ["train_template", "INNER", "template_harmonics"]

#: Levenberg-Marquardt steps on each sampled batch
INNER = 6

#: perturbed states whose field residual exceeds this multiple of the batch median sit off
#: the template's reach: they are left out of that batch's steps (module docstring)
TRIM = 100.0

#: vmapped coordinate directions per forward-mode pass (bounds the memory of the Jacobian)
_CHUNK = 64


def template_harmonics(config, geometry) -> int:
    """The template's capacity ``K``: ``config.bandwidth``, or (None) the most the lattice
    holds without Nyquist modes."""
    from ..energies.template import max_harmonics

    top = max_harmonics(geometry)
    if config.bandwidth is not None and not 1 <= config.bandwidth <= top:
        raise BadInput(f"bandwidth={config.bandwidth!r}: the template's harmonics must be in "
                       f"[1, {top}] for {geometry!r}", param="bandwidth")
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

    rows = basis_rows(g, basis.reshape((-1,) + g.shape)) if target is not None else None

    def step_fn(step):
        nonlocal theta
        batch = batch_fn(step)
        with torch.no_grad():
            batch = _trimmed(batch, call(tensors(theta), batch)["field"], g.size)
        normal = None if rows is None else AnalyticNormal(
            energy, rows, target, config.kappa, batch, weights,
            (config.seed * 1_000_003 + step) % 2**63, _forward_normal)
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


def _trimmed(batch: dict, field: torch.Tensor, size: int) -> dict:
    """The batch without the perturbed states whose restoring-field residual is more than
    :data:`TRIM` times the batch's median (the probes of the normal field are all kept)."""
    norms = field.reshape(-1, size).norm(dim=-1)
    keep = norms <= TRIM * norms.median()
    if bool(keep.all()):
        return batch
    return {k: v[keep] if k in _PERTURBED else v for k, v in batch.items()}


#: the batch entries of the perturbed states (one row per state)
_PERTURBED = ("u", "near", "us_near", "bregman")


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
