"""Runs that write their outputs: the library behind ``flows train | sample | eval | experiment``.

Every run checks its inputs and its memory estimate before it writes anything, then writes
inside a locked :class:`_runkit.RunDir` (``config.json`` in the one shape; a second writer on
the same ``--out`` is refused). Files of a run directory:

- ``config.json``: command, config as run, seed, library version, command line;
- ``metrics.json``: the numbers the seed determines (the same command gives the same file);
- ``timing.json``: wall times (not in ``metrics.json``, which they would make differ);
- figures (PNG) and artifacts (``model.pt``, ``checkpoint.pt``, ``losses.npz``).

This module holds ``flows train`` (:func:`run_training`); ``flows sample`` and ``flows eval``
live in :mod:`flows.runs.sampling` (``flows sample`` writes a file and its sidecar, not a
directory), ``flows experiment`` in :mod:`flows.runs.experiments`; their names are importable
from here too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from _runkit import BadInput, Result, RunDir, check_float, check_int, check_positive_int

from ..conditions import evaluate_conditional
from ..data import load_dataset
from ..errors import SEED_MAX, derive_seed
from ..field import FieldSpec
from ..field.module import resolve_device
from ..path import get_path
from ..plotting.runs import class_figures, training_figures
from ..sampling.ode import METHODS, SamplingDiverged
from ..training.checkpoint import load, save_model
from ..training.loop import (
    CHECKPOINT,
    TrainConfig,
    build_model,
    default_workers,
    prepare_data,
    train,
)
from ..training.loop import FORMAT as CHECKPOINT_FORMAT
from .experiments import ExperimentRun, run_samples_experiment, run_width_experiment
from .measure import FieldEvaluation, evaluate_field, reference_for, sample_field
from .memory import check_terms, training_bytes
from .sampling import SampleRun, run_eval, run_sample

__all__ = ["run_training", "run_sample", "run_eval", "run_width_experiment",
           "run_samples_experiment", "TrainingRun", "SampleRun", "ExperimentRun",
           "check_resumable", "load_checkpoint_step", "evaluate_field", "sample_field",
           "reference_for", "SEED_MAX"]

TRAINING_OUTPUTS = ("model.pt", "metrics.json", "timing.json", "loss.png", "samples.png",
                    "data.png", "trajectories.png", "samples_by_class.png")


@dataclass(frozen=True)
class TrainingRun(Result):
    """What ``flows train`` wrote: the run's numbers, with its evaluation flattened in.

    ``metrics()`` is ``metrics.json`` (seed-determined numbers); ``to_dict()`` adds the wall
    times of ``timing.json``.
    """

    out: str
    steps: int
    final_loss: float
    last_loss: float
    n_train: int
    evaluation: FieldEvaluation
    figures: list[str]
    train_wall_time_s: float
    eval_wall_time_s: float
    test_loss: float | None = None
    generalization_gap: float | None = None

    def metrics(self) -> dict:
        """The content of ``metrics.json``."""
        d = {"steps": self.steps, "final_loss": self.final_loss, "last_loss": self.last_loss,
             "n_train": self.n_train, **self.evaluation.to_dict(), "figures": self.figures}
        if self.test_loss is not None:
            d["test_loss"], d["generalization_gap"] = self.test_loss, self.generalization_gap
        return d

    def to_dict(self) -> dict:
        """``metrics()`` with the wall times."""
        return {**self.metrics(), "train_wall_time_s": self.train_wall_time_s,
                "eval_wall_time_s": self.eval_wall_time_s}


MIN_EVAL = 10  # fewest held-out points a trained run is evaluated on


def run_training(config: TrainConfig, out: str | Path, fresh: bool = False,
                 method: str = "midpoint", sample_steps: int = 20,
                 progress: bool | None = None, workers: int | None = None,
                 device: str = "cpu", guidance: float = 1.0) -> TrainingRun:
    """Train (resuming from ``out/checkpoint.pt`` unless ``fresh``), evaluate and draw figures.

    ``workers`` and ``device`` are passed to :func:`flows.training.loop.train`. A class-conditional
    run is evaluated class by class at guidance scale ``guidance``
    (:func:`flows.conditions.evaluate_conditional`) and draws ``samples_by_class.png``. The
    inputs and the memory estimate are checked before ``out`` is touched. A training that
    diverges raises :class:`_runkit.Diverged` and leaves no ``model.pt``; Ctrl-C leaves the
    checkpoint and raises ``KeyboardInterrupt`` saying which step it holds.

    Writes ``config.json``, ``checkpoint.pt``, ``model.pt``, ``metrics.json``, ``timing.json``,
    ``loss.png``, ``samples.png`` and, for 2-D data, ``trajectories.png``.
    """
    cfg = config.resolved()
    ds = _checked_training_inputs(cfg, method, sample_steps, workers)
    check_float("guidance", guidance)  # checked even where an unconditional run ignores it
    splits, source = prepare_data(cfg)
    _check_train_split(splits.train, cfg)
    if cfg.model is not None:  # a user model whose forward does not fit is refused here
        build_model(cfg, splits.train.shape[1], getattr(splits, "classes", 0))
    if not fresh:
        check_resumable(Path(out) / CHECKPOINT, cfg)
    resolve_device(device)
    record = {**cfg.to_dict(), "solver": method, "sample_steps": sample_steps,  # as run:
              "source": cfg.source or "normal",  # None is N(0, I)
              "workers": default_workers(cfg.coupling) if workers is None else workers,
              "device": str(device), "guidance": guidance}
    with RunDir(out, command="flows train", config=record, seed=cfg.seed, fresh=fresh) as run:
        if fresh:  # start over: nothing of the earlier run stays beside the new config
            for name in (CHECKPOINT, *TRAINING_OUTPUTS):
                run.path(name).unlink(missing_ok=True)
        try:
            res = train(cfg, out_dir=run.out, progress=progress, splits=splits, source=source,
                        workers=workers, device=device)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(_interrupted(run.path(CHECKPOINT), cfg.steps)) from None
        save_model(run.path("model.pt"), res.field, cfg.to_dict())
        t0 = time.perf_counter()
        ev, traj = _evaluate_trained(res, splits, source, ds, cfg.seed, method, sample_steps,
                                     guidance)
        step = (f"Adam step (minibatch of {cfg.batch})" if cfg.regime == "practice" else
                f"gradient-descent step (all {splits.train.shape[0]} points)")
        figs = training_figures(res.losses, ev.samples, splits.heldout, traj, step=step)
        if res.classes and splits.heldout.shape[1] == 64:
            figs |= class_figures(ev.samples, ev.labels, guidance)
        figures = run.write_figures(figs)
        tail = max(1, res.steps_done // 100)
        last = float(res.losses[-1])
        result = TrainingRun(
            str(run.out), res.steps_done, float(res.losses[-tail:].mean()), last,
            splits.train.shape[0], ev, figures, res.wall_time, time.perf_counter() - t0,
            res.test_loss, None if res.test_loss is None else res.test_loss - last)
        run.write_json("metrics.json", result.metrics())
        run.write_json("timing.json", {"train_wall_time_s": result.train_wall_time_s,
                                       "eval_wall_time_s": result.eval_wall_time_s})
    return result


def _checked_training_inputs(cfg: TrainConfig, method: str, sample_steps: int,
                             workers: int | None):
    """Check :func:`run_training`'s inputs and its memory estimate before anything is written;
    return the loaded dataset."""
    METHODS.get(method)  # unknown names are refused, listing the valid ones
    check_positive_int("sample_steps", sample_steps)
    if workers is not None:
        check_int("workers", workers, lo=0)
    check_int("seed", cfg.seed, lo=0, hi=SEED_MAX)
    if cfg.n_eval < MIN_EVAL:
        raise BadInput(f"n_eval={cfg.n_eval} is not allowed; the held-out W2 and its floor need "
                       f"at least {MIN_EVAL} points (with fewer the floor's spread swamps any "
                       "difference)")
    ds = load_dataset(cfg.data, name="data")
    FieldSpec(ds.dim, cfg.width, cfg.regime, bool(cfg.normalize), cfg.fourier)
    get_path(cfg.path, cfg.sigma_min)
    terms = training_bytes(cfg, ds.dim, None if ds.pool is None else ds.pool.shape[0])
    terms["sample_steps"] = (sample_steps + 1.0) * (300 * ds.dim + 2) * 4  # the trajectories
    check_terms(terms)
    return ds


def _check_train_split(train_points, cfg: TrainConfig) -> None:
    """Refuse, before anything is written, a training split of fewer than 2 distinct points:
    the evaluation's memorization rate compares each sample with its two nearest distinct
    training points (:func:`flows.evaluation.nearest.memorization`)."""
    import torch

    distinct = int(torch.unique(train_points, dim=0).shape[0])
    if distinct >= 2:
        return
    why = ("at least 2 distinct training points are needed (the memorization rate compares "
           "each sample with its two nearest)")
    if cfg.n_train < 2:
        raise BadInput(f"n_train={cfg.n_train} is not allowed; {why}")
    raise BadInput(f"data={cfg.data!r} leaves {distinct} distinct point(s) in the training "
                   f"split ({train_points.shape[0]} rows after the held-out fifth); {why}")


def _evaluate_trained(res, splits, source, ds, seed: int, method: str, sample_steps: int,
                      guidance: float):
    """The evaluation of a trained field (class by class when conditional) and, for
    unconditional 2-D data, 300 sampled trajectories ``(states, times)`` (else None). A
    diverged sampling is re-raised naming :func:`run_training`'s options."""
    try:
        if res.classes:
            ev = evaluate_conditional(res.field, splits, source, seed, method, sample_steps,
                                      guidance)
        else:
            ev = evaluate_field(res.field, splits, source, seed, method, sample_steps, ds)
        traj = None
        if splits.heldout.shape[1] == 2 and not res.classes:
            tr = sample_field(res.field, source, 300, derive_seed(seed, "traj"), method,
                              sample_steps, save_trajectory=True)
            traj = (tr.trajectory, tr.times)
    except SamplingDiverged as err:  # named as this function's (and the command's) options
        raise err.renamed(steps="sample_steps", rtol=None) from None
    return ev, traj


def check_resumable(ckpt: Path, cfg: TrainConfig) -> None:
    """Refuse, before anything in ``--out`` is written, a checkpoint this run cannot continue.

    Raises ``BadInput`` for an unreadable or foreign file, or one written under another config
    (naming the differing keys); an absent checkpoint is fine.
    """
    if not ckpt.exists():
        return
    blob = load(ckpt, what="checkpoint")
    if blob.get("format") != CHECKPOINT_FORMAT or not isinstance(blob.get("config"), dict):
        raise BadInput(f"checkpoint={str(ckpt)!r} is not a training checkpoint of this version "
                       "of flows; use --fresh to start over or another --out")
    old, new = blob["config"], cfg.to_dict()
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        raise BadInput(f"checkpoint={str(ckpt)!r} was written with a different config "
                       f"(differs in {diff}); use --fresh to start over or another --out")


def _interrupted(ckpt: Path, steps: int) -> str:
    try:
        done = int(load_checkpoint_step(ckpt))
    except BadInput:
        return "no checkpoint was written yet"
    return (f"{ckpt} holds step {done} of {steps}; rerun the same command to resume "
            "(--fresh to start over)")


def load_checkpoint_step(ckpt: Path) -> int:
    """The step a training checkpoint holds."""
    return int(load(ckpt)["step"])


