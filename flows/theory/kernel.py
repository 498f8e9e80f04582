"""Diagnostics of the over-parameterized (theory) regime and its sweeps over width and n.

- Kernel at initialisation (inputs on the unit sphere, W rows ~ N(0, I)):
  H_ij = z_i . z_j (pi - arccos(z_i . z_j)) / (2 pi),  lambda_0 = lambda_min(H).
  It is the expected Gram matrix E_w[z_i . z_j 1{w.z_i > 0} 1{w.z_j > 0}] of the first layer.
- Linear convergence of full-batch gradient descent: log L_t ~ a + b t (b < 0), fitted by
  least squares with its R^2, and the slowest kernel mode's rate 4 lr lambda_0 / N
  (:func:`guaranteed_log_rate`); the whole curve against the kernel's prediction is in
  :mod:`flows.theory.ntk`.
- Relative weight drift ||W_t - W_0||_F / ||W_0||_F, expected to shrink like m^{-1/2}.
- Generalization gap: the objective on held-out points minus the training objective.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from _runkit import Result

from ..errors import FlowsError, check_positive_int, derive_seed
from ..evaluation.distances import w2
from ..field import FieldSpec
from ..sampling.ode import integrate
from ..training.loop import TrainConfig, fixed_objective, prepare_data, train


def kernel_h(z: torch.Tensor) -> torch.Tensor:
    """H_ij = z_i.z_j (pi - angle(z_i, z_j)) / (2 pi) on the normalised rows of z.

    Parameters
    ----------
    z : torch.Tensor, shape (N, p)
        Inputs; rows are normalised to unit length first.

    Returns
    -------
    torch.Tensor, float64, shape (N, N)

    Examples
    --------
    >>> kernel_h(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))[0].tolist()
    [0.5, 0.0]
    """
    if z.ndim != 2 or z.shape[0] == 0:
        raise FlowsError(f"z has shape {tuple(z.shape)}; a non-empty (N, p) tensor is required")
    u = z.double() / z.double().norm(dim=1, keepdim=True)
    g = (u @ u.T).clamp_(-1.0, 1.0)
    return g * (math.pi - torch.arccos(g)) / (2 * math.pi)


def lambda_0(z: torch.Tensor) -> float:
    """Smallest eigenvalue of :func:`kernel_h` (z of shape (N, p))."""
    return float(torch.linalg.eigvalsh(kernel_h(z))[0])


@dataclass(frozen=True)
class LogLinearFit(Result):
    """Least-squares fit log y = intercept + slope * x, with its coefficient of determination."""

    slope: float
    intercept: float
    r2: float


def log_loss_slope(losses: torch.Tensor | np.ndarray, start: int = 0) -> LogLinearFit:
    """Fit log L_t = a + b t over steps t >= ``start``; b < 0 is the linear rate.

    losses of shape (T,), all > 0.
    """
    y = np.log(np.asarray(losses, dtype=np.float64)[start:])
    if y.size < 2 or not np.isfinite(y).all():
        raise FlowsError("losses must hold at least 2 positive finite values after start")
    return _fit(np.arange(start, start + y.size, dtype=np.float64), y)


def loglog_slope(x: np.ndarray | list, y: np.ndarray | list) -> LogLinearFit:
    """Fit log y = a + b log x (x, y positive, same length)."""
    return _fit(np.log(np.asarray(x, dtype=np.float64)), np.log(np.asarray(y, dtype=np.float64)))


def _fit(x: np.ndarray, y: np.ndarray) -> LogLinearFit:
    b, a = np.polyfit(x, y, 1)
    ss = ((y - y.mean()) ** 2).sum()
    r2 = 1.0 - ((y - (a + b * x)) ** 2).sum() / ss if ss > 0 else 1.0
    return LogLinearFit(float(b), float(a), float(r2))


def guaranteed_log_rate(lambda0: float, lr: float, n_points: int) -> float:
    """Decay rate of log L of the slowest kernel mode: 4 lr lambda_0 / N (per step).

    With L = (1/N) sum_i ||v(z_i) - u_i||^2 and A = +-1, each output's residual follows
    r_{t+1} = (I - 2 lr H / N) r_t as m -> infinity, so L_t <= L_0 (1 - 2 lr lambda_0 / N)^{2t}
    ~ L_0 exp(-rate t). It is a bound only in that limit and far weaker than the early decay of
    the faster modes; the check that can fail compares the whole curve with the kernel's
    prediction (:func:`flows.theory.ntk.ntk_comparison`).
    """
    check_positive_int("n_points", n_points)
    return 4.0 * lr * lambda0 / n_points


def weight_drift(w: torch.Tensor, w0: torch.Tensor) -> float:
    """Relative drift ||W - W0||_F / ||W0||_F (shapes (m, p))."""
    return float((w.detach() - w0.detach()).norm() / w0.detach().norm())


@dataclass(frozen=True)
class TheoryRun(Result):
    """One theory-regime training run summarised for the sweeps (:func:`theory_run`).

    Width m, n points with k draws each, lambda_0 (NaN when not computed), the final training
    and held-out objectives and their gap, the weight drift, the log-linear loss fit (slope, R^2),
    W2 of the samples and its floor, the loss curve, and with the NTK comparison its gap,
    tolerance, whether it holds and the flipped fraction of activations.
    """

    width: int
    n: int
    k: int
    lambda_0: float
    train_loss: float
    test_loss: float
    gap: float
    drift: float
    slope: float
    slope_r2: float
    w2: float
    floor: float
    losses: list
    ntk_gap: float | None = None
    ntk_tolerance: float | None = None
    ntk_within: bool | None = None
    flipped: float | None = None


def theory_run(config: TrainConfig, n_samples: int = 1000, solver: str = "midpoint",
               sample_steps: int = 20, with_lambda: bool = True,
               with_ntk: bool = False) -> TheoryRun:
    """Train one theory-regime model and measure lambda_0, slope, drift, gap and W2 (with floor).

    ``with_ntk`` adds the gap between the loss curve and the infinite-width NTK prediction, its
    tolerance, whether it holds, and the fraction of flipped activations
    (:func:`flows.theory.ntk.ntk_comparison`).

    The W2 compares ``n_samples`` generated points with the held-out points (the run's
    ``n_eval``); its floor is the W2 between the floor sample and the held-out points.
    """
    cfg = config.resolved()
    if cfg.regime != "theory":
        raise FlowsError(f"regime={cfg.regime!r} is not allowed here; theory_run needs 'theory'")
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source)
    lam = float("nan")
    if with_lambda:
        spec = FieldSpec(splits.train.shape[1], cfg.width, "theory", True, cfg.fourier)
        z, _ = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                               cfg.sigma_min, spec, derive_seed(cfg.seed, "objective"))
        lam = lambda_0(z)
    with torch.no_grad():
        train_loss = float(res.field.loss_and_grads(
            *fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                             cfg.sigma_min, res.field.spec, derive_seed(cfg.seed, "objective")),
            grad_a=False)[0])
    x0 = source.sample(n_samples, derive_seed(cfg.seed, "theory-samples"))
    x = integrate(res.field, x0, method=solver, steps=sample_steps).x
    fit = log_loss_slope(res.losses)
    ntk = None
    if with_ntk:
        from .ntk import ntk_comparison

        ntk = ntk_comparison(cfg, splits, source, result=res)
    return TheoryRun(cfg.width, cfg.n_train, cfg.k_draws, lam, train_loss,  # type: ignore[arg-type]
                     float(res.test_loss), float(res.test_loss) - train_loss,
                     weight_drift(res.field.W.detach(), res.initial_W), fit.slope, fit.r2,
                     w2(x, splits.heldout), w2(splits.floor, splits.heldout),
                     res.losses.tolist(), *(() if ntk is None else (
                         ntk.gap, ntk.tolerance, ntk.within, ntk.drift.flipped)))


@dataclass(frozen=True)
class TheorySweep(Result):
    """Theory runs along one axis (``"width"`` or ``"n_train"``), in the order of ``values``.

    Attributes
    ----------
    axis : str
        The config field varied.
    values : list of int
        Its values.
    runs : list of TheoryRun
        One run per value.
    drift_slope : float or None
        Log-log slope of the weight drift against the width (expected ~ -1/2); a width sweep
        of at least two widths only.
    """

    axis: str
    values: list[int]
    runs: list[TheoryRun]
    drift_slope: float | None = None


def width_sweep(widths: list[int], base: TrainConfig, sweep: dict | None = None,
                **kwargs) -> TheorySweep:
    """Theory runs at several widths m (same data, n, k, seed).

    Returns the runs and the log-log slope of drift versus width (expected ~ -1/2).
    ``kwargs`` go to :func:`theory_run`; ``sweep`` (``{"out": DIR, "workers": ...,
    "scheduler": ...}``) runs the widths as cells of :func:`_runkit.sweep.run_sweep` (a Dask
    cluster, stored and resumable in ``DIR``).

    Returns
    -------
    TheorySweep
    """
    widths = [check_positive_int("width", w) for w in widths]
    runs = _runs("width", widths, base, sweep, kwargs)
    slope = loglog_slope(widths, [r.drift for r in runs]).slope if len(widths) >= 2 else None
    return TheorySweep("width", widths, runs, slope)


def sample_sweep(ns: list[int], base: TrainConfig, sweep: dict | None = None,
                 **kwargs) -> TheorySweep:
    """Theory runs at several numbers n of training points (same width, k, seed).

    ``sweep`` as in :func:`width_sweep`.

    Returns
    -------
    TheorySweep
        The runs (generalization gap and W2 with floor versus n); no drift slope.
    """
    ns = [check_positive_int("n", n) for n in ns]
    return TheorySweep("n_train", ns, _runs("n_train", ns, base, sweep, kwargs))


def theory_point(params: dict) -> TheoryRun:
    """:func:`theory_run` of ``params["base"]`` at ``params["width"]`` or
    ``params["n_train"]`` (whichever is given), with ``params["run_kwargs"]``.

    Returns
    -------
    TheoryRun
    """
    changes = {k: params[k] for k in ("width", "n_train") if k in params}
    return theory_run(replace(params["base"], regime="theory", **changes),
                      **params.get("run_kwargs", {}))


def _runs(axis: str, values: list, base: TrainConfig, sweep: dict | None,
          kwargs: dict) -> list[TheoryRun]:
    from _runkit.sweep import grid_points

    return grid_points(theory_point, {axis: values}, {"base": base, "run_kwargs": kwargs},
                       sweep, TheoryRun)
