"""Gradient-descent fitting of a general neural energy (SEAL's ``mlp`` family).

The energy is ``F = S + M``: an MLP of the rates averaged over neuron translations (``M``) and
the spectral slopes that keep every manifold point a fixed point (``S``, recomputed from ``M``
at every step and differentiated through, see
:meth:`neurodyn.energies.seal.SealEnergy.refresh`). ``M`` is not linear in its weights, so
instead of the least squares of :func:`neurodyn.fit.fit` the same residuals (linearised normal
field, finite restoring field, energy against ``kappa B``) are minimised by Adam with a cosine
learning rate, one freshly sampled batch per step (seeded by ``seed`` and the step number).
The checkpoint holds the weights, Adam's state and the history, so a resumed fit repeats the
same arithmetic as an uninterrupted one.
"""

from __future__ import annotations

from pathlib import Path

import torch

from _runkit import atomic_torch_save

from .progress import progress

__all__ = ["train_neural"]


def train_neural(net, manifold, config, ckpt: Path | None, resume: bool, progress_bar,
                 batch_fn, residual_fn, load_fn, interrupted_cls, failed_cls):
    """Adam on the weighted residuals; returns ``(history, first_step)``.

    ``batch_fn(step)`` samples a batch, ``residual_fn(batch)`` gives the residual vectors per
    term, ``load_fn(path)`` reads and checks a checkpoint.
    """
    energy = net.energy_fn
    params = [p for p in energy.neural.parameters()]
    opt = torch.optim.Adam(params, lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(config.steps, 1),
                                                       eta_min=0.01 * config.lr)
    weights = {"linear": config.weight_linear, "field": config.weight_field,
               "energy": config.weight_energy}
    history, step0 = {k: [] for k in weights}, 0
    if ckpt is not None and resume and ckpt.exists():
        state = load_fn(ckpt)
        energy.neural.load_state_dict(state["neural"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        history, step0 = state["history"], int(state["step"])

    def save(step):
        if ckpt is not None:
            from .fitting import _checkpoint_config

            atomic_torch_save({"format": "neurodyn.fit/2", "config": _checkpoint_config(config),
                               "neural": energy.neural.state_dict(),
                               "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                               "history": history, "step": step}, ckpt)

    bar = progress(total=config.steps, desc="fit", enabled=progress_bar, initial=step0)
    try:
        for step in range(step0, config.steps):
            opt.zero_grad()
            res = residual_fn(batch_fn(step))
            losses = {k: (r**2).sum() for k, r in res.items()}
            loss = sum(weights[k] * losses[k] for k in weights)
            if not torch.isfinite(loss) or float(loss.detach()) > 1e8:
                raise failed_cls(f"fit: the loss left a sane range ({float(loss.detach()):.3g})"
                                 f" at step {step}; lower lr (now {config.lr:g})")
            loss.backward()
            opt.step()
            sched.step()
            for k in weights:
                history[k].append(float(losses[k].detach()))
            bar.update(1)
            if (step + 1) % config.checkpoint_every == 0:
                save(step + 1)
    except KeyboardInterrupt:
        done = len(history["linear"])
        save(done)
        where = f"; checkpoint {ckpt} holds the weights and Adam state after {done} steps" \
            if ckpt is not None else " (no output directory, nothing saved)"
        raise interrupted_cls(f"fit interrupted after {done} of {config.steps} steps{where}; "
                              "rerun the same command to resume") from None
    finally:
        bar.close()
    save(config.steps)
    with torch.no_grad():
        energy.refresh(force=True)
    return history, step0
