"""The distribution of the training times t of conditional flow matching.

- ``"uniform"``: t ~ U(0, 1) (the default; the loss of :mod:`flows.training.loop`).
- ``"logit-normal"`` or ``"logit-normal:M,S"``: t = 1 / (1 + exp(-(M + S z))), z ~ N(0, 1)
  (Esser et al. 2024), mean M = 0 and std S = 1 unless given. It puts more of the training
  weight on middle times, where the marginal velocity is hardest to regress, and less near
  t = 0 and t = 1.

Both draw from the batch's generator at the place of the uniform draw, so a run's batches
still depend only on (seed, step); uniform draws are unchanged. The density of the
logit-normal is p(t) = exp(-(logit t - M)^2 / (2 S^2)) / (S sqrt(2 pi) t (1 - t)).
"""

from __future__ import annotations

import math

import torch

from ..errors import FlowsError

__all__ = ["TIME_SAMPLINGS", "parse_time_sampling", "draw_times", "logit_normal_density"]

#: the kinds of time sampling
TIME_SAMPLINGS = ("uniform", "logit-normal")


def parse_time_sampling(spec: object) -> tuple[str, float, float]:
    """The kind and (mean, std) of a time-sampling spec; :class:`FlowsError` if malformed.

    Parameters
    ----------
    spec : str
        ``"uniform"``, ``"logit-normal"`` or ``"logit-normal:M,S"`` (S > 0).

    Returns
    -------
    tuple of (str, float, float)
        Kind, mean and std (0 and 1 for uniform, where they are unused).

    Examples
    --------
    >>> parse_time_sampling("logit-normal:-0.5,1.2")
    ('logit-normal', -0.5, 1.2)
    >>> parse_time_sampling("uniform")
    ('uniform', 0.0, 1.0)
    """
    hint = "use 'uniform', 'logit-normal' or 'logit-normal:MEAN,STD' (STD > 0)"
    if not isinstance(spec, str):
        raise FlowsError(f"time_sampling={spec!r} is not allowed; {hint}")
    kind, _, args = spec.partition(":")
    if kind not in TIME_SAMPLINGS or (kind == "uniform" and args):
        raise FlowsError(f"time_sampling={spec!r} is not allowed; {hint}")
    if not args:
        return kind, 0.0, 1.0
    try:
        mean, std = (float(v) for v in args.split(","))
    except ValueError:
        raise FlowsError(f"time_sampling={spec!r} is not allowed; {hint}") from None
    if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
        raise FlowsError(f"time_sampling={spec!r} is not allowed; {hint}")
    return kind, mean, std


def draw_times(spec: str, n: int, gen: torch.Generator) -> torch.Tensor:
    """n training times of the spec, shape (n, 1), from ``gen`` (float32, CPU).

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> u = draw_times("uniform", 3, g)
    >>> torch.equal(u, torch.rand(3, 1, generator=torch.Generator().manual_seed(0)))
    True
    >>> bool(((draw_times("logit-normal", 1000, g) - 0.5).abs() < 0.5).all())
    True
    """
    kind, mean, std = parse_time_sampling(spec)
    if kind == "uniform":
        return torch.rand(n, 1, generator=gen)
    return torch.sigmoid(mean + std * torch.randn(n, 1, generator=gen))


def logit_normal_density(t: torch.Tensor, mean: float = 0.0, std: float = 1.0) -> torch.Tensor:
    """The density of the logit-normal distribution at t in (0, 1), same shape as t.

    Examples
    --------
    >>> round(float(logit_normal_density(torch.tensor(0.5))), 4)  # 1 / (sqrt(2 pi) / 4)
    1.5958
    """
    logit = torch.log(t) - torch.log1p(-t)
    return torch.exp(-0.5 * ((logit - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi)
                                                           * t * (1 - t))
