"""An exponential moving average (EMA) of the weights over training steps.

After step n the average is theta_bar_n = sum_{i <= n} w_i theta_i with
w_i = (1 - beta) beta^(n - i) / (1 - beta^n): the accumulator a_n = beta a_{n-1} +
(1 - beta) theta_n starts at 0 and is divided by 1 - beta^n (the bias correction of Adam's
moments), so early steps are not pulled toward the initial weights and the weights sum to 1.
The accumulator and n are all the state, so a run resumed from a checkpoint holding them
continues the average exactly. Sampling and evaluation use the average; training continues
from the last iterate.

With ``warmup`` the decay of update n (n = 1, 2, ...) is beta_n = min(beta, n / (n + 9)) (the
schedule (1 + t) / (10 + t) of step t = n - 1, as in TensorFlow's ExponentialMovingAverage
with ``num_updates``): the average then covers about the last tenth of the steps taken until
that window reaches 1 / (1 - beta) steps (n near 9 / (1 - beta), 8,991 steps at 0.999), so
that early in a run it does not reach back to weights far from the current ones. The weights
are then w_i = (1 - beta_i) prod_{i < j <= n} beta_j, divided by their sum 1 - prod_{j <= n}
beta_j (the same bias correction; beta_1 = 0.1, so it is close to 1 from the start).
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
    warmup : bool
        Use the decay min(beta, n / (n + 9)) at update n (see the module).

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

    def __init__(self, field: nn.Module, decay: float, warmup: bool = False) -> None:
        self.field = field
        self.decay = check_decay(decay)
        self.warmup = bool(warmup)
        if self.decay == 0:
            raise FlowsError("ema=0 means no average; do not build a WeightAverage")
        state = field.state_dict()
        self.keys = _averaged_keys(field)
        self.acc = {k: torch.zeros_like(state[k]) for k in self.keys}
        self.n = 0
        self.kept = 1.0  # prod_{j <= n} beta_j, the weight still missing from the average

    def decay_at(self, n: int) -> float:
        """The decay beta_n of update ``n`` >= 1: beta, or min(beta, n / (n + 9)) with warm-up.

        Examples
        --------
        >>> avg = WeightAverage(nn.Linear(1, 1), 0.999, warmup=True)
        >>> avg.decay_at(1), avg.decay_at(91), avg.decay_at(100_000)
        (0.1, 0.91, 0.999)
        """
        return min(self.decay, n / (n + 9)) if self.warmup else self.decay

    @torch.no_grad()
    def update(self) -> None:
        """Fold the field's current weights into the average (one training step)."""
        state = self.field.state_dict()
        self.n += 1
        beta = self.decay_at(self.n)
        for k in self.keys:
            self.acc[k].mul_(beta).add_(state[k], alpha=1 - beta)
        self.kept *= beta

    def averaged(self) -> dict[str, torch.Tensor]:
        """The average theta_bar_n by state key (the current weights before any update)."""
        state = self.field.state_dict()
        if self.n == 0:
            return {k: state[k].detach().clone() for k in self.keys}
        c = 1 - self.kept
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
        self.kept = 1.0
        for n in range(1, self.n + 1):
            self.kept *= self.decay_at(n)
