"""Gradient-descent fitting of a general neural energy (SEAL's ``mlp`` family).

The energy is ``F = S + c0 sum_i G(r_i) + M``: an MLP of the rates averaged over neuron
translations (``M``), the leak integral ``G`` with one learned coefficient ``c0``, and the
spectral slopes that keep every manifold point a fixed point (``S``, recomputed from the other
two at every step and differentiated through, see
:meth:`neurodyn.energies.seal.SealEnergy.refresh`).

Why ``c0``: a normal rate ``kappa`` asks the Hessian of ``F`` on the normal space to be
``(kappa - 1) D^{-1}``, ``D = diag(phi'(u*))`` (:mod:`neurodyn.energies.seal`, step 3), the
Hessian of ``(kappa - 1) sum_i G(r_i)``. For a logistic ``G`` is the negative binary entropy,
curvature ``1 / (r (1 - r))``: about 400 at the bump's floor, 4 at its half height. A smooth MLP
of bounded rates with weights of order one has curvatures of order one, so without ``c0`` a
fitted MLP stays at the leak rate wherever the rates are low, whatever kappa it is fitted to.
With it, ``c0`` is learned (no value is built in; it ends near ``kappa - 1``) and ``M`` supplies
the rest (the radial stiffness of the bump's own modes, which ``S`` does not learn here).

``M`` is not linear in its weights, so instead of the least squares of :func:`neurodyn.fit.fit`
the same residuals (linearised normal field, finite restoring field, energy against
``kappa B``) are minimised by Adam with a cosine learning rate, one freshly sampled batch per
step (seeded by ``seed`` and the step number). Every residual is affine in ``c0`` (``F`` is
linear in it and the slopes of ``S`` are linear in ``grad F``), so before each Adam step ``c0``
is set to its weighted least-squares value on the step's batch, from the residuals at ``c0``
and ``c0 + 1`` (a step of a variable-projection scheme: Adam with a step size suited to the
network's weights would need hundreds of steps to carry ``c0`` to ``kappa - 1``, and
overshoots it with a larger one). The checkpoint holds the weights, ``c0``, Adam's state and
the history, so a resumed fit repeats the same arithmetic as an uninterrupted one.
"""

from __future__ import annotations

from pathlib import Path

import torch

from _runkit.files import check_adam_state, check_like

from .checkpoint import checkpointed_steps, save_checkpoint

__all__ = ["train_neural", "solve_leak_coefficient"]


def solve_leak_coefficient(energy, residual_fn, batch, weights: dict) -> float:
    """Set ``c0`` (``energy.pointwise.coef[0]``) to its weighted least-squares value on a batch.

    The residuals are affine in ``c0``: ``R(c) = R(c0) + (c - c0) A`` with
    ``A = R(c0 + 1) - R(c0)``; the minimiser of ``sum_k w_k |R_k(c)|^2`` is returned and
    written. Residuals and the other parameters are left untouched.
    """
    coef = energy.pointwise.coef
    with torch.no_grad():
        c0 = float(coef[0])
        base = residual_fn(batch)
        coef[0] = c0 + 1.0
        moved = residual_fn(batch)
        num = sum(w * float((moved[k] - base[k]) @ base[k]) for k, w in weights.items())
        den = sum(w * float(((moved[k] - base[k]) ** 2).sum()) for k, w in weights.items())
        c = c0 - num / den if den > 0 else c0
        coef[0] = c
    return c


def train_neural(net, manifold, config, ckpt: Path | None, resume: bool, progress,
                 batch_fn, residual_fn, load_fn, interrupted_cls, failed_cls):
    """Adam on the weighted residuals; returns ``(history, first_step)``.

    ``batch_fn(step)`` samples a batch, ``residual_fn(batch)`` gives the residual vectors per
    term, ``load_fn(path)`` reads and checks a checkpoint.
    """
    energy = net.energy_fn
    opt = torch.optim.Adam(list(energy.neural.parameters()), lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(config.steps, 1),
                                                       eta_min=0.01 * config.lr)
    weights = {"linear": config.weight_linear, "field": config.weight_field,
               "energy": config.weight_energy}
    history, step0 = {k: [] for k in weights}, 0
    if ckpt is not None and resume and ckpt.exists():
        history, step0 = _restore_neural(load_fn(ckpt), energy, opt, sched, ckpt)

    def save(step):
        if ckpt is not None:  # on the CPU: resumes on any device
            save_checkpoint(ckpt, config, neural=energy.neural.state_dict(),
                            pointwise=(energy.pointwise.state_dict()
                                       if energy.pointwise is not None else None),
                            optimizer=opt.state_dict(), scheduler=sched.state_dict(),
                            history=history, step=step)

    def step_fn(step):
        losses = _neural_step(energy, opt, sched, batch_fn, residual_fn, weights, step,
                              config.lr, failed_cls)
        for k in weights:
            history[k].append(float(losses[k].detach()))

    checkpointed_steps(config, step0, history, step_fn, save, progress=progress, ckpt=ckpt,
                       holds=lambda done: f"the weights and Adam state after {done} steps",
                       interrupted_cls=interrupted_cls)
    with torch.no_grad():
        energy.refresh(force=True)
    return history, step0


def _check_neural_shapes(state: dict, energy, path: Path) -> None:
    """Refuse a checkpoint whose weights or Adam moments differ in keys or shape from the
    neural energy's, naming the field."""
    what = "fit checkpoint"
    check_like(state.get("neural"), energy.neural.state_dict(), what, path, "neural")
    if energy.pointwise is not None:
        check_like(state.get("pointwise"), energy.pointwise.state_dict(), what, path,
                   "pointwise")
    check_adam_state(state.get("optimizer"), list(energy.neural.parameters()), what, path)


def _restore_neural(state: dict, energy, opt, sched, path: Path) -> tuple[dict, int]:
    """Load a checkpoint's weights, Adam and schedule states (their shapes checked first);
    return its history and step."""
    _check_neural_shapes(state, energy, path)
    energy.neural.load_state_dict(state["neural"])
    if energy.pointwise is not None:
        energy.pointwise.load_state_dict(state["pointwise"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    return state["history"], int(state["step"])


def _neural_step(energy, opt, sched, batch_fn, residual_fn, weights: dict, step: int,
                 lr: float, failed_cls) -> dict:
    """Adam step ``step`` on its batch ``batch_fn(step)`` (the leak coefficient solved first
    when there is a pointwise term); returns each term's summed squared residual.
    ``failed_cls`` is raised when the loss leaves a sane range."""
    opt.zero_grad()
    batch = batch_fn(step)
    if energy.pointwise is not None:
        solve_leak_coefficient(energy, residual_fn, batch, weights)
        energy.pointwise.coef.grad = None
    res = residual_fn(batch)
    losses = {k: (r**2).sum() for k, r in res.items()}
    loss = sum(weights[k] * losses[k] for k in weights)
    if not torch.isfinite(loss) or float(loss.detach()) > 1e8:
        raise failed_cls(f"fit: the loss left a sane range ({float(loss.detach()):.3g})"
                         f" at step {step}; lower lr (now {lr:g})")
    loss.backward()
    opt.step()
    sched.step()
    return losses
