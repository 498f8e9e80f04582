"""Theory-regime training runs summarised for the sweeps, and the sweeps over width and n.

:func:`theory_run` trains one model in the theory regime and measures lambda_0, the log-linear
loss slope, the weight drift, the generalization gap (the objective on held-out points minus the
training objective) and W2 beside its floor, optionally with the NTK comparison of
:mod:`flows.theory.ntk`; :func:`width_sweep` and :func:`sample_sweep` repeat it over m and n.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from _runkit import Result
from _runkit.sweep import grid_points

from ..errors import FlowsError, check_positive_int, derive_seed
from ..evaluation.distances import w2
from ..field import FieldSpec
from ..sampling.ode import integrate
from ..training.loop import TrainConfig, fixed_objective, prepare_data, train
from .kernel import lambda_0, log_loss_slope, loglog_slope, weight_drift
from .ntk import ntk_comparison

__all__ = ["TheoryRun", "TheorySweep", "sample_sweep", "theory_run", "width_sweep"]


@dataclass(frozen=True)
class TheoryRun(Result):
    """One theory-regime training run summarised for the sweeps (:func:`theory_run`).

    Width m, n points with k draws each, lambda_0 (NaN when not computed), the final training
    and held-out objectives and their gap, the weight drift, the log-linear loss fit (slope, R^2),
    W2 of the samples and its floor, the loss curve, and with the NTK comparison its gap,
    tolerance, whether it holds and the flipped fraction of activations, the end ratio
    L_obs(T) / L_NTK(T), and whether the NTK check over the whole horizon passes
    (:func:`flows.theory.ntk.curve_check`) with its worst output deviation.
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
    ntk_end_ratio: float | None = None
    ntk_passes: bool | None = None
    ntk_deviation: float | None = None


def theory_run(config: TrainConfig, n_samples: int = 1000, method: str = "midpoint",
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
    x = integrate(res.field, x0, method=method, steps=sample_steps).x
    fit = log_loss_slope(res.losses)
    ntk = None
    if with_ntk:
        ntk = ntk_comparison(cfg, splits, source, result=res)
    return TheoryRun(cfg.width, cfg.n_train, cfg.k_draws, lam, train_loss,  # type: ignore[arg-type]
                     float(res.test_loss), float(res.test_loss) - train_loss,
                     weight_drift(res.field.W.detach(), res.initial_W), fit.slope, fit.r2,
                     w2(x, splits.heldout), w2(splits.floor, splits.heldout),
                     res.losses.tolist(), *(() if ntk is None else (
                         ntk.gap, ntk.tolerance, ntk.within, ntk.drift.flipped,
                         ntk.end_ratio, ntk.passes, ntk.curve.deviation)))


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
    return grid_points(theory_point, {axis: values}, {"base": base, "run_kwargs": kwargs},
                       sweep, TheoryRun)
