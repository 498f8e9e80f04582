"""The NTK-curve gap against width, decided over seeds.

One run per width and seed (:func:`flows.theory.ntk.ntk_comparison`); for a seed, every width shares
the training points and the fixed (t, x0) draws (only the initial weights differ), so the drop
gap(m_i) - gap(m_{i+1}) is a paired difference: the data draw's share of the spread cancels.
The gap falls with m when each paired drop's Student-t 95% interval lies above 0
(``monotone``); ``intervals_separate`` is the stricter unpaired reading (each width's interval
of the mean gap strictly below the previous one's).

The gap max_t |L_obs - L_NTK| / L_obs(0) is reached where the two curves are farthest apart;
``at_end`` is the fraction of runs where that is the last step (the finite network falls
behind the kernel's prediction and does not catch up within the horizon), and
``end_ratio`` L_obs(T) / L_NTK(T) at the last step, with its interval. The gap is relative to
L_obs(0), which varies from seed to seed with the initial network's outputs (a Gaussian process
draw whose size does not shrink with m); the end ratio does not carry that spread.

The check (:func:`flows.theory.ntk.curve_check`): a run passes when, over its whole horizon,
its loss stays within a factor 1.1 of the kernel's and its outputs' deviation from the kernel's
prediction stays within 10% of the predicted change; ``passes`` is the fraction of seeds that
pass, per width, beside each run's worst ratio and worst deviation. The gap's dependence
on m is a regression: log gap = a + b log m fitted per seed, ``gap_slope`` the mean of the
per-seed slopes b with its Student-t 95% half-width ``gap_slope_ci95`` (the kernel's
fluctuation and drift predict b = -1/2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from _runkit import Result
from _runkit.stats import mean_ci
from _runkit.sweep import grid_points

from ..errors import FlowsError, check_positive_int
from ..training.loop import TrainConfig
from .kernel import loglog_slope
from .ntk import CURVE_DEVIATION, END_RATIO, NTKComparison, ntk_comparison

__all__ = ["GapSweep", "gap_sweep"]


@dataclass(frozen=True)
class GapSweep(Result):
    """NTK-curve gaps per width and seed, with intervals and the monotonicity decisions.

    Attributes
    ----------
    widths, seeds : list of int
    n, k : int
    lr : float
    steps : int
    horizon : float
        lr x steps, the gradient-flow time.
    gaps : list of list of float
        gaps[i][j]: width i, seed j.
    gap_mean, gap_ci95 : list of float
        Mean over seeds and Student-t 95% half-width, per width.
    drop_mean, drop_ci95 : list of float
        Paired gap(m_i) - gap(m_{i+1}) over seeds (len(widths) - 1 entries).
    monotone : bool
        Every drop's interval lies above 0.
    intervals_separate : bool
        Every width's gap interval lies strictly below the previous width's.
    at_end : list of float
        Per width, the fraction of seeds whose largest gap is at the last step.
    end_ratio, end_ratio_ci95 : list of float
        Per width, mean L_obs(T) / L_NTK(T) over seeds and its Student-t 95% half-width.
    end_ratios : list of list of float
        end_ratios[i][j]: width i, seed j.
    flipped : list of float
        Per width, mean fraction of activation patterns flipped by the end.
    passes : list of float
        Per width, the fraction of seeds that pass the whole-curve check.
    end_ratio_threshold : float
        r (:data:`flows.theory.ntk.END_RATIO`).
    worst_ratios, deviations : list of list of float
        [i][j]: width i, seed j; the worst loss ratio and the worst output deviation over the
        horizon (:class:`flows.theory.ntk.CurveCheck`).
    deviation_threshold : float
        tau (:data:`flows.theory.ntk.CURVE_DEVIATION`).
    gap_slope, gap_slope_ci95 : float
        Mean over seeds of the log-log slope of the gap against m, and its 95% half-width.
    gap_slopes : list of float
        The per-seed slopes.
    """

    widths: list
    seeds: list
    n: int
    k: int
    lr: float
    steps: int
    horizon: float
    gaps: list
    gap_mean: list
    gap_ci95: list
    drop_mean: list
    drop_ci95: list
    monotone: bool
    intervals_separate: bool
    at_end: list
    end_ratio: list
    end_ratio_ci95: list
    end_ratios: list
    flipped: list
    passes: list | None = None
    end_ratio_threshold: float | None = None
    gap_slope: float | None = None
    gap_slope_ci95: float | None = None
    gap_slopes: list | None = None
    worst_ratios: list | None = None
    deviations: list | None = None
    deviation_threshold: float | None = None


def ntk_at(params: dict) -> NTKComparison:
    """:func:`flows.theory.ntk.ntk_comparison` of ``params["base"]`` (theory regime) at
    ``width`` and seed ``run_seed``: one grid point of :func:`gap_sweep`.

    A top-level function, so :func:`_runkit.sweep.grid_points` can run it here or on a Dask
    cluster's workers; the run's seed is ``run_seed``, never the ``seed`` the sweep engine
    adds from the coordinates, so a result does not depend on how the grid is run.

    Returns
    -------
    NTKComparison
    """
    return ntk_comparison(replace(params["base"], width=params["width"],
                                  seed=params["run_seed"]))


def gap_sweep(widths: list[int], base: TrainConfig, seeds: list[int],
              sweep: dict | None = None) -> GapSweep:
    """:func:`flows.theory.ntk.ntk_comparison` at every width and seed of ``base`` (theory regime).

    ``sweep`` (``{"out": DIR, "workers": ..., "scheduler": ...}``) runs the (width, seed) runs
    as cells of :func:`_runkit.sweep.run_sweep` (a Dask cluster, stored and resumable in
    ``DIR``; :func:`ntk_at`), with the same results.

    Examples
    --------
    >>> cfg = TrainConfig(data="moons", regime="theory", n_train=8, k_draws=2, steps=20,
    ...                   lr=0.5, n_eval=1)
    >>> s = gap_sweep([16, 256], cfg, [1, 2])
    >>> len(s.gaps), len(s.drop_mean), s.horizon
    (2, 1, 10.0)
    """
    widths = [check_positive_int("width", w) for w in widths]
    seeds = [int(s) for s in seeds]
    if len(widths) < 2 or len(set(widths)) != len(widths) or widths != sorted(widths):
        raise FlowsError(f"widths={widths!r} is not allowed; give at least 2 increasing widths")
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise FlowsError(f"seeds={seeds!r} is not allowed; give at least 2 distinct seeds")
    cfg = replace(base, regime="theory").resolved()
    runs = grid_points(ntk_at, {"width": widths, "run_seed": seeds}, {"base": cfg},
                       sweep, NTKComparison)
    gaps, at_end, ratio, flipped, passes, worst, devs = [], [], [], [], [], [], []
    for i in range(len(widths)):
        row, ends, rat, fl, ok = [], [], [], [], []
        cells = runs[i * len(seeds):(i + 1) * len(seeds)]
        for c in cells:
            obs, pred = np.asarray(c.observed), np.asarray(c.predicted)
            row.append(c.gap)
            ends.append(float(np.argmax(np.abs(obs - pred)) == obs.size - 1))
            rat.append(c.end_ratio)
            ok.append(c.passes)
            fl.append(c.drift.flipped)
        worst.append([c.curve.worst_ratio for c in cells])
        devs.append([c.curve.deviation for c in cells])
        gaps.append(row)
        at_end.append(float(np.mean(ends)))
        ratio.append(rat)
        flipped.append(float(np.mean(fl)))
        passes.append(float(np.mean(ok)))
    g = np.asarray(gaps)
    slopes = [loglog_slope(widths, g[:, j]).slope for j in range(len(seeds))]
    slope, slope_half = mean_ci(slopes)
    stats = [mean_ci(r) for r in g]
    drops = [mean_ci(g[i] - g[i + 1]) for i in range(len(widths) - 1)]
    sep = all(stats[i + 1][0] + stats[i + 1][1] < stats[i][0] - stats[i][1]
              for i in range(len(widths) - 1))
    return GapSweep(widths, seeds, int(cfg.n_train), int(cfg.k_draws), float(cfg.lr),
                    int(cfg.steps), float(cfg.lr) * cfg.steps, g.tolist(),
                    [m for m, _ in stats], [h for _, h in stats], [m for m, _ in drops],
                    [h for _, h in drops], bool(all(m - h > 0 for m, h in drops)), bool(sep),
                    at_end, [mean_ci(r)[0] for r in ratio], [mean_ci(r)[1] for r in ratio],
                    ratio, flipped, passes, END_RATIO, slope, slope_half, slopes, worst, devs,
                    CURVE_DEVIATION)
