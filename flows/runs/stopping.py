"""Run directories of the stopping rules and the NTK gap, decided over seeds:
``flows experiment stopping | ntk-gap``.

- :func:`run_stopping_experiment`: the excess test risk against n under several stopping rules
  of gradient descent, with a shuffled-target control (:mod:`flows.theory.risk`); figure
  ``stopping_vs_n.png``.
- :func:`run_ntk_gap_experiment`: the NTK-curve gap against width over seeds, with paired
  intervals (:mod:`flows.theory.ntk_gap`); figure ``ntk_gap_seeds.png``.

Same contract as :mod:`flows.runs.sweeps`: inputs and the memory estimate are checked before
anything is written; ``config.json`` in the one shape, ``metrics.json`` with the numbers the
seeds determine, figures as PNG.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _runkit import BadInput, Result, RunDir, check_positive_int
from _runkit.runtime import with_threads

from ..data import load_dataset
from ..errors import derive_seed
from ..plotting.theory import plot_gap_seeds, plot_stopping
from ..theory.excess import population_minimum, target_mixture
from ..theory.ntk_gap import gap_sweep
from ..theory.risk import PROTOCOLS, protocol_sweep
from ..training.loop import TrainConfig
from .memory import check_terms, theory_sweep_bytes
from .sweeps import RISK_NS, RISK_SEEDS, _check_sweep_options, _sized, _sweep_in, _values

__all__ = ["run_stopping_experiment", "run_ntk_gap_experiment", "SeedSweepRun", "TARGETS"]

TARGETS = ("data", "shuffled")


@dataclass(frozen=True)
class SeedSweepRun(Result):
    """What ``flows experiment stopping | ntk-gap`` wrote: the numbers (a JSON-ready dict) and
    the figure names; ``to_dict()`` is the content of ``metrics.json``."""

    out: str
    kind: str
    result: dict
    figures: list[str]

    def to_dict(self) -> dict:
        """The numbers with the kind and the figure names."""
        return {"kind": self.kind, **self.result, "figures": self.figures}


@with_threads
def run_stopping_experiment(out: str | Path, ns: list[int] = RISK_NS,
                            seeds: list[int] = RISK_SEEDS, data: str = "moons",
                            width: int = 1024, k: int = 4, steps: int = 500,
                            lr: float | None = None, n_test: int = 20_000,
                            protocols: list[str] = ("fixed", "sqrt"),
                            targets: list[str] = TARGETS,
                            sweep: dict | None = None) -> SeedSweepRun:
    """Excess test risk against n per stopping rule (:mod:`flows.theory.risk`); writes ``out``.

    Each (n, seed) is trained once, by full-batch gradient descent in the theory regime, and
    read at every rule's step count: ``steps`` at the smallest n, then the same (``fixed``),
    ``steps sqrt(n / n_min)`` (``sqrt``, the early stopping of the kernel-regime bounds) or
    ``steps n / n_min`` (``linear``). ``targets`` "shuffled" repeats the sweep with the training
    targets permuted among the draws (the control: its excess must not approach 0).

    Parameters
    ----------
    out : path
    ns, seeds : list of int
        Training points (distinct, >= 1) and seeds (distinct, >= 2 of them for intervals).
    data : str
        A data set with a closed-form optimal field.
    width, k, steps : int
        Width m, (t, x0) draws per point, steps at the smallest n.
    lr : float or None
        Step size (None: 2.0).
    n_test : int
        Fresh draws behind each excess test risk.
    protocols, targets : list of str
        Among ``fixed``, ``sqrt``, ``linear``; and among ``data``, ``shuffled``.
    sweep : dict or None
        ``{"workers": ..., "scheduler": ...}``: the runs as cells of a Dask sweep stored under
        ``out/<target>`` (a rerun resumes them); None runs them one after another in this
        process. The numbers are the same.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    SeedSweepRun
        ``result`` holds, per target and protocol, a
        :class:`flows.theory.risk.ProtocolSummary` dict under ``"{target}/{protocol}"``.
    """
    ns, seeds, protocols, targets = _checked_stopping_options(
        ns, seeds, width, k, steps, n_test, protocols, targets, sweep)
    base = TrainConfig(data=data, regime="theory", width=width, k_draws=k, steps=steps, lr=lr,
                       seed=0, n_eval=1)
    ds = _closed_form_data(data, ns, k, width, n_test)
    config = {"kind": "stopping", "ns": ns, "seeds": seeds, "data": data, "width": width,
              "k": k, "steps": steps, "lr": base.resolved().lr, "n_test": n_test,
              "protocols": protocols,
              "targets": targets}
    with RunDir(out, command="flows experiment stopping", config=config,
                seed=seeds[0]) as run:
        lstar = population_minimum(ds, seed=derive_seed(0, "lstar"))
        res: dict = {"bound_rate": -0.5, "population_minimum": lstar.to_dict()}
        summaries = {}
        for tgt in targets:
            got = protocol_sweep(ns, base, seeds, steps, tuple(protocols), tgt, n_test,
                                 lstar=lstar, sweep=_sweep_in(sweep, run.out / tgt))
            _add_protocols(res, summaries, got, tgt, protocols)
        figs = {"stopping_vs_n.png": plot_stopping(summaries)}
        done = SeedSweepRun(str(run.out), "stopping", res, run.write_figures(figs))
        run.write_json("metrics.json", done)
    return done


def _checked_stopping_options(ns, seeds, width: int, k: int, steps: int, n_test: int,
                              protocols, targets, sweep: dict | None):
    """The checked ``ns``, ``seeds`` (at least 2), ``protocols`` and ``targets`` of
    :func:`run_stopping_experiment` (:class:`BadInput` otherwise)."""
    ns, seeds = _values(ns, "ns"), _values(seeds, "seeds", lo=0)
    if len(seeds) < 2:
        raise BadInput(f"seeds={seeds!r} is not allowed; intervals over seeds need at least 2")
    for name, v in (("width", width), ("k", k), ("steps", steps), ("n_test", n_test)):
        check_positive_int(name, v)
    protocols = _choices(protocols, "protocols", PROTOCOLS)
    targets = _choices(targets, "targets", TARGETS)
    _check_sweep_options(sweep)
    return ns, seeds, protocols, targets


def _closed_form_data(data: str, ns: list[int], k: int, width: int, n_test: int):
    """The dataset named ``data``; :class:`BadInput` when it has no closed-form optimal field
    or the sweep's memory estimate is over the limit."""
    ds = load_dataset(data, name="data")
    if ds.pool is not None or target_mixture(data) is None:
        raise BadInput(f"data={data!r} is not allowed; the excess risk needs a closed-form "
                       "optimal field: normal, 8gaussians, gmm<d>, moons, circles, swissroll, "
                       "spirals")
    check_terms(_sized(theory_sweep_bytes(max(ns), k, width, ds.dim, 1),
                       {"n_test": float(n_test) * 1000 * 8 * 4}))
    return ds


def _add_protocols(res: dict, summaries: dict, got: dict, tgt: str, protocols: list[str]
                   ) -> None:
    """Record one target's sweep: its paths and each protocol's summary into ``res``, and the
    summaries (named by protocol, and target when shuffled) into ``summaries``."""
    res[f"{tgt}/paths"] = [p.to_dict() for p in got["paths"]]
    for p in protocols:
        res[f"{tgt}/{p}"] = got[p].to_dict()
        summaries[f"{p}" if tgt == "data" else f"{p}, shuffled targets"] = got[p]


@with_threads
def run_ntk_gap_experiment(out: str | Path, widths: list[int] = (256, 1024, 4096, 16384),
                           seeds: list[int] = RISK_SEEDS, data: str = "moons", n: int = 64,
                           k: int = 4, steps: int = 500,
                           lr: float | None = None, sweep: dict | None = None) -> SeedSweepRun:
    """NTK-curve gap against width over seeds (:func:`flows.theory.ntk_gap.gap_sweep`); writes
    ``out``. ``result`` is the :class:`flows.theory.ntk_gap.GapSweep` dict; ``sweep`` as in
    :func:`run_stopping_experiment` (the cells stored under ``out``); ``threads=`` sets torch's
    CPU threads during the call (default 1; the caller's count is restored)."""
    widths, seeds = _values(widths, "widths"), _values(seeds, "seeds", lo=0)
    if len(seeds) < 2 or len(widths) < 2 or widths != sorted(widths):
        raise BadInput(f"widths={widths!r}, seeds={seeds!r} are not allowed; give at least 2 "
                       "increasing widths and 2 seeds")
    for name, v in (("n", n), ("k", k), ("steps", steps)):
        check_positive_int(name, v)
    _check_sweep_options(sweep)
    base = TrainConfig(data=data, regime="theory", n_train=n, k_draws=k, steps=steps, lr=lr,
                       n_eval=1)
    dim = load_dataset(data, name="data").dim
    check_terms(_sized(theory_sweep_bytes(n, k, max(widths), dim, 1, kernel=True), {}))
    config = {"kind": "ntk-gap", "widths": widths, "seeds": seeds, "data": data, "n": n,
              "k": k, "steps": steps, "lr": base.resolved().lr}
    with RunDir(out, command="flows experiment ntk-gap", config=config, seed=seeds[0]) as run:
        res = gap_sweep(widths, base, seeds, _sweep_in(sweep, run.out))
        figs = {"ntk_gap_seeds.png": plot_gap_seeds(res)}
        done = SeedSweepRun(str(run.out), "ntk-gap", res.to_dict(), run.write_figures(figs))
        run.write_json("metrics.json", done)
    return done


def _choices(values, name: str, allowed: tuple[str, ...]) -> list[str]:
    if isinstance(values, str) or not values:
        raise BadInput(f"{name}={values!r} is not allowed; give a list among "
                       f"{', '.join(allowed)}")
    out = list(values)
    bad = [v for v in out if v not in allowed]
    if bad or len(set(out)) != len(out):
        raise BadInput(f"{name}={out!r} is not allowed; give distinct values among "
                       f"{', '.join(allowed)}")
    return out
