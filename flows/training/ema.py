"""An exponential moving average (EMA) of the weights over training steps.

After step n the average is theta_bar_n = sum_{i <= n} w_i theta_i with
w_i = (1 - beta) beta^(n - i) / (1 - beta^n): the accumulator a_n = beta a_{n-1} +
(1 - beta) theta_n starts at 0 and is divided by 1 - beta^n (the bias correction of Adam's
moments), so early steps are not pulled toward the initial weights and the weights sum to 1.
The accumulator and n are all the state, so a run resumed from a checkpoint holding them
continues the average exactly. Sampling and evaluation use the average; training continues
from the last iterate.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import nn

from ..errors import FlowsError


def check_decay(value: object) -> float:
    """The EMA decay beta: 0 (off) or a number in (0, 1); :class:`FlowsError` otherwise.

    Examples
    --------
    >>> check_decay(0.999), check_decay(0)
    (0.999, 0.0)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not (value == 0 or 0 < value < 1):
        raise FlowsError(f"ema={value!r} is not allowed; give 0 (off) or a decay in (0, 1), "
                         "e.g. 0.999")
    return float(value)


def _averaged_keys(field: nn.Module) -> list[str]:
    return [k for k, v in field.state_dict().items() if torch.is_floating_point(v)]


class WeightAverage:
    """The bias-corrected EMA of a field's floating-point weights (see the module).

    Parameters
    ----------
    field : torch.nn.Module
        The trained field; its floating-point ``state_dict`` entries are averaged.
    decay : float
        beta in (0, 1).

    Examples
    --------
    >>> f = nn.Linear(1, 1, bias=False)
    >>> avg = WeightAverage(f, 0.5)
    >>> for w in (1.0, 3.0):
    ...     _ = f.weight.data.fill_(w)
    ...     avg.update()
    >>> float(avg.averaged()["weight"])  # (0.25 * 1 + 0.5 * 3) / 0.75
    2.3333332538604736
    """

    def __init__(self, field: nn.Module, decay: float) -> None:
        self.field = field
        self.decay = check_decay(decay)
        if self.decay == 0:
            raise FlowsError("ema=0 means no average; do not build a WeightAverage")
        state = field.state_dict()
        self.keys = _averaged_keys(field)
        self.acc = {k: torch.zeros_like(state[k]) for k in self.keys}
        self.n = 0

    @torch.no_grad()
    def update(self) -> None:
        """Fold the field's current weights into the average (one training step)."""
        state = self.field.state_dict()
        for k in self.keys:
            self.acc[k].mul_(self.decay).add_(state[k], alpha=1 - self.decay)
        self.n += 1

    def averaged(self) -> dict[str, torch.Tensor]:
        """The average theta_bar_n by state key (the current weights before any update)."""
        state = self.field.state_dict()
        if self.n == 0:
            return {k: state[k].detach().clone() for k in self.keys}
        c = 1 - self.decay**self.n
        return {k: self.acc[k] / c for k in self.keys}

    def averaged_field(self) -> nn.Module:
        """A copy of the field holding the averaged weights (the field itself is unchanged)."""
        out = copy.deepcopy(self.field)
        out.load_state_dict(self.averaged(), strict=False)
        return out

    def wrap(self, step_fn: Callable[[int], torch.Tensor]) -> Callable[[int], torch.Tensor]:
        """``step_fn`` followed by :meth:`update`: the step function of an averaged run."""
        def step(s: int) -> torch.Tensor:
            loss = step_fn(s)
            self.update()
            return loss

        return step

    def state_dict(self) -> dict:
        """The accumulator (CPU copies) and the number of updates, for checkpoints."""
        return {"acc": {k: v.detach().cpu().clone() for k, v in self.acc.items()}, "n": self.n}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output."""
        for k in self.keys:
            self.acc[k].copy_(state["acc"][k])
        self.n = int(state["n"])
