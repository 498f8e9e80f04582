"""Excess risk along gradient descent, and the stopping rules that decide where it is read.

In the theory regime gradient descent runs on a fixed least-squares problem with N = n k draws;
mode k of the residual decays like exp(-2 lr (lambda_k / N) t), and lambda_k / N converges to the
k-th eigenvalue of the kernel's integral operator as N grows. A fixed horizon lr x steps is
therefore a fixed amount of fitting in operator terms: kernel ridge regression with a fixed
ridge ~ 1 / (lr t), whose excess risk tends to a bias that does not fall with n. The kernel
regime's generalization bounds (n^{-1/2} for a target of finite kernel norm) stop gradient
descent at a horizon that grows like sqrt(n) (Yao, Rosasco and Caponnetto, 2007: early stopping
as regularization, ridge ~ n^{-1/2}).

- :func:`protocol_steps`: the step count of a stopping rule at n: ``fixed`` (the same for every
  n), ``sqrt`` (steps0 sqrt(n / n0), the rule above) and ``linear`` (steps0 n / n0, towards
  convergence).
- :func:`risk_path`: one run, the excess test risk (exact, against u* on fresh draws) and the
  excess training risk at a list of step counts; ``targets="shuffled"`` permutes the training
  targets among the draws (a control: such a field learns nothing of u*, so its excess test
  risk must stay far from 0 whatever n).
- :func:`protocol_sweep`: every n and seed once, read at each protocol's step count; per n the
  mean with a Student-t 95% interval over seeds, whether consecutive intervals separate, and the
  log-log slope with an interval from the per-seed slopes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from _runkit import Result
from _runkit.stats import mean_ci
from _runkit.sweep import grid_points

from ..data import load_dataset
from ..errors import FlowsError, as_generator, check_positive_int, derive_seed
from ..training.loop import TrainConfig, build_model, fixed_objective, prepare_data
from .excess import Estimate, optimal_velocity, path_draws, population_minimum, target_mixture
from .kernel import loglog_slope

__all__ = ["RiskPath", "protocol_sweep"]

PROTOCOLS = ("fixed", "sqrt", "linear")


def protocol_steps(protocol: str, n: int, n0: int, steps0: int) -> int:
    """Gradient-descent steps of a stopping rule at n training points.

    ``fixed``: steps0; ``sqrt``: round(steps0 sqrt(n / n0)); ``linear``: round(steps0 n / n0).

    Examples
    --------
    >>> [protocol_steps(p, 128, 32, 500) for p in ("fixed", "sqrt", "linear")]
    [500, 1000, 2000]
    """
    n, n0, steps0 = (check_positive_int(k, v) for k, v in (("n", n), ("n0", n0),
                                                           ("steps0", steps0)))
    if protocol == "fixed":
        return steps0
    if protocol == "sqrt":
        return max(1, round(steps0 * math.sqrt(n / n0)))
    if protocol == "linear":
        return max(1, round(steps0 * n / n0))
    raise FlowsError(f"protocol={protocol!r} is not allowed; use one of {', '.join(PROTOCOLS)}")


@dataclass(frozen=True)
class RiskPath(Result):
    """Excess risks of one theory-regime run at several step counts.

    Attributes
    ----------
    n, seed : int
    targets : str
        "data" or "shuffled".
    steps : list of int
        Step counts (ascending) at which the risks were read.
    excess_test, excess_test_se : list of float
        E ||v - u*||^2 on fresh draws (the seeds of :func:`flows.theory.excess.excess_risk`), and
        its standard error.
    excess_train : list of float
        Training objective minus the population minimum.
    """

    n: int
    seed: int
    targets: str
    steps: list
    excess_test: list
    excess_test_se: list
    excess_train: list

    def at(self, steps: int) -> tuple[float, float, float]:
        """(excess test, its se, excess train) after ``steps`` steps (one of ``self.steps``)."""
        if steps not in self.steps:
            raise FlowsError(f"steps={steps} was not read; this path has {self.steps}")
        i = self.steps.index(steps)
        return self.excess_test[i], self.excess_test_se[i], self.excess_train[i]


@functools.lru_cache(maxsize=4)
def _test_draws(data: str, seed: int, n_test: int):
    """(x_t, t) float32 and u*(x_t, t) float64 of the excess test risk: the draws of
    :func:`flows.theory.excess.excess_risk` for a run of ``seed`` (the same for every n, so a sweep
    computes them once per seed)."""
    g = as_generator(derive_seed(seed, "excess"))
    x_t, t, _ = path_draws(load_dataset(data).sample(n_test, g), g)
    return x_t.float(), t.float(), optimal_velocity(target_mixture(data), x_t, t)


def risk_path(cfg: TrainConfig, lstar: Estimate, read_at: list[int], n_test: int = 20_000,
              targets: str = "data") -> RiskPath:
    """Train ``cfg`` (theory regime) by full-batch gradient descent and read the excess risks
    after each step count in ``read_at``; the run itself is that of
    :func:`flows.training.loop.train` with ``cfg.steps = max(read_at)`` (same initialisation,
    draws and updates).

    Examples
    --------
    >>> cfg = TrainConfig(data="normal", regime="theory", n_train=16, k_draws=2, width=32,
    ...                   seed=1, n_eval=1)
    >>> p = risk_path(cfg, Estimate(math.pi, 0.0), [0, 20], n_test=2000)
    >>> p.excess_test[1] < p.excess_test[0]
    True
    """
    if targets not in ("data", "shuffled"):
        raise FlowsError(f"targets={targets!r} is not allowed; use 'data' or 'shuffled'")
    reads = sorted({int(s) for s in read_at})
    if not reads or reads[0] < 0:
        raise FlowsError(f"read_at={read_at!r} is not allowed; give step counts >= 0")
    cfg = replace(cfg, regime="theory", steps=max(1, reads[-1])).resolved()
    mix = target_mixture(cfg.data)
    if mix is None or cfg.source not in (None, "normal") or cfg.path != "linear" \
            or cfg.sigma_min != 0:
        raise FlowsError(f"data={cfg.data!r} (source {cfg.source!r}, path {cfg.path!r}) has no "
                         "closed-form optimal field; risk_path needs a N(0, I) source, the "
                         "linear path and a mixture data set")
    splits, source = prepare_data(cfg)
    field = build_model(cfg, splits.train.shape[1])
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, field.spec, derive_seed(cfg.seed, "objective"))
    if targets == "shuffled":
        g = as_generator(derive_seed(cfg.seed, "shuffle-targets"))
        u = u[torch.randperm(u.shape[0], generator=g)]
    x_t, t, u_star = _test_draws(cfg.data, cfg.seed, check_positive_int("n_test", n_test))
    ex, se, tr = [], [], []
    step = 0
    for target in reads:
        while step < target:
            _, gw, _ = field.loss_and_grads(z, u, grad_a=False)
            field.W.data.sub_(gw, alpha=cfg.lr)
            step += 1
        with torch.no_grad():
            err = (field(x_t, t).double() - u_star).square().sum(1)
            train_loss = float((field.forward_z(z) - u).double().square().sum(1).mean())
        if not math.isfinite(train_loss):
            raise FlowsError(f"the training loss is {train_loss} at step {step} (lr={cfg.lr}); "
                             "lower lr")
        ex.append(float(err.mean()))
        se.append(float(err.std() / math.sqrt(err.numel())))
        tr.append(train_loss - lstar.value)
    return RiskPath(cfg.n_train, cfg.seed, targets, reads, ex, se, tr)


@dataclass(frozen=True)
class ProtocolSummary(Result):
    """Excess risks against n under one stopping rule (means and 95% half-widths over seeds).

    ``intervals_separate``: each n's interval of the excess test risk lies strictly below the
    previous n's. ``slope`` / ``slope_ci95``: log-log slope of the mean excess test risk against
    n and the Student-t half-width of the per-seed slopes; ``train_slope`` likewise for the
    excess training risk when it is positive at every n (else None).
    """

    protocol: str
    targets: str
    ns: list
    steps: list
    excess_test: list
    excess_test_ci95: list
    excess_train: list
    excess_train_ci95: list
    intervals_separate: bool
    slope: float
    slope_ci95: float
    train_slope: float | None


def summarize(paths: list[RiskPath], ns: list[int], protocol: str, n0: int,
              steps0: int) -> ProtocolSummary:
    """:class:`ProtocolSummary` of ``paths`` (one per n and seed) read at the protocol's steps."""
    seeds = sorted({p.seed for p in paths})
    targets = paths[0].targets
    steps = [protocol_steps(protocol, n, n0, steps0) for n in ns]
    table = {(p.n, p.seed): p for p in paths}
    reads = [[table[n, s].at(k) for s in seeds] for n, k in zip(ns, steps, strict=True)]
    test = np.array([[r[0] for r in row] for row in reads])
    train = np.array([[r[2] for r in row] for row in reads])
    te = [mean_ci(row) for row in test]
    trn = [mean_ci(row) for row in train]
    sep = all(te[i + 1][0] + te[i + 1][1] < te[i][0] - te[i][1] for i in range(len(ns) - 1))
    slope = loglog_slope(ns, test.mean(1)).slope
    per_seed = [loglog_slope(ns, test[:, j]).slope for j in range(len(seeds))]
    train_slope = (loglog_slope(ns, train.mean(1)).slope if (train.mean(1) > 0).all()
                   else None)
    return ProtocolSummary(protocol, targets, list(ns), steps, [m for m, _ in te],
                           [h for _, h in te], [m for m, _ in trn], [h for _, h in trn],
                           bool(sep), float(slope), mean_ci(per_seed)[1], train_slope)


def reads_at(n: int, n0: int, steps0: int, protocols: tuple[str, ...],
             extra_reads: tuple[int, ...] = ()) -> list[int]:
    """The step counts a run at n is read at: each protocol's (anchored at ``n0`` with
    ``steps0`` steps), and those of ``extra_reads`` that need no further training; ascending.

    Examples
    --------
    >>> reads_at(128, 32, 500, ("fixed", "sqrt"), (0, 5000))
    [0, 500, 1000]
    """
    reads = {protocol_steps(p, n, n0, steps0) for p in protocols}
    return sorted(reads | {int(s) for s in extra_reads if 0 <= int(s) <= max(reads)})


def path_at(params: dict) -> RiskPath:
    """:func:`risk_path` of ``params["base"]`` at ``n`` points and seed ``run_seed``, against
    ``lstar``, read at the step counts of ``protocols`` (anchored at ``n0`` with ``steps0``
    steps) and at ``extra_reads`` (:func:`reads_at`), with ``n_test`` test draws and
    ``targets``: one grid point of :func:`protocol_sweep`.

    A top-level function, so :func:`_runkit.sweep.grid_points` can run it here or on a Dask
    cluster's workers; the run's seed is ``run_seed``, never the ``seed`` the sweep engine
    adds from the coordinates, so a result does not depend on how the grid is run.

    Returns
    -------
    RiskPath
    """
    n = params["n"]
    reads = reads_at(n, params["n0"], params["steps0"], params["protocols"],
                     params["extra_reads"])
    return risk_path(replace(params["base"], n_train=n, seed=params["run_seed"]),
                     params["lstar"], reads, params["n_test"], params["targets"])


def protocol_sweep(ns: list[int], base: TrainConfig, seeds: list[int], steps0: int,
                   protocols: tuple[str, ...] = ("fixed", "sqrt"), targets: str = "data",
                   n_test: int = 20_000, extra_reads: tuple[int, ...] = (),
                   lstar: Estimate | None = None, sweep: dict | None = None) -> dict:
    """One run per n and seed, read at every protocol's step count (anchored at the smallest
    n: ``steps0`` steps there) and at those of ``extra_reads`` that need no further training;
    returns {"paths": [...], protocol: ProtocolSummary, ...} with the population minimum
    (``lstar``, else :func:`flows.theory.excess.population_minimum` with seed 0) under
    "population_minimum".

    ``sweep`` (``{"out": DIR, "workers": ..., "scheduler": ...}``) runs the (n, seed) runs as
    cells of :func:`_runkit.sweep.run_sweep` (a Dask cluster, stored and resumable in ``DIR``;
    :func:`path_at`), with the same results.
    """
    ns = sorted(check_positive_int("n", n) for n in ns)
    seeds = [int(s) for s in seeds]
    steps0 = check_positive_int("steps0", steps0)
    for p in protocols:
        protocol_steps(p, ns[0], ns[0], steps0)
    if lstar is None:
        lstar = population_minimum(load_dataset(base.data), seed=derive_seed(0, "lstar"))
    fixed = {"base": base, "lstar": lstar, "n0": ns[0], "steps0": steps0,
             "protocols": tuple(protocols), "extra_reads": tuple(extra_reads),
             "n_test": n_test, "targets": targets}
    paths = grid_points(path_at, {"n": ns, "run_seed": seeds}, fixed, sweep,
                        RiskPath)
    out: dict = {"paths": paths, "population_minimum": lstar}
    for p in protocols:
        out[p] = summarize(paths, ns, p, ns[0], steps0)
    return out
