"""Sweeps that put the theory's claims against measurements, run by run.

- :func:`width_point` / :func:`ntk_width_sweep`: the observed training-loss curve beside the
  infinite-width NTK prediction on the same draws (:mod:`flows.theory.ntk`), its gap against the
  tolerance K m^{-1/2}, the empirical kernel at start and end, flipped activations, the
  theorem's width, and the W2 bound.
- :func:`risk_point` / :func:`risk_sweep`: excess risk = objective - population minimum for
  train and test (:mod:`flows.theory.excess`), with 95% intervals, over several seeds per n, the
  generalization gap, a log-log slope of the excess test risk against n beside the n^{-1/2}
  rate of the kernel-regime generalization bounds, and the W2 bound against the measured W2
  and its floor.

Every function returns a typed result (:mod:`flows.theory.results`) whose ``to_dict()`` is
the JSON the run layer writes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from _runkit.stats import mean_ci
from _runkit.sweep import grid_points

from ..data import load_dataset
from ..errors import FlowsError, as_generator, check_positive_int, derive_seed
from ..evaluation.distances import w2
from ..evaluation.floors import noise_floor
from ..evaluation.nearest import memorization
from ..optimal import EmpiricalOptimalField
from ..path import get_path
from ..sampling.ode import integrate
from ..training.loop import TrainConfig, fixed_objective, prepare_data, train
from .bounds import bounds_table
from .excess import (
    Estimate,
    excess_risk,
    objective,
    optimal_velocity,
    population_minimum,
    target_mixture,
)
from .genbound import generalization_bound
from .kernel import loglog_slope
from .ntk import ntk_comparison
from .results import (
    MemorizationCurve,
    MemorizationPoint,
    MemorizationSweep,
    NTKWidthSweep,
    RiskPoint,
    RiskSweep,
    SampleChecks,
    WidthPoint,
)
from .wbound import certified_w2_bound, w2_bound

__all__ = ["memorization_sweep", "ntk_width_sweep", "risk_sweep"]


def _mixture(cfg: TrainConfig):
    mix = target_mixture(cfg.data)
    if mix is None or cfg.source not in (None, "normal") or cfg.path != "linear" \
            or cfg.sigma_min != 0:
        raise FlowsError(f"data={cfg.data!r} (source {cfg.source!r}, path {cfg.path!r}) has no "
                         "closed-form optimal field; the theory sweeps need a N(0, I) source, "
                         "the linear path and one of normal, 8gaussians, gmm<d>, moons, "
                         "circles, swissroll, spirals")
    return mix


def _train_excess(res, cfg, splits, source, lstar: Estimate) -> float:
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, res.field.spec, derive_seed(cfg.seed, "objective"))
    with torch.no_grad():
        return float((res.field.forward_z(z) - u).square().sum(1).mean()) - lstar.value


def _samples_part(res, cfg, splits, source, mix, ex: Estimate, n_samples: int,
                  sample_steps: int, bound_steps: int, pairs: int,
                  floor_pairs: int) -> SampleChecks:
    x0 = source.sample(n_samples, derive_seed(cfg.seed, "theory-samples"))
    x = integrate(res.field, x0, "midpoint", sample_steps).x
    ref = splits.heldout
    floor = noise_floor(load_dataset(cfg.data), w2, n_samples, ref.shape[0], floor_pairs,
                        derive_seed(cfg.seed, "floor"))
    measured = w2(x, ref)
    b = w2_bound(res.field, mix, x0, ex, steps=bound_steps, pairs=pairs)
    cert = certified_w2_bound(res.field, ex)
    mem = memorization(x, splits.train)
    nothing = w2(x0, ref)  # the model that does nothing: its samples are the source's
    return SampleChecks(w2=measured, w2_floor=floor.mean, w2_floor_std=floor.std,
                        w2_bound=b.bound, w2_bound_factor=b.factor, w2_coupling=b.coupling,
                        w2_bound_holds=b.bound >= measured, w2_bound_ratio=b.bound / measured,
                        mu_max=b.mu_max, lipschitz_max=b.lipschitz_max,
                        memorized_fraction=mem.fraction, w2_source=nothing,
                        w2_bound_vs_source=b.bound / nothing,
                        w2_bound_vacuous=b.bound >= nothing,
                        w2_bound_trajectory=b.bound_trajectory,
                        w2_bound_trajectory_factor=b.factor_trajectory,
                        w2_bound_trajectory_holds=b.bound_trajectory >= measured,
                        w2_bound_trajectory_vs_source=b.bound_trajectory / nothing,
                        w2_bound_trajectory_vacuous=b.bound_trajectory >= nothing,
                        w2_bound_certified=b.certified, w2_bound_trajectory_certified=False,
                        w2_lipschitz_bound=cert.bound, w2_lipschitz_bound_log10=cert.log10_bound,
                        w2_lipschitz_bound_certified=cert.certified, w2_lipschitz_mu=cert.mu,
                        w2_lipschitz_constant=cert.lipschitz,
                        w2_lipschitz_bound_holds=cert.bound >= measured,
                        w2_lipschitz_bound_ratio=cert.bound / measured,
                        w2_lipschitz_bound_vs_source=cert.bound / nothing,
                        w2_lipschitz_bound_vacuous=cert.bound >= nothing)


def width_point(cfg: TrainConfig, lstar: Estimate, n_test: int = 20_000, n_samples: int = 1000,
                sample_steps: int = 20, bound_steps: int = 40, pairs: int = 200,
                floor_pairs: int = 5) -> WidthPoint:
    """One theory-regime run at width ``cfg.width``: NTK comparison, excess risk, W2 bound.

    Returns
    -------
    WidthPoint
        The observed and predicted curves (``losses``, ``ntk_losses``), the gap and its
        tolerance, kernel drift, flipped fraction, the theorem's width and step, the excess
        risks, W2 with floor (mean, std) and the bound.
    """
    cfg = cfg.resolved()
    mix = _mixture(cfg)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    cmp = ntk_comparison(cfg, splits, source, result=res)
    ex = excess_risk(res.field, load_dataset(cfg.data), n_test, derive_seed(cfg.seed, "excess"))
    return WidthPoint(
        width=cfg.width, n=cfg.n_train, k=cfg.k_draws, lr=cfg.lr, steps=cfg.steps,
        lambda_0=cmp.lambda_0, losses=cmp.observed, ntk_losses=cmp.predicted, ntk_gap=cmp.gap,
        ntk_tolerance=cmp.tolerance, ntk_within=cmp.within, kernel=cmp.drift,
        required_width=cmp.requirements.width, required_lr=cmp.requirements.lr,
        final_loss=cmp.observed[-1], final_ntk_loss=cmp.predicted[-1], excess_test=ex.value,
        excess_test_ci95=ex.half_width,
        excess_train=_train_excess(res, cfg, splits, source, lstar),
        samples=_samples_part(res, cfg, splits, source, mix, ex, n_samples, sample_steps,
                              bound_steps, pairs, floor_pairs),
        ntk_end_ratio=cmp.end_ratio, ntk_passes=cmp.passes,
        ntk_worst_ratio=cmp.curve.worst_ratio, ntk_deviation=cmp.curve.deviation)


def ntk_width_sweep(widths: list[int], base: TrainConfig, **kwargs) -> NTKWidthSweep:
    """:func:`width_point` at each width (same data, n, k, lr, seed): the NTK loss curves,
    excess risks and W2 bound against m.

    Not :func:`flows.theory.regime.width_sweep` (drift, lambda_0 and W2 of plain theory runs);
    ``kwargs`` go to :func:`width_point`.

    Returns
    -------
    NTKWidthSweep
        The runs, the population minimum, the gaps, ``gap_monotone`` (the NTK gap falls
        strictly with m) and whether the W2 bound holds in every run.
    """
    widths = [check_positive_int("width", w) for w in widths]
    base = replace(base, regime="theory")
    lstar = population_minimum(load_dataset(base.data), seed=derive_seed(base.seed, "lstar"))
    runs = [width_point(replace(base, width=w), lstar, **kwargs) for w in widths]
    gaps = [r.ntk_gap for r in runs]
    falls = all(gaps[i + 1] < gaps[i] for i in range(len(gaps) - 1))
    return NTKWidthSweep(runs, widths, lstar, gaps, bool(falls),
                         all(r.samples.w2_bound_holds for r in runs),
                         [r.ntk_passes for r in runs])


def risk_point(cfg: TrainConfig, lstar: Estimate, n_test: int = 20_000, n_samples: int = 1000,
               sample_steps: int = 20, bound_steps: int = 40, pairs: int = 200,
               floor_pairs: int = 3, samples: bool = True, gen_groups: int = 1000) -> RiskPoint:
    """One theory-regime run at ``cfg.n_train`` points: excess risks, gap, W2 and its bound.

    ``generalization_gap`` is the test objective minus the training objective;
    ``gap_floor`` is the same difference for the population-optimal field u* on the same draws
    (what a perfect field reads: noise of the two finite objectives), and ``excess_gap`` =
    excess test - excess train = gap - gap floor. ``samples=False`` skips the samples, W2 and
    its bound (the risks alone). The computed bound on the excess gap
    (:func:`flows.theory.genbound.generalization_bound`) uses ``gen_groups`` Monte Carlo pairs
    of population groups.

    Returns
    -------
    RiskPoint
    """
    cfg = cfg.resolved()
    mix = _mixture(cfg)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    ds = load_dataset(cfg.data)
    ex = excess_risk(res.field, ds, n_test, derive_seed(cfg.seed, "excess"))
    test = objective(res.field, ds.sample(n_test, derive_seed(cfg.seed, "test-x1")),
                     derive_seed(cfg.seed, "test-draws"))
    train_excess = _train_excess(res, cfg, splits, source, lstar)
    floor = gap_floor(cfg, splits, source, mix, ds, n_test)
    gap = test.value - (train_excess + lstar.value)
    checks = None
    if samples:
        checks = _samples_part(res, cfg, splits, source, mix, ex, n_samples, sample_steps,
                               bound_steps, pairs, floor_pairs)
    gb = generalization_bound(res.field, res.initial_W, ds, mix, cfg.n_train, cfg.k_draws,
                              lstar.value, groups=gen_groups,
                              seed=derive_seed(cfg.seed, "generalization"))
    return RiskPoint(n=cfg.n_train, seed=cfg.seed, excess_test=ex.value,
                     excess_test_se=ex.se, excess_train=train_excess,
                     test_objective=test.value, test_objective_se=test.se,
                     train_objective=train_excess + lstar.value, generalization_gap=gap,
                     gap_floor=floor, excess_gap=gap - floor, samples=checks,
                     gen_bound=gb.bound, gen_bound_ratio=gb.ratio, gen_bound_vacuous=gb.vacuous,
                     gen_bound_holds=gap - floor <= gb.bound, gen_rademacher=gb.rademacher,
                     gen_deviation=gb.deviation, gen_radius=gb.radius, gen_distance=gb.distance,
                     gen_bound_certified=gb.certified)


def gap_floor(cfg: TrainConfig, splits, source, mix, ds, n_test: int) -> float:
    """The generalization gap of the population-optimal field u* on a run's draws.

    test objective of u* (``n_test`` fresh test draws, the seeds :func:`risk_point` uses)
    minus its objective on the run's fixed training draws: 0 in expectation, so what a raw gap
    reads for a perfect field at these sizes.
    """
    def u_star(x, t):
        return optimal_velocity(mix, x.double(), t.double())

    test = objective(u_star, ds.sample(n_test, derive_seed(cfg.seed, "test-x1")),
                     derive_seed(cfg.seed, "test-draws"))
    x_t, t, u = training_draws(cfg, splits, source)
    train = float((optimal_velocity(mix, x_t, t) - u).square().sum(1).mean())
    return test.value - train


def objective_draws(x1: torch.Tensor, source, k: int, path: str, sigma_min: float,
                    seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_t (N, d), t (N, 1), u (N, d)), float64, of the fixed objective on points x1 (n, d):
    the draws behind :func:`flows.training.loop.fixed_objective` with the same arguments (same
    order, before the features), N = n k."""
    g = as_generator(seed)
    x1k = x1.repeat_interleave(check_positive_int("k", k), dim=0)
    x0 = source.sample(x1k.shape[0], g)
    t = torch.rand(x1k.shape[0], 1, generator=g)
    ps = get_path(path, sigma_min).sample(x0, x1k, t, g)
    return ps.x_t.double(), t.double(), ps.dx_t.double()


def training_draws(cfg: TrainConfig, splits, source) -> tuple[torch.Tensor, torch.Tensor,
                                                               torch.Tensor]:
    """:func:`objective_draws` of a theory run's training objective (seed "objective")."""
    return objective_draws(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, derive_seed(cfg.seed, "objective"))


def _pooled(vals: list[float], ses: list[float]) -> tuple[float, float]:
    """Mean over seeds and its 95% half-width: Student t over the seed-to-seed spread (one
    seed: 1.96 x that run's test standard error)."""
    v = np.asarray(vals)
    if v.size == 1:
        return float(v[0]), 1.96 * float(ses[0])
    return mean_ci(v)


def _slope_interval(ns: list[int], seeds: list[int], runs: list[RiskPoint],
                    key: str) -> tuple[float | None, float | None]:
    """Log-log slope of the per-n mean of ``key`` against n, and a 95% half-width from the
    spread of the per-seed slopes (Student t; None with one seed or a non-positive value)."""
    means = [float(np.mean([getattr(r, key) for r in runs if r.n == n])) for n in ns]
    if len(ns) < 2 or min(means) <= 0:
        return None, None
    slope = loglog_slope(ns, means).slope
    per_seed = []
    for s in seeds:
        ys = [next(getattr(r, key) for r in runs if r.n == n and r.seed == s) for n in ns]
        if min(ys) <= 0:
            return slope, None
        per_seed.append(loglog_slope(ns, ys).slope)
    return slope, _pooled(per_seed, [0.0])[1] if len(per_seed) > 1 else None


def risk_at(params: dict) -> RiskPoint:
    """:func:`risk_point` of ``params["base"]`` at ``n`` training points and seed ``run_seed``,
    against ``lstar``, with ``point_kwargs``: one grid point of :func:`risk_sweep`.

    A top-level function, so :func:`_runkit.sweep.grid_points` can run it here or on a Dask
    cluster's workers; the run's seed is ``run_seed``, never the ``seed`` the sweep engine
    adds from the coordinates, so a result does not depend on how the grid is run.

    Returns
    -------
    RiskPoint
    """
    cfg = replace(params["base"], n_train=params["n"], seed=params["run_seed"])
    return risk_point(cfg, params["lstar"], **params["point_kwargs"])


def risk_sweep(ns: list[int], base: TrainConfig, seeds: list[int], sweep: dict | None = None,
               **kwargs) -> RiskSweep:
    """:func:`risk_point` for every n and seed; per-n means with 95% intervals over seeds.

    Intervals are Student-t over the seeds (with 3 seeds the factor is 4.30, not 1.96).
    ``intervals_separate`` is True when each n's interval of the excess test risk lies strictly
    below the previous one's; ``excess_slope`` is the log-log slope of its mean against n, with
    ``excess_slope_ci95`` from the per-seed slopes; the kernel regime's generalization bounds
    decay like n^{-1/2} (``bound_rate``). The excess test risk is the excess training risk
    (what the ``steps`` of gradient descent leave unfitted) plus ``excess_gap`` (test minus
    train excess, the gap with its floor removed), each reported with its own slope.

    ``kwargs`` go to :func:`risk_point`; ``sweep`` (``{"out": DIR, "workers": ...,
    "scheduler": ...}``) runs the (n, seed) runs as cells of :func:`_runkit.sweep.run_sweep`
    (a Dask cluster, stored and resumable in ``DIR``; :func:`risk_at`),
    with the same results.

    Returns
    -------
    RiskSweep
    """
    ns = [check_positive_int("n", n) for n in ns]
    seeds = [int(s) for s in seeds]
    base = replace(base, regime="theory")
    lstar = population_minimum(load_dataset(base.data), seed=derive_seed(base.seed, "lstar"))
    runs = grid_points(risk_at, {"n": ns, "run_seed": seeds},
                       {"base": base, "lstar": lstar, "point_kwargs": kwargs}, sweep, RiskPoint)
    out: dict = {}
    for key, se_key in (("excess_test", "excess_test_se"),
                        ("generalization_gap", "test_objective_se"),
                        ("excess_train", None), ("gap_floor", None), ("excess_gap", None)):
        means, halfs = [], []
        for n in ns:
            rs = [r for r in runs if r.n == n]
            m, h = _pooled([getattr(r, key) for r in rs],
                           [getattr(r, se_key) if se_key else 0.0 for r in rs])
            means.append(m)
            halfs.append(h)
        out[key], out[f"{key}_ci95"] = means, halfs
    means, halfs = out["excess_test"], out["excess_test_ci95"]
    out["intervals_separate"] = bool(all(means[i + 1] + halfs[i + 1] < means[i] - halfs[i]
                                         for i in range(len(ns) - 1)))
    out["endpoints_separate"] = bool(means[-1] + halfs[-1] < means[0] - halfs[0])
    for key in ("excess_test", "excess_train", "excess_gap"):
        slope, half = _slope_interval(ns, seeds, runs, key)
        name = "excess" if key == "excess_test" else key
        out[f"{name}_slope"], out[f"{name}_slope_ci95"] = slope, half
    out |= bound_summaries(runs, ns)
    return RiskSweep(runs=runs, ns=ns, seeds=seeds, population_minimum=lstar, bound_rate=-0.5,
                     **out)


def bound_summaries(runs: list[RiskPoint], ns: list[int]) -> dict:
    """Per n, the bounds' means, their ratios to the number that makes them informative and
    the fraction of runs where they are vacuous; whether they hold in every run. The W2
    entries are None without samples, the generalization entries for runs without its bound.

    Returns
    -------
    dict
        Keyword arguments of :class:`flows.theory.results.RiskSweep`.
    """
    def per_n(get) -> list[float]:
        return [float(np.mean([float(get(r)) for r in runs if r.n == n])) for n in ns]

    out: dict = {}
    if all(r.gen_bound is not None for r in runs):
        out.update(gen_bound=per_n(lambda r: r.gen_bound),
                   gen_bound_ratio=per_n(lambda r: r.gen_bound_ratio),
                   gen_bound_vacuous_fraction=per_n(lambda r: r.gen_bound_vacuous),
                   gen_bound_holds_all=all(r.gen_bound_holds for r in runs))
    if all(r.samples is not None for r in runs):
        out["w2_bound_holds_all"] = all(r.samples.w2_bound_holds for r in runs)
    if all(r.samples is not None and r.samples.w2_source is not None for r in runs):
        out.update(
            w2_bound_vs_source=per_n(lambda r: r.samples.w2_bound_vs_source),
            w2_bound_vacuous_fraction=per_n(lambda r: r.samples.w2_bound_vacuous),
            w2_bound_trajectory=per_n(lambda r: r.samples.w2_bound_trajectory),
            w2_bound_trajectory_vs_source=per_n(
                lambda r: r.samples.w2_bound_trajectory_vs_source),
            w2_bound_trajectory_vacuous_fraction=per_n(
                lambda r: r.samples.w2_bound_trajectory_vacuous),
            w2_bound_trajectory_holds_all=all(r.samples.w2_bound_trajectory_holds
                                              for r in runs))
    if all(r.samples is not None and r.samples.w2_lipschitz_bound is not None for r in runs):
        out.update(
            w2_lipschitz_bound_log10=per_n(lambda r: r.samples.w2_lipschitz_bound_log10),
            w2_lipschitz_bound_vs_source=per_n(lambda r: r.samples.w2_lipschitz_bound_vs_source),
            w2_lipschitz_bound_vacuous_fraction=per_n(
                lambda r: r.samples.w2_lipschitz_bound_vacuous),
            w2_lipschitz_bound_holds_all=all(r.samples.w2_lipschitz_bound_holds for r in runs))
    names = ["gen_bound"] if "gen_bound" in out else []
    names += ["w2_bound", "w2_bound_trajectory"] if "w2_bound_vs_source" in out else []
    names += ["w2_lipschitz_bound"] if "w2_lipschitz_bound_holds_all" in out else []
    out["bounds"] = bounds_table(names)
    return out


def memorization_vs_time(field, x0: torch.Tensor, train_pts: torch.Tensor, steps: int = 20,
                         times: int = 11) -> MemorizationCurve:
    """Memorized fraction of the endpoint prediction x1_hat = x_t + (1 - t) v(x_t, t) along the
    reverse (sampling) process, at ``times`` equally spaced t in [0, 1]; x0 (N, d).

    Returns
    -------
    MemorizationCurve
        The times and the fraction at each.
    """
    sol = integrate(field, x0, "midpoint", steps, save_trajectory=True)
    idx = np.linspace(0, steps, times).round().astype(int)
    ts, fr = [], []
    for i in idx:
        t = float(sol.times[i])
        with torch.no_grad():
            x1_hat = sol.trajectory[i] + (1 - t) * field(sol.trajectory[i], torch.tensor(t))
        ts.append(t)
        fr.append(memorization(x1_hat, train_pts).fraction)
    return MemorizationCurve(ts, fr)


def memorization_point(n: int, data: str = "moons", width: int = 256, steps: int = 3000,
                       n_samples: int = 1000, seed: int = 0, reference_steps: int = 100,
                       vs_time: bool = False) -> MemorizationPoint:
    """Memorized fraction at n training points: a trained field (practice regime) and the
    exact empirical-optimal field (``reference_steps`` midpoint steps) beside the i.i.d.
    baseline; with ``vs_time`` also both along the reverse process
    (:func:`memorization_vs_time`).

    Returns
    -------
    MemorizationPoint
    """
    n = check_positive_int("n", n)
    cfg = TrainConfig(data=data, n_train=n, width=width, steps=steps, seed=seed,
                      checkpoint_every=max(1, steps))
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    x0 = source.sample(n_samples, derive_seed(seed, f"mem-{n}"))
    x = integrate(res.field, x0, "midpoint", 20).x
    ref = EmpiricalOptimalField(splits.train)
    m = memorization(x, splits.train, seed=seed)
    exact = memorization(integrate(ref, x0, "midpoint", reference_steps).x,
                         splits.train).fraction
    curves: dict = {}
    if vs_time:
        trained = memorization_vs_time(res.field, x0, splits.train)
        curves = {"t": trained.t, "trained_vs_time": trained.fraction,
                  "optimum_vs_time": memorization_vs_time(
                      ref, x0, splits.train, steps=reference_steps).fraction}
    return MemorizationPoint(n, m.fraction, m.fraction_fixed, m.criterion, exact, m.baseline,
                             **curves)


def memorization_at(params: dict) -> MemorizationPoint:
    """:func:`memorization_point` at ``n`` with the sweep's ``data``, ``width``, ``steps``,
    ``n_samples``, ``run_seed`` and ``reference_steps``; the curves along the reverse process
    when ``n`` is in ``vs_time_at``: one grid point of :func:`memorization_sweep`.

    A top-level function, so :func:`_runkit.sweep.grid_points` can run it here or on a Dask
    cluster's workers; the run's seed is ``run_seed``, never the ``seed`` the sweep engine
    adds from the coordinates, so a result does not depend on how the grid is run.

    Returns
    -------
    MemorizationPoint
    """
    return memorization_point(params["n"], params["data"], params["width"], params["steps"],
                              params["n_samples"], params["run_seed"],
                              params["reference_steps"], params["n"] in params["vs_time_at"])


def memorization_sweep(ns: list[int], data: str = "moons", width: int = 256, steps: int = 3000,
                       n_samples: int = 1000, seed: int = 0, reference_steps: int = 100,
                       sweep: dict | None = None) -> MemorizationSweep:
    """Memorized fraction against n for trained fields (practice regime) and for the exact
    empirical-optimal field (the memorizing reference, ``reference_steps`` midpoint steps),
    beside the i.i.d. baseline; and against time in the reverse process for the smallest and
    largest n. Per n also the calibrated ratio ``criterion`` and the trained fields' fraction
    at the fixed 1/3 (``memorized_trained_fixed``).

    One :func:`memorization_point` per n; ``sweep`` (``{"out": DIR, "workers": ...,
    "scheduler": ...}``) runs them as cells of :func:`_runkit.sweep.run_sweep` (a Dask
    cluster, stored and resumable in ``DIR``; :func:`memorization_at`),
    with the same results.

    Returns
    -------
    MemorizationSweep
    """
    ns = [check_positive_int("n", n) for n in ns]
    fixed = {"data": data, "width": width, "steps": steps, "n_samples": n_samples,
             "run_seed": seed, "reference_steps": reference_steps, "vs_time_at": [ns[0], ns[-1]]}
    points = grid_points(memorization_at, {"n": ns}, fixed, sweep,
                         MemorizationPoint)
    curves: dict = {}
    for p in points:
        if p.t is not None:
            curves[f"trained, n={p.n}"] = p.trained_vs_time
            curves[f"empirical optimum, n={p.n}"] = p.optimum_vs_time
            curves["t"] = p.t
    return MemorizationSweep(ns=ns, memorized_trained=[p.memorized_trained for p in points],
                             memorized_trained_fixed=[p.memorized_trained_fixed for p in points],
                             criterion=[p.criterion for p in points],
                             memorized_empirical_optimal=[p.memorized_empirical_optimal
                                                          for p in points],
                             iid_baseline=[p.iid_baseline for p in points], vs_time=curves,
                             width=width, steps=steps)
