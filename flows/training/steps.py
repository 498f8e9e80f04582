"""One optimisation step of each kind of training: theory (full-batch GD on the fixed
objective), practice with the built-in field (direct gradients, Adam on a flat buffer) and
practice with any torch module (autograd, ``torch.optim.Adam``).

Every step function maps the step number to the training objective before the update.
"""

from __future__ import annotations

import math

import torch

from ..field import TwoLayerReLUField, features


class FlatAdam:
    """Adam (Kingma and Ba, with bias correction) on parameters stored in one flat buffer.

    The parameters are rebound as views of a single tensor, so each step is a handful of
    elementwise operations however many parameter tensors there are.
    """

    def __init__(self, params: list[torch.Tensor], b1: float = 0.9, b2: float = 0.999,
                 eps: float = 1e-8) -> None:
        self.flat = torch.cat([p.detach().reshape(-1) for p in params])
        offset = 0
        for p in params:
            p.data = self.flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        self.b1, self.b2, self.eps = b1, b2, eps
        self.m = torch.zeros_like(self.flat)
        self.v = torch.zeros_like(self.flat)
        self.t = 0

    def step(self, grads: list[torch.Tensor], lr: float) -> None:
        """One update with the gradients of the parameters, in their order."""
        g = torch.cat([x.reshape(-1) for x in grads])
        self.t += 1
        c1, c2 = 1 - self.b1**self.t, 1 - self.b2**self.t
        self.m.lerp_(g, 1 - self.b1)
        self.v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
        denom = self.v.sqrt().div_(math.sqrt(c2)).add_(self.eps)
        self.flat.addcdiv_(self.m, denom, value=-lr / c1)

    def state_dict(self) -> dict:
        """Moments and step count (for checkpoints, on the CPU)."""
        return {"m": self.m.cpu().clone(), "v": self.v.cpu().clone(), "t": self.t}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output."""
        self.m.copy_(state["m"])
        self.v.copy_(state["v"])
        self.t = int(state["t"])


def learning_rate(cfg, step: int) -> float:
    """Step size of ``step`` (from 0): constant ``cfg.lr`` (theory), or in the practice regime
    cfg.lr * min(1, (step + 1) / warmup) * (1 + cos(pi step / steps)) / 2, a linear warm-up
    over ``cfg.warmup`` steps (none when 0 or None) times a cosine decay to 0.

    Examples
    --------
    >>> from flows.training.config import TrainConfig
    >>> cfg = TrainConfig(steps=100, lr=0.1, warmup=10)
    >>> [round(learning_rate(cfg, s), 4) for s in (0, 4, 9, 50)]
    [0.01, 0.0498, 0.098, 0.05]
    """
    if cfg.regime == "theory":
        return cfg.lr
    ramp = min(1.0, (step + 1) / cfg.warmup) if cfg.warmup else 1.0
    return cfg.lr * ramp * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))


def clip_grads(grads: list[torch.Tensor], max_norm: float | None) -> list[torch.Tensor]:
    """The gradients scaled by min(1, max_norm / (||g|| + 1e-6)), ||g|| their global norm (as
    :func:`torch.nn.utils.clip_grad_norm_`); unchanged when ``max_norm`` is None.

    Examples
    --------
    >>> [round(float(g), 4) for g in clip_grads([torch.tensor(3.0), torch.tensor(4.0)], 1.0)]
    [0.6, 0.8]
    """
    if max_norm is None:
        return grads
    norm = torch.sqrt(sum(g.square().sum() for g in grads))
    scale = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    return [g * scale for g in grads]


def theory_step(field: TwoLayerReLUField, z: torch.Tensor, u: torch.Tensor, lr: float):
    """Full-batch gradient descent on W for the fixed objective (z (n k, p), u (n k, d))."""

    def step(s: int) -> torch.Tensor:
        loss, gw, _ = field.loss_and_grads(z, u, grad_a=False)
        field.W.data.sub_(gw, alpha=lr)
        return loss

    return step


def field_step(cfg, field: TwoLayerReLUField, adam: FlatAdam, batches):
    """Adam on (W, A) with the field's direct gradients (clipped to ``cfg.clip_grad``), on the
    batches of ``batches``."""
    spec = field.spec

    def step(s: int) -> torch.Tensor:
        x_t, t, dx_t, c = batches.get(s)
        z = features(x_t, t, spec.fourier, spec.normalize, c, spec.classes)
        loss, gw, ga = field.loss_and_grads(z, dx_t)
        adam.step(clip_grads([gw, ga], cfg.clip_grad), learning_rate(cfg, s))
        return loss

    return step


def module_step(cfg, model: torch.nn.Module, opt: torch.optim.Optimizer, batches):
    """Autograd and ``opt`` on the loss (1/B) sum_i ||model(x_t, t[, c]) - dx_t||^2, the
    gradient's global norm clipped to ``cfg.clip_grad``."""

    def step(s: int) -> torch.Tensor:
        x_t, t, dx_t, c = batches.get(s)
        for group in opt.param_groups:
            group["lr"] = learning_rate(cfg, s)
        loss = (model(x_t, t, c) - dx_t).square().sum(1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.clip_grad is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)
        opt.step()
        return loss.detach()

    return step
