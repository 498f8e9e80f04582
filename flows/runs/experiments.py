"""``flows experiment width | samples``: theory-regime sweeps written as run directories.

Each checks its inputs and memory estimate, then inside a locked :class:`_runkit.RunDir`
runs :func:`flows.runs.measure.width_experiment` or :func:`flows.runs.measure.samples_experiment`
(optionally as cells of a Dask sweep stored under ``out``) and writes ``metrics.json`` and the
figures of :mod:`flows.plotting.runs`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _runkit import BadInput, Result, RunDir, atomic_write_bytes, check_int, check_positive_int
from _runkit.runtime import with_threads

from ..data import load_dataset
from ..errors import SEED_MAX
from ..plotting.runs import samples_figures, width_figures
from ..sampling.ode import SamplingDiverged
from ..training.loop import TrainConfig
from .measure import SamplesExperiment, WidthExperiment, samples_experiment, width_experiment
from .memory import check_terms, theory_sweep_bytes
from .sweeps import _check_sweep_options, _sweep_in

__all__ = ["ExperimentRun", "run_width_experiment", "run_samples_experiment"]


@dataclass(frozen=True)
class ExperimentRun(Result):
    """What ``flows experiment`` wrote: the sweep's result and its figures."""

    out: str
    result: WidthExperiment | SamplesExperiment
    figures: list[str]

    def to_dict(self) -> dict:
        """The result's fields with the figure names (the content of ``metrics.json``)."""
        return {**self.result.to_dict(), "figures": self.figures}


def _check_sweep(values: list[int], name: str) -> list[int]:
    if not isinstance(values, (list, tuple)) or not values:
        raise BadInput(f"{name}={values!r} is not allowed; give at least one value")
    return [check_positive_int(name, v) for v in values]


def _check_theory(data: str, n: int, k: int, steps: int, lr: float | None, seed: int,
                  sample_steps: int) -> int:
    for name, v in (("n", n), ("k", k), ("steps", steps), ("sample_steps", sample_steps)):
        check_positive_int(name, v)
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    TrainConfig(data=data, regime="theory", lr=lr)
    return load_dataset(data, name="data").dim



def _theory_lr(data: str, lr: float | None) -> float:
    """The learning rate a theory run uses (``None``: the theory regime's default)."""
    return TrainConfig(data=data, regime="theory", lr=lr).resolved().lr

@with_threads
def run_width_experiment(out: str | Path, widths: list[int], data: str = "moons", n: int = 256,
                         k: int = 4, steps: int = 500, lr: float | None = None, seed: int = 0,
                         sample_steps: int = 20, sweep: dict | None = None) -> ExperimentRun:
    """Theory regime at several widths: loss curves, drift vs m, lambda_0, W2 vs m (figures).

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Writes config.json, metrics.json, losses.npz, loss_curves.png, drift_vs_width.png,
    lambda0.png and w2_vs_width.png into ``out``.
    """
    widths = _check_sweep(widths, "widths")
    dim = _check_theory(data, n, k, steps, lr, seed, sample_steps)
    _check_sweep_options(sweep)
    check_terms(theory_sweep_bytes(n, k, max(widths), dim, kernel=True))
    config = {"kind": "width", "widths": widths, "data": data, "n": n, "k": k, "steps": steps,
              "lr": _theory_lr(data, lr), "sample_steps": sample_steps}
    with RunDir(out, command="flows experiment width", config=config, seed=seed) as run:
        try:
            res = width_experiment(widths, data, n, k, steps, lr, seed, sample_steps,
                                   _sweep_in(sweep, run.out))
        except SamplingDiverged as err:  # steps are the gradient-descent steps here
            raise err.renamed(steps="sample_steps") from None
        buf = io.BytesIO()
        np.savez_compressed(buf, **{f"m{m}": arr for m, arr in res.losses.items()})
        atomic_write_bytes(buf.getvalue(), run.path("losses.npz"))
        done = ExperimentRun(str(run.out), res, run.write_figures(width_figures(res)))
        run.write_json("metrics.json", done)
    return done


@with_threads
def run_samples_experiment(out: str | Path, ns: list[int], data: str = "moons",
                           width: int = 4096, k: int = 4, steps: int = 500,
                           lr: float | None = None, seed: int = 0,
                           sample_steps: int = 20, sweep: dict | None = None) -> ExperimentRun:
    """Theory regime at several n: generalization gap and W2 (with floor) versus n (figures).

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    Writes config.json, metrics.json, gap_vs_n.png and w2_vs_n.png into ``out``.
    """
    ns = _check_sweep(ns, "ns")
    check_positive_int("width", width)
    dim = _check_theory(data, ns[0], k, steps, lr, seed, sample_steps)
    _check_sweep_options(sweep)
    check_terms(theory_sweep_bytes(max(ns), k, width, dim))
    config = {"kind": "samples", "ns": ns, "data": data, "width": width, "k": k,
              "steps": steps, "lr": _theory_lr(data, lr), "sample_steps": sample_steps}
    with RunDir(out, command="flows experiment samples", config=config, seed=seed) as run:
        try:
            res = samples_experiment(ns, data, width, k, steps, lr, seed, sample_steps,
                                     _sweep_in(sweep, run.out))
        except SamplingDiverged as err:  # steps are the gradient-descent steps here
            raise err.renamed(steps="sample_steps") from None
        done = ExperimentRun(str(run.out), res, run.write_figures(samples_figures(res)))
        run.write_json("metrics.json", done)
    return done
