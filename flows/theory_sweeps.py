"""Sweeps that put the theory's claims against measurements, run by run.

- :func:`width_point` / :func:`width_sweep`: the observed training-loss curve beside the
  infinite-width NTK prediction on the same draws (:mod:`flows.ntk`), its gap against the
  tolerance K m^{-1/2}, the empirical kernel at start and end, flipped activations, the
  theorem's width, and the W2 bound.
- :func:`risk_point` / :func:`risk_sweep`: excess risk = objective - population minimum for
  train and test (:mod:`flows.excess`), with 95% intervals, over several seeds per n, the
  generalization gap, a log-log slope of the excess test risk against n beside the n^{-1/2}
  rate of the kernel-regime generalization bounds, and the W2 bound against the measured W2
  and its floor.

Every point returns a plain dict (JSON-ready), written by the run layer.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch

from .data import load_dataset
from .errors import FlowsError, check_positive_int, derive_seed
from .evaluation import w2
from .excess import Estimate, excess_risk, objective, population_minimum, target_mixture
from .floors import noise_floor
from .memorization import memorization
from .ntk import ntk_comparison
from .sample import integrate
from .theory import loglog_slope
from .training import TrainConfig, fixed_objective, prepare_data, train
from .wbound import w2_bound


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
                  sample_steps: int, bound_steps: int, pairs: int, floor_pairs: int) -> dict:
    x0 = source.sample(n_samples, derive_seed(cfg.seed, "theory-samples"))
    x = integrate(res.field, x0, "midpoint", sample_steps).x
    ref = splits.heldout
    floor = noise_floor(load_dataset(cfg.data), w2, n_samples, ref.shape[0], floor_pairs,
                        derive_seed(cfg.seed, "floor"))
    measured = w2(x, ref)
    b = w2_bound(res.field, mix, x0, ex, steps=bound_steps, pairs=pairs)
    mem = memorization(x, splits.train)
    return {"w2": measured, "w2_floor": floor.mean, "w2_floor_std": floor.std,
            "w2_bound": b.bound, "w2_bound_factor": b.factor, "w2_coupling": b.coupling,
            "w2_bound_holds": b.bound >= measured, "w2_bound_ratio": b.bound / measured,
            "mu_max": b.mu_max, "lipschitz_max": b.lipschitz_max,
            "memorized_fraction": mem.fraction}


def width_point(cfg: TrainConfig, lstar: Estimate, n_test: int = 20_000, n_samples: int = 1000,
                sample_steps: int = 20, bound_steps: int = 40, pairs: int = 200,
                floor_pairs: int = 5) -> dict:
    """One theory-regime run at width ``cfg.width``: NTK comparison, excess risk, W2 bound.

    Returns a dict with the observed and predicted curves (``losses``, ``ntk_losses``), the gap
    and its tolerance, kernel drift, flipped fraction, the theorem's width and step, the excess
    risks, W2 with floor (mean, std) and the bound.
    """
    cfg = cfg.resolved()
    mix = _mixture(cfg)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    cmp = ntk_comparison(cfg, splits, source, result=res)
    ex = excess_risk(res.field, load_dataset(cfg.data), n_test, derive_seed(cfg.seed, "excess"))
    out = {"width": cfg.width, "n": cfg.n_train, "k": cfg.k_draws, "lr": cfg.lr,
           "steps": cfg.steps, "lambda_0": cmp.lambda_0, "losses": cmp.observed,
           "ntk_losses": cmp.predicted, "ntk_gap": cmp.gap, "ntk_tolerance": cmp.tolerance,
           "ntk_within": cmp.within, "kernel": cmp.drift.to_dict(),
           "required_width": cmp.requirements.width, "required_lr": cmp.requirements.lr,
           "final_loss": cmp.observed[-1], "final_ntk_loss": cmp.predicted[-1],
           "excess_test": ex.value, "excess_test_ci95": ex.half_width,
           "excess_train": _train_excess(res, cfg, splits, source, lstar)}
    return out | _samples_part(res, cfg, splits, source, mix, ex, n_samples, sample_steps,
                               bound_steps, pairs, floor_pairs)


def width_sweep(widths: list[int], base: TrainConfig, **kwargs) -> dict:
    """:func:`width_point` at each width (same data, n, k, lr, seed).

    Adds ``gap_monotone`` (the NTK gap falls strictly with m) and the population minimum.
    """
    widths = [check_positive_int("width", w) for w in widths]
    base = replace(base, regime="theory")
    lstar = population_minimum(load_dataset(base.data), seed=derive_seed(base.seed, "lstar"))
    runs = [width_point(replace(base, width=w), lstar, **kwargs) for w in widths]
    gaps = [r["ntk_gap"] for r in runs]
    falls = all(gaps[i + 1] < gaps[i] for i in range(len(gaps) - 1))
    return {"runs": runs, "widths": widths, "population_minimum": lstar.to_dict(),
            "ntk_gap": gaps, "gap_monotone": bool(falls),
            "w2_bound_holds_all": all(r["w2_bound_holds"] for r in runs)}


def risk_point(cfg: TrainConfig, lstar: Estimate, n_test: int = 20_000, n_samples: int = 1000,
               sample_steps: int = 20, bound_steps: int = 40, pairs: int = 200,
               floor_pairs: int = 3) -> dict:
    """One theory-regime run at ``cfg.n_train`` points: excess risks, gap, W2 and its bound."""
    cfg = cfg.resolved()
    mix = _mixture(cfg)
    splits, source = prepare_data(cfg)
    res = train(cfg, splits=splits, source=source, progress=False)
    ds = load_dataset(cfg.data)
    ex = excess_risk(res.field, ds, n_test, derive_seed(cfg.seed, "excess"))
    test = objective(res.field, ds.sample(n_test, derive_seed(cfg.seed, "test-x1")),
                     derive_seed(cfg.seed, "test-draws"))
    train_excess = _train_excess(res, cfg, splits, source, lstar)
    out = {"n": cfg.n_train, "seed": cfg.seed, "excess_test": ex.value,
           "excess_test_se": ex.se, "excess_train": train_excess,
           "test_objective": test.value, "test_objective_se": test.se,
           "train_objective": train_excess + lstar.value,
           "generalization_gap": test.value - (train_excess + lstar.value)}
    return out | _samples_part(res, cfg, splits, source, mix, ex, n_samples, sample_steps,
                               bound_steps, pairs, floor_pairs)


def _pooled(vals: list[float], ses: list[float]) -> tuple[float, float]:
    """Mean over seeds and its standard error (seed-to-seed spread and test noise)."""
    v = np.asarray(vals)
    if v.size == 1:
        return float(v[0]), float(ses[0])
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def risk_sweep(ns: list[int], base: TrainConfig, seeds: list[int], **kwargs) -> dict:
    """:func:`risk_point` for every n and seed; per-n means with 95% intervals over seeds.

    ``intervals_separate`` is True when each n's interval lies strictly below the previous
    one's; ``slope`` is the log-log slope of the mean excess test risk against n (the kernel
    regime's generalization bounds decay like n^{-1/2}).
    """
    ns = [check_positive_int("n", n) for n in ns]
    base = replace(base, regime="theory")
    lstar = population_minimum(load_dataset(base.data), seed=derive_seed(base.seed, "lstar"))
    runs = [risk_point(replace(base, n_train=n, seed=s), lstar, **kwargs)
            for n in ns for s in seeds]
    means, halfs, gaps, gap_halfs = [], [], [], []
    for n in ns:
        rs = [r for r in runs if r["n"] == n]
        m, se = _pooled([r["excess_test"] for r in rs], [r["excess_test_se"] for r in rs])
        g, gse = _pooled([r["generalization_gap"] for r in rs],
                         [r["test_objective_se"] for r in rs])
        means.append(m)
        halfs.append(1.96 * se)
        gaps.append(g)
        gap_halfs.append(1.96 * gse)
    separate = all(means[i + 1] + halfs[i + 1] < means[i] - halfs[i] for i in range(len(ns) - 1))
    fit = loglog_slope(ns, means) if len(ns) >= 2 else None
    return {"runs": runs, "ns": ns, "seeds": list(seeds),
            "population_minimum": lstar.to_dict(),
            "excess_test": means, "excess_test_ci95": halfs,
            "generalization_gap": gaps, "generalization_gap_ci95": gap_halfs,
            "intervals_separate": bool(separate),
            "excess_slope": None if fit is None else fit.slope, "bound_rate": -0.5,
            "w2_bound_holds_all": all(r["w2_bound_holds"] for r in runs)}


def memorization_vs_time(field, x0: torch.Tensor, train_pts: torch.Tensor, steps: int = 20,
                         times: int = 11) -> tuple[list[float], list[float]]:
    """Memorized fraction of the endpoint prediction x1_hat = x_t + (1 - t) v(x_t, t) along the
    reverse (sampling) process, at ``times`` equally spaced t in [0, 1]; x0 (N, d).

    Returns (t values, fractions).
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
    return ts, fr


def memorization_sweep(ns: list[int], data: str = "moons", width: int = 256, steps: int = 3000,
                       n_samples: int = 1000, seed: int = 0) -> dict:
    """Memorized fraction against n for trained fields (practice regime) and for the exact
    empirical-optimal field (the memorizing reference), beside the i.i.d. baseline; and
    against time in the reverse process for the smallest and largest n.
    """
    from .optimal import EmpiricalOptimalField

    ns = [check_positive_int("n", n) for n in ns]
    model, exact, base, curves = [], [], [], {}
    for n in ns:
        cfg = TrainConfig(data=data, n_train=n, width=width, steps=steps, seed=seed,
                          checkpoint_every=max(1, steps))
        splits, source = prepare_data(cfg)
        res = train(cfg, splits=splits, source=source, progress=False)
        x0 = source.sample(n_samples, derive_seed(seed, f"mem-{n}"))
        x = integrate(res.field, x0, "midpoint", 20).x
        ref = EmpiricalOptimalField(splits.train)
        m = memorization(x, splits.train, seed=seed)
        model.append(m.fraction)
        base.append(m.baseline)
        exact.append(memorization(integrate(ref, x0, "midpoint", 50).x, splits.train).fraction)
        if n in (ns[0], ns[-1]):
            t, f = memorization_vs_time(res.field, x0, splits.train)
            curves[f"trained, n={n}"] = f
            curves[f"empirical optimum, n={n}"] = memorization_vs_time(ref, x0, splits.train,
                                                                       steps=50)[1]
            curves["t"] = t
    return {"ns": ns, "memorized_trained": model, "memorized_empirical_optimal": exact,
            "iid_baseline": base, "vs_time": curves, "width": width, "steps": steps}
