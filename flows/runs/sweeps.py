"""Run directories of the theory sweeps: ``flows experiment risk | memorization``.

Same contract as :mod:`flows.runs.run`: inputs and the memory estimate are checked before anything
is written, then everything goes into a locked :class:`_runkit.RunDir` (``config.json`` in the
one shape, ``metrics.json`` with the numbers the seeds determine, figures as PNG).

- :func:`run_risk_experiment`: :func:`flows.theory.sweeps.risk_sweep` (excess risk =
  objective - population minimum, train and test, per n and seed; Student-t intervals over the
  seeds; log-log slopes with intervals beside the bound's n^{-1/2}; the computed
  generalization bound beside L*; the W2 bounds beside W2(source, data), the measured W2 and its
  floor). Figures ``excess_vs_n.png``, ``generalization_bound_vs_n.png`` and, with samples,
  ``w2_bound_vs_n.png``.
- :func:`run_memorization_experiment`: :func:`flows.theory.sweeps.memorization_sweep`
  (memorized fraction against n for trained fields and for the empirical-optimal field, and
  along the reverse process). Figures ``memorization_vs_n.png``, ``memorization_vs_time.png``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _runkit import BadInput, Result, RunDir, check_int, check_positive_int
from _runkit.runtime import with_threads
from _runkit.sweep import check_sweep_options

from ..data import load_dataset
from ..errors import SEED_MAX
from ..plotting.theory import (
    plot_excess_vs_n,
    plot_generalization_bound,
    plot_memorization,
    plot_w2_bound,
)
from ..theory.excess import target_mixture
from ..theory.results import MemorizationSweep, RiskPoint, RiskSweep
from ..theory.sweeps import memorization_sweep, risk_sweep
from ..training.loop import TrainConfig
from .memory import check_terms, theory_sweep_bytes

__all__ = ["run_risk_experiment", "run_memorization_experiment", "TheoryExperimentRun",
           "RISK_NS", "RISK_SEEDS", "MEMORIZATION_NS"]

RISK_NS = (32, 64, 128, 256, 512, 1024)
RISK_SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
MEMORIZATION_NS = (8, 32, 128, 512, 2048)


@dataclass(frozen=True)
class TheoryExperimentRun(Result):
    """What ``flows experiment risk | memorization`` wrote: the sweep's numbers and figures.

    ``to_dict()`` is the content of ``metrics.json``.
    """

    out: str
    kind: str
    result: RiskSweep | MemorizationSweep
    figures: list[str]

    def to_dict(self) -> dict:
        """The sweep's numbers (``result.to_dict()``) with the kind and the figure names."""
        return {"kind": self.kind, **self.result.to_dict(), "figures": self.figures}


def _values(values, name: str, lo: int = 1) -> list[int]:
    if not isinstance(values, (list, tuple)) or not values:
        raise BadInput(f"{name}={values!r} is not allowed; give at least one value")
    out = [check_int(name, v, lo=lo, hi=SEED_MAX) for v in values]
    if len(set(out)) != len(out):
        raise BadInput(f"{name}={list(values)!r} repeats a value; give each value once")
    return out


def _sized(terms: dict, extra: dict) -> dict:
    """Memory terms named by this command's options (n_eval is its n_samples)."""
    terms = dict(terms)
    terms["n_samples"] = terms.pop("n_eval")
    for key, v in extra.items():
        terms[key] = terms.get(key, 0.0) + v
    return terms


def _check_sweep_options(sweep: dict | None) -> None:
    """Refuse bad sweep options (``workers`` < 0, a scheduler address dask cannot parse)
    before anything is written."""
    if sweep is not None:
        check_sweep_options(sweep.get("workers"), sweep.get("scheduler"))


def _sweep_in(sweep: dict | None, out: Path) -> dict | None:
    """The sweep options with the cells stored under ``out`` (None: run in this process)."""
    return None if sweep is None else {**sweep, "out": out}


def _mean_by_n(runs: list[RiskPoint], ns: list[int], key: str) -> list[float]:
    """Mean over seeds, per n, of one sample check (``w2``, ``w2_floor``, ...)."""
    return [float(np.mean([getattr(r.samples, key) for r in runs if r.n == n])) for n in ns]


@with_threads
def run_risk_experiment(out: str | Path, ns: list[int] = RISK_NS,
                        seeds: list[int] = RISK_SEEDS, data: str = "moons", width: int = 1024,
                        k: int = 4, steps: int = 500, lr: float | None = None,
                        n_test: int = 20_000, n_samples: int = 1000,
                        sweep: dict | None = None) -> TheoryExperimentRun:
    """Excess risk against n over several seeds, in the theory regime; writes ``out``.

    Parameters
    ----------
    out : path
        Run directory (created, locked).
    ns : list of int
        Training points n (each >= 1, distinct).
    seeds : list of int
        One run per seed and n (>= 0, distinct); intervals are over them (>= 2 for a spread).
    data : str
        A data set with a closed-form optimal field (normal, 8gaussians, gmm<d>, moons,
        circles, swissroll, spirals).
    width, k, steps : int
        Hidden width m, fixed (t, x0) draws per point, gradient-descent steps.
    lr : float or None
        Step size (None: the theory regime's 2.0).
    n_test : int
        Fresh test draws behind each excess test risk.
    n_samples : int
        Generated points for W2, its floor and its bound; 0 skips them.
    sweep : dict or None
        ``{"workers": ..., "scheduler": ...}``: the runs as cells of a Dask sweep stored under
        ``out`` (a rerun resumes them); None runs them one after another in this process. The
        numbers are the same.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    TheoryExperimentRun
    """
    ns, seeds = _values(ns, "ns"), _values(seeds, "seeds", lo=0)
    for name, v in (("width", width), ("k", k), ("steps", steps), ("n_test", n_test)):
        check_positive_int(name, v)
    n_samples = check_int("n_samples", n_samples, lo=0, hi=SEED_MAX)
    _check_sweep_options(sweep)
    # seed 0 draws the population minimum; every run takes its own seed from ``seeds``
    base = TrainConfig(data=data, regime="theory", width=width, k_draws=k, steps=steps, lr=lr,
                       seed=0, n_eval=max(1, n_samples))
    _check_risk_data(data, ns, k, width, n_test, n_samples)
    config = {"kind": "risk", "ns": ns, "seeds": seeds, "data": data, "width": width, "k": k,
              "steps": steps, "lr": base.resolved().lr, "n_test": n_test,
              "n_samples": n_samples}
    point = {"n_test": n_test, "samples": n_samples > 0}
    if n_samples:
        point["n_samples"] = n_samples
    with RunDir(out, command="flows experiment risk", config=config, seed=seeds[0]) as run:
        res = risk_sweep(ns, base, seeds, _sweep_in(sweep, run.out), **point)
        figs = _risk_figures(res, ns, n_samples)
        done = TheoryExperimentRun(str(run.out), "risk", res, run.write_figures(figs))
        run.write_json("metrics.json", done)
    return done


def _check_risk_data(data: str, ns: list[int], k: int, width: int, n_test: int,
                     n_samples: int) -> None:
    """Raise :class:`BadInput` for data without a closed-form optimal field, or a memory
    estimate of the sweep over the limit."""
    ds = load_dataset(data, name="data")
    if ds.pool is not None or target_mixture(data) is None:
        raise BadInput(f"data={data!r} is not allowed; the excess risk needs a closed-form "
                       "optimal field: normal, 8gaussians, gmm<d>, moons, circles, swissroll, "
                       "spirals")
    check_terms(_sized(theory_sweep_bytes(max(ns), k, width, ds.dim, max(1, n_samples)),
                       {"n_test": float(n_test) * 1000 * 8 * 4}))  # (n_test, mixture) posterior


def _risk_figures(res, ns: list[int], n_samples: int) -> dict:
    """The excess risk against n and, with samples, the W2 bound beside the measured W2."""
    figs = {"excess_vs_n.png": plot_excess_vs_n(
        ns, res.excess_test, res.excess_test_ci95, res.excess_train,
        res.excess_slope, gap=res.excess_gap, gap_halfs=res.excess_gap_ci95)}
    if res.gen_bound is not None:
        figs["generalization_bound_vs_n.png"] = plot_generalization_bound(
            ns, res.excess_gap, res.excess_gap_ci95, res.gen_bound,
            res.population_minimum.value)
    if n_samples:
        rr = res.runs
        figs["w2_bound_vs_n.png"] = plot_w2_bound(
            ns, _mean_by_n(rr, ns, "w2"), _mean_by_n(rr, ns, "w2_floor"),
            _mean_by_n(rr, ns, "w2_bound"), _mean_by_n(rr, ns, "w2_coupling"),
            "training points n", trajectory=res.w2_bound_trajectory,
            source=_mean_by_n(rr, ns, "w2_source"), certified_log10=res.w2_lipschitz_bound_log10)
    return figs


@with_threads
def run_memorization_experiment(out: str | Path, ns: list[int] = MEMORIZATION_NS,
                                data: str = "moons", width: int = 256, steps: int = 3000,
                                n_samples: int = 1000, seed: int = 0,
                                sweep: dict | None = None) -> TheoryExperimentRun:
    """Memorized fraction against n and along the reverse process; writes ``out``.

    Trained fields (practice regime, ``width``, ``steps``) and the exact empirical-optimal
    field of the same training points, judged against the whole training set with the
    calibrated criterion (:func:`flows.evaluation.nearest.memorization`).

    Parameters
    ----------
    out : path
    ns : list of int
        Training points n (each >= 3, distinct).
    data : str
        Dataset name.
    width, steps : int
    n_samples : int
        Generated points per field.
    seed : int
    sweep : dict or None
        As in :func:`run_risk_experiment` (one cell per n).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    TheoryExperimentRun
    """
    ns = _values(ns, "ns", lo=3)
    for name, v in (("width", width), ("steps", steps), ("n_samples", n_samples)):
        check_positive_int(name, v)
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    _check_sweep_options(sweep)
    TrainConfig(data=data, width=width, steps=steps, seed=seed)
    ds = load_dataset(data, name="data")
    if ds.pool is not None and max(ns) > ds.pool.shape[0]:
        raise BadInput(f"ns={ns!r} is not allowed for data={data!r}: it has "
                       f"{ds.pool.shape[0]} rows")
    check_terms(_sized(theory_sweep_bytes(max(ns), 1, width, ds.dim, n_samples),
                       {"n_samples": float(n_samples) * max(ns) * 8 * 3}))  # optimal field
    config = {"kind": "memorization", "ns": ns, "data": data, "width": width,
              "steps": steps, "n_samples": n_samples}
    with RunDir(out, command="flows experiment memorization", config=config, seed=seed) as run:
        res = memorization_sweep(ns, data, width, steps, n_samples, seed,
                                 sweep=_sweep_in(sweep, run.out))
        curves = dict(res.vs_time)
        t = curves.pop("t")
        figs = {
            "memorization_vs_n.png": plot_memorization(
                ns, {"trained field": res.memorized_trained,
                     "empirical optimum": res.memorized_empirical_optimal},
                float(np.mean(res.iid_baseline))),
            "memorization_vs_time.png": plot_memorization(
                t, curves, None, "time t of the reverse process", log_x=False),
        }
        done = TheoryExperimentRun(str(run.out), "memorization", res,
                                   run.write_figures(figs))
        run.write_json("metrics.json", done)
    return done
