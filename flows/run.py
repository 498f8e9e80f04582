"""Runs that write their outputs: the library behind ``flows train | sample | eval | experiment``.

Every run checks its inputs and its memory estimate before it writes anything, then writes
inside a locked :class:`_runkit.RunDir` (``config.json`` in the one shape; a second writer on
the same ``--out`` is refused). Files of a run directory:

- ``config.json``: command, config as run, seed, library version, command line;
- ``metrics.json``: the numbers the seed determines (the same command gives the same file);
- ``timing.json``: wall times (not in ``metrics.json``, which they would make differ);
- figures (PNG) and artifacts (``model.pt``, ``checkpoint.pt``, ``losses.npz``).

``flows sample`` writes a file, not a directory: ``FILE.npy`` and its sidecar ``FILE.json``.
Sidecar rule: ``flows sample`` replaces ``FILE.npy`` or ``FILE.json`` only when they are absent
or were written by an earlier ``flows sample`` for that same ``FILE.npy`` (its sidecar says so);
anything else there (a training run's ``metrics.json``, a user's file) is refused with exit 2.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from _runkit import (
    BadInput,
    Result,
    RunDir,
    atomic_write_bytes,
    check_choice,
    check_int,
    check_positive_int,
    read_json,
    write_json,
)
from _runkit.rundir import out_lock, run_record

from .checkpoint import load, load_model, save_model
from .conditions import evaluate_conditional, sample_by_class
from .data import load_array, load_dataset, source_for
from .errors import derive_seed
from .evaluation import METRICS, evaluate
from .field import FieldSpec
from .measure import (
    FieldEvaluation,
    SamplesExperiment,
    WidthExperiment,
    evaluate_field,
    reference_for,
    sample_field,
    samples_experiment,
    width_experiment,
)
from .memorization import memorization
from .memory import (
    check_terms,
    distance_bytes,
    sampling_bytes,
    theory_sweep_bytes,
    training_bytes,
)
from .model import resolve_device
from .path import get_path
from .plotting import plot_digits_by_class
from .run_figures import samples_figures, training_figures, width_figures
from .sample import SOLVERS
from .training import CHECKPOINT, TrainConfig, prepare_data, train
from .training import FORMAT as CHECKPOINT_FORMAT

__all__ = ["run_training", "run_sample", "run_eval", "run_width_experiment",
           "run_samples_experiment", "TrainingRun", "SampleRun", "ExperimentRun",
           "evaluate_field", "sample_field", "reference_for", "SEED_MAX"]

SEED_MAX = 2**63 - 1
TRAINING_OUTPUTS = ("model.pt", "metrics.json", "timing.json", "loss.png", "samples.png",
                    "data.png", "trajectories.png", "samples_by_class.png")


def _write_figures(run: RunDir, figs: dict) -> list[str]:
    for name, fig in figs.items():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=120)
        atomic_write_bytes(buf.getvalue(), run.path(name))
    return list(figs)


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


def run_training(config: TrainConfig, out: str | Path, fresh: bool = False,
                 solver: str = "midpoint", sample_steps: int = 20,
                 progress: bool | None = None, workers: int | None = None,
                 device: str = "cpu", guidance: float = 1.0) -> TrainingRun:
    """Train (resuming from ``out/checkpoint.pt`` unless ``fresh``), evaluate and draw figures.

    ``workers`` and ``device`` are passed to :func:`flows.training.train`. A class-conditional
    run is evaluated class by class at guidance scale ``guidance``
    (:func:`flows.conditions.evaluate_conditional`) and draws ``samples_by_class.png``. The
    inputs and the memory estimate are checked before ``out`` is touched. A training that
    diverges raises :class:`_runkit.Diverged` and leaves no ``model.pt``; Ctrl-C leaves the
    checkpoint and raises ``KeyboardInterrupt`` saying which step it holds.

    Writes ``config.json``, ``checkpoint.pt``, ``model.pt``, ``metrics.json``, ``timing.json``,
    ``loss.png``, ``samples.png`` and, for 2-D data, ``trajectories.png``.
    """
    cfg = config.resolved()
    check_choice("solver", solver, SOLVERS)
    check_positive_int("sample_steps", sample_steps)
    if workers is not None:
        check_int("workers", workers, lo=0)
    check_int("seed", cfg.seed, lo=0, hi=SEED_MAX)
    ds = load_dataset(cfg.data, name="data")
    FieldSpec(ds.dim, cfg.width, cfg.regime, bool(cfg.normalize), cfg.fourier)
    get_path(cfg.path, cfg.sigma_min)
    terms = training_bytes(cfg, ds.dim, None if ds.pool is None else ds.pool.shape[0])
    terms["sample_steps"] = (sample_steps + 1.0) * (300 * ds.dim + 2) * 4  # the trajectories
    check_terms(terms)
    splits, source = prepare_data(cfg)
    if not fresh:
        check_resumable(Path(out) / CHECKPOINT, cfg)
    resolve_device(device)
    record = {**cfg.to_dict(), "solver": solver, "sample_steps": sample_steps,
              "workers": workers, "device": str(device), "guidance": guidance}
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
        if res.classes:
            ev = evaluate_conditional(res.field, splits, source, cfg.seed, solver,
                                      sample_steps, guidance)
        else:
            ev = evaluate_field(res.field, splits, source, cfg.seed, solver, sample_steps, ds)
        traj = None
        if splits.heldout.shape[1] == 2 and not res.classes:
            tr = sample_field(res.field, source, 300, derive_seed(cfg.seed, "traj"), solver,
                              sample_steps, save_trajectory=True)
            traj = (tr.trajectory, tr.times)
        figs = training_figures(res.losses, ev.samples, splits.heldout, traj)
        if res.classes and splits.heldout.shape[1] == 64:
            figs["samples_by_class.png"] = plot_digits_by_class(
                ev.samples, ev.labels, title=f"generated digits by class (guidance {guidance:g})")
        figures = _write_figures(run, figs)
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


@dataclass(frozen=True)
class SampleRun(Result):
    """What ``flows sample`` wrote: ``out`` (.npy, shape (n, dim)) and its sidecar."""

    out: str
    sidecar: str
    model: str
    n: int
    dim: int
    solver: str
    steps: int
    seed: int
    nfe: int


def _sidecar_owner(npy: Path, sidecar: Path) -> None:
    """Refuse unless both are absent or were written by an earlier ``flows sample`` of ``npy``."""
    ours = False
    if sidecar.exists():
        try:
            old = read_json(sidecar, what="out")
        except BadInput:
            old = None
        ours = isinstance(old, dict) and old.get("command") == "flows sample" \
            and isinstance(old.get("config"), dict) and old["config"].get("out") == npy.name
        if not ours:
            raise BadInput(f"out={str(npy)!r} would replace {str(sidecar)!r}, which flows sample "
                           "did not write; choose another --out")
    if npy.exists() and not ours:
        raise BadInput(f"out={str(npy)!r} exists and was not written by flows sample; choose "
                       "another --out")


def run_sample(model: str | Path, n: int, out: str | Path, solver: str = "midpoint",
               steps: int = 20, seed: int = 0, label: int | None = None,
               guidance: float = 1.0, device: str = "cpu") -> SampleRun:
    """Draw ``n`` samples from a trained model into ``out`` (.npy) with a sidecar ``.json``.

    The sidecar holds the command, the config as run (model, n, solver, steps, seed, and for a
    class-conditional model the labels and guidance), the library version, the command line and
    the NFE. A class-conditional model draws class ``label`` for every sample, or classes
    0..K-1 in turn (sample i has class i mod K); ``out.labels.npy`` is not written: the rule
    recovers them. A user model is rebuilt from its recorded import path. See the module
    docstring for the sidecar rule.
    """
    out = Path(out)
    check_positive_int("n", n)
    check_choice("solver", solver, SOLVERS)
    check_positive_int("steps", steps)
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    dev = resolve_device(device)
    if out.suffix != ".npy":
        raise BadInput(f"out={str(out)!r} is not allowed; it must end in .npy")
    if out.is_dir():
        raise BadInput(f"out={str(out)!r} is a directory; a .npy file name is expected")
    field, cfg = load_model(model)
    spec = getattr(field, "spec", None)
    dim = spec.dim if spec is not None else field.dim
    classes = spec.classes if spec is not None else field.classes
    # the estimate covers the built-in field's activations; a user module's own are its own
    check_terms(sampling_bytes(n, dim, spec.width if spec is not None else 1, steps))
    labels = None
    if classes:
        if label is not None:
            check_int("label", label, lo=0, hi=classes - 1)
            labels = torch.full((n,), int(label), dtype=torch.long)
        else:
            labels = torch.arange(n) % classes
    elif label is not None:
        raise BadInput(f"label={label!r} is not allowed: the model is not class-conditional")
    source = source_for(cfg.get("source"), dim)
    sidecar = out.with_suffix(".json")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BadInput(f"out={str(out)!r} cannot be written: {err.strerror}") from None
    config = {"model": str(model), "n": n, "solver": solver, "steps": steps, "out": out.name,
              "device": str(device)}
    if classes:
        config |= {"label": label, "labels": "all equal" if label is not None else "i mod K",
                   "classes": classes, "guidance": guidance}
    field = field.to(dev)
    with out_lock(out.parent / f".{out.name}.lock", "out", out):
        _sidecar_owner(out, sidecar)
        if classes:
            res = sample_by_class(field, source, labels, classes, seed, guidance, solver, steps)
        else:
            res = sample_field(field, source, n, seed, solver, steps)
        buf = io.BytesIO()
        np.save(buf, res.x.cpu().numpy())
        atomic_write_bytes(buf.getvalue(), out)
        write_json({**run_record("flows sample", config, seed), "nfe": res.nfe,
                    "dim": dim}, sidecar)
    return SampleRun(str(out), str(sidecar), str(model), n, dim, solver, steps, seed,
                     res.nfe)


def run_eval(samples: str | Path, reference: str | Path | None = None, data: str | None = None,
             metric: str = "w2", seed: int = 0, out: str | Path | None = None,
             train: str | Path | None = None, floor_pairs: int = 10):
    """metric(samples, reference) with, for a named ``data`` reference, its noise floor; or the
    memorized fraction of the samples against a training set.

    - Distances: exactly one of ``reference`` (a .npy/.csv file) and ``data`` (a dataset name)
      is required. With ``data`` the floor is the mean (and std) of the metric over
      ``floor_pairs`` pairs of independent samples of the true distribution at the same sizes
      (:func:`flows.floors.noise_floor`).
    - ``metric="memorization"``: ``train`` (.npy/.csv, the whole training set) is required;
      returns :class:`flows.memorization.Memorization` (fraction with nearest training point
      closer than 1/3 of the second nearest, beside its leave-one-out i.i.d. baseline).

    With ``out``, writes ``config.json`` and ``metrics.json`` there.
    """
    check_choice("metric", metric, METRICS + ("memorization",))
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    x = load_array(samples, name="samples")
    if metric == "memorization":
        if train is None or reference is not None or data is not None:
            raise BadInput("--metric memorization needs --train (a .npy/.csv file of the whole "
                           "training set) and neither --reference nor --data")
        tr = load_array(train, name="train")
        if tr.shape[1] != x.shape[1]:
            raise BadInput(f"samples have dimension {x.shape[1]} but train has {tr.shape[1]}; "
                           "they must be equal")
        config = {"samples": str(samples), "train": str(train), "metric": metric}
        return _write_eval(out, config, seed, lambda: memorization(x, tr, seed=seed))
    if train is not None:
        raise BadInput(f"--train is only used by --metric memorization, not --metric {metric}")
    if (reference is None) == (data is None):
        raise BadInput("give exactly one of --reference (a file) and --data (a dataset name); "
                       "--metric memorization takes --train instead")
    check_positive_int("floor_pairs", floor_pairs)
    if data is not None:
        dim = load_dataset(data, name="data").dim
        n_ref = x.shape[0]
    else:
        ref = load_array(reference, name="reference")  # type: ignore[arg-type]
        dim, n_ref = ref.shape[1], ref.shape[0]
    if dim != x.shape[1]:
        raise BadInput(f"samples have dimension {x.shape[1]} but the reference has {dim}; they "
                       "must be equal")
    if metric != "sliced":
        check_terms({"samples": distance_bytes(x.shape[0], n_ref, dim)})
    ds = None
    if data is not None:
        ref, _ = reference_for(data, x.shape[0], seed)
        ds = load_dataset(data, name="data")
    config = {"samples": str(samples), "reference": None if reference is None else str(reference),
              "data": data, "metric": metric, "floor_pairs": floor_pairs}
    return _write_eval(out, config, seed, lambda: evaluate(x, ref, metric, seed=seed,
                                                           dataset=ds, pairs=floor_pairs))


def _write_eval(out, config: dict, seed: int, compute):
    if out is None:
        return compute()
    with RunDir(out, command="flows eval", config=config, seed=seed) as run:
        res = compute()
        run.write_json("metrics.json", res)
    return res


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


def run_width_experiment(out: str | Path, widths: list[int], data: str = "moons", n: int = 256,
                         k: int = 4, steps: int = 500, lr: float | None = None, seed: int = 0,
                         sample_steps: int = 20, sweep: dict | None = None) -> ExperimentRun:
    """Theory regime at several widths: loss curves, drift vs m, lambda_0, W2 vs m (figures).

    Writes config.json, metrics.json, losses.npz, loss_curves.png, drift_vs_width.png,
    lambda0.png and w2_vs_width.png into ``out``.
    """
    widths = _check_sweep(widths, "widths")
    dim = _check_theory(data, n, k, steps, lr, seed, sample_steps)
    check_terms(theory_sweep_bytes(n, k, max(widths), dim, kernel=True))
    config = {"kind": "width", "widths": widths, "data": data, "n": n, "k": k, "steps": steps,
              "lr": lr, "sample_steps": sample_steps}
    with RunDir(out, command="flows experiment width", config=config, seed=seed) as run:
        res = width_experiment(widths, data, n, k, steps, lr, seed, sample_steps,
                               None if sweep is None else {**sweep, "out": run.out})
        buf = io.BytesIO()
        np.savez_compressed(buf, **{f"m{m}": arr for m, arr in res.losses.items()})
        atomic_write_bytes(buf.getvalue(), run.path("losses.npz"))
        done = ExperimentRun(str(run.out), res, _write_figures(run, width_figures(res)))
        run.write_json("metrics.json", done)
    return done


def run_samples_experiment(out: str | Path, ns: list[int], data: str = "moons",
                           width: int = 4096, k: int = 4, steps: int = 500,
                           lr: float | None = None, seed: int = 0,
                           sample_steps: int = 20, sweep: dict | None = None) -> ExperimentRun:
    """Theory regime at several n: generalization gap and W2 (with floor) versus n (figures).

    Writes config.json, metrics.json, gap_vs_n.png and w2_vs_n.png into ``out``.
    """
    ns = _check_sweep(ns, "ns")
    check_positive_int("width", width)
    dim = _check_theory(data, ns[0], k, steps, lr, seed, sample_steps)
    check_terms(theory_sweep_bytes(max(ns), k, width, dim))
    config = {"kind": "samples", "ns": ns, "data": data, "width": width, "k": k,
              "steps": steps, "lr": lr, "sample_steps": sample_steps}
    with RunDir(out, command="flows experiment samples", config=config, seed=seed) as run:
        res = samples_experiment(ns, data, width, k, steps, lr, seed, sample_steps,
                                 None if sweep is None else {**sweep, "out": run.out})
        done = ExperimentRun(str(run.out), res, _write_figures(run, samples_figures(res)))
        run.write_json("metrics.json", done)
    return done
