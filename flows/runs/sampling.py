"""``flows sample`` and ``flows eval``: samples drawn into a file, and samples judged.

``flows sample`` writes a file, not a directory: ``FILE.npy``, its sidecar ``FILE.json``
(the one ``config.json`` shape of :func:`_runkit.rundir.run_record` with the NFE and the
dimension) and its sha256 ``FILE.npy.sha256`` (:func:`_runkit.files.atomic_save_npy`); the
lock ``.FILE.npy.lock`` beside them is removed when the command ends. Sidecar rule:
``flows sample`` replaces ``FILE.npy`` or ``FILE.json`` only when they are absent or were
written by an earlier ``flows sample`` for that same ``FILE.npy`` (its sidecar says so);
anything else there (a training run's ``metrics.json``, a user's file) is refused with exit 2.
A velocity that becomes non-finite while sampling is a
:class:`~flows.sampling.ode.SamplingDiverged` (exit 1) naming the time, the step and ``steps``.

``flows eval`` prints its metrics and, with ``out``, writes a locked run directory
(:class:`_runkit.RunDir`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from _runkit import (
    BadInput,
    Result,
    RunDir,
    check_choice,
    check_float,
    check_int,
    check_positive_int,
    read_json,
    write_json,
)
from _runkit.files import atomic_save_npy
from _runkit.rundir import out_lock, run_record

from ..conditions import sample_by_class
from ..data import load_array, load_dataset, source_for
from ..errors import SEED_MAX
from ..evaluation.features import FEATURE_DATA
from ..evaluation.nearest import NULL_RATE
from ..evaluation.report import (
    EVAL_METRICS,
    TRAIN_METRICS,
    EvalReport,
    report_copying,
    report_memorization,
    report_statistic,
)
from ..evaluation.verdict import (
    ALPHA,
    PERMUTATIONS,
    Verdict,
    check_family,
    evaluate_all,
    family,
)
from ..field.module import resolve_device
from ..sampling.ode import METHODS, SamplingDiverged
from ..training.checkpoint import load_model
from .measure import reference_for, sample_field
from .memory import check_terms, distance_bytes, floor_pair_bytes, sampling_bytes

__all__ = ["SampleRun", "run_sample", "run_eval"]


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


def run_sample(model: str | Path, n: int, out: str | Path, method: str = "midpoint",
               steps: int = 20, seed: int = 0, label: int | None = None,
               guidance: float = 1.0, device: str = "cpu",
               trust: tuple[str, ...] = ()) -> SampleRun:
    """Draw ``n`` samples from a trained model into ``out`` (.npy) with a sidecar ``.json``.

    The sidecar holds the command, the config as run (model, n, method under "solver", steps,
    seed, and for a
    class-conditional model the labels and guidance), the library version, the command line and
    the NFE. A class-conditional model draws class ``label`` for every sample, or classes
    0..K-1 in turn (sample i has class i mod K); ``out.labels.npy`` is not written: the rule
    recovers them. A user model is rebuilt from its recorded import path, whose module must be
    imported already or named in ``trust`` (:func:`flows.field.module.check_trusted`). See the
    module docstring for the sidecar rule. A velocity that becomes non-finite raises
    :class:`~flows.sampling.ode.SamplingDiverged` naming the time, the step and ``steps`` or
    ``method`` (nothing is written).
    """
    out = Path(out)
    dev = _checked_sample_options(out, n, method, steps, seed, device)
    check_float("guidance", guidance)  # checked even where an unconditional model ignores it
    field, cfg = load_model(model, trust=trust)
    spec = getattr(field, "spec", None)
    dim = spec.dim if spec is not None else field.dim
    classes = spec.classes if spec is not None else field.classes
    # the estimate covers the built-in field's activations; a user module's own are its own
    check_terms(sampling_bytes(n, dim, spec.width if spec is not None else 1, steps))
    labels = _sample_labels(label, classes, n)
    # a value recorded in the model file: errors name the file
    source = source_for(cfg.get("source"), dim,
                        name=f"model={str(model)!r}: its training config's source")
    sidecar = out.with_suffix(".json")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BadInput(f"out={str(out)!r} cannot be written: {err.strerror}") from None
    config = {"model": str(model), "n": n, "solver": method, "steps": steps, "out": out.name,
              "device": str(device)}
    if classes:
        config |= {"label": label, "labels": "all equal" if label is not None else "i mod K",
                   "classes": classes, "guidance": guidance}
    field = field.to(dev)
    with out_lock(out.parent / f".{out.name}.lock", "out", out, remove=True):
        _sidecar_owner(out, sidecar)
        try:
            if classes:
                res = sample_by_class(field, source, labels, classes, seed, guidance, method,
                                      steps)
            else:
                res = sample_field(field, source, n, seed, method, steps)
        except SamplingDiverged as err:  # named as this function's (and the command's) options
            raise err.renamed(rtol=None, field="model") from None
        atomic_save_npy(out, res.x.cpu().numpy())
        write_json({**run_record("flows sample", config, seed), "nfe": res.nfe,
                    "dim": dim}, sidecar)
    return SampleRun(str(out), str(sidecar), str(model), n, dim, method, steps, seed,
                     res.nfe)


def _checked_sample_options(out: Path, n: int, method: str, steps: int, seed: int,
                            device) -> torch.device:
    """Check :func:`run_sample`'s numbers and its ``.npy`` output path (:class:`BadInput`);
    return the resolved device."""
    check_positive_int("n", n)
    METHODS.get(method)  # unknown names are refused, listing the valid ones
    check_positive_int("steps", steps)
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    dev = resolve_device(device)
    if out.suffix != ".npy":
        raise BadInput(f"out={str(out)!r} is not allowed; it must end in .npy")
    if out.is_dir():
        raise BadInput(f"out={str(out)!r} is a directory; a .npy file name is expected")
    return dev


def _sample_labels(label: int | None, classes: int, n: int) -> torch.Tensor | None:
    """The ``(n,)`` class labels to sample: all ``label``, or ``i mod classes``; None for an
    unconditional model (:class:`BadInput` if a label is given to it)."""
    labels = None
    if classes:
        if label is not None:
            check_int("label", label, lo=0, hi=classes - 1)
            labels = torch.full((n,), int(label), dtype=torch.long)
        else:
            labels = torch.arange(n) % classes
    elif label is not None:
        raise BadInput(f"label={label!r} is not allowed: the model is not class-conditional")
    return labels


def run_eval(samples: str | Path, reference: str | Path | None = None, data: str | None = None,
             metric: str = "w2", seed: int = 0, out: str | Path | None = None,
             train: str | Path | None = None, floor_pairs: int = 10,
             criterion: float | str = "calibrated", null_rate: float = NULL_RATE,
             permutations: int = 0, reg: float = 0.05, max_iter: int = 5000, k: int = 3,
             cells: int = 3, alpha: float = ALPHA) -> EvalReport | Verdict:
    """A metric of the samples, as one :class:`flows.evaluation.report.EvalReport` (metric,
    value, floor, floor_std, floor_pairs, p_value, permutations, n_samples, n_reference and the
    metric's own fields).

    - Metrics against a reference (:data:`flows.evaluation.report.EVAL_METRICS`): exactly one
      of ``reference`` (a .npy/.csv file) and ``data`` (a dataset name) is required. With
      ``data`` the floor is the mean (and std) of the metric over ``floor_pairs`` pairs of
      independent samples of the true distribution at the same sizes
      (:func:`flows.evaluation.floors.noise_floor`). ``permutations`` > 0 adds the p-value of
      a permutation two-sample test against the reference
      (:func:`flows.evaluation.twosample.permutation_test`). ``reg`` and ``max_iter`` are
      Sinkhorn's; a solve that does not converge is reported (``converged`` false).
    - ``metric="memorization"``: ``train`` (.npy/.csv, the whole training set) is required;
      the value is the fraction of samples whose nearest training point is closer than c times
      the second nearest, the floor the fraction the leave-one-out training points score at
      that c (what an i.i.d. sample reads), beside the fraction at the literature's fixed 1/3.
      ``criterion="calibrated"`` (the default) sets c = min(1/3, null_rate^(1/D)) with D the
      intrinsic dimension of the training set, so that a fresh sample of the data is flagged
      with probability about ``null_rate``; a number is used as c directly. With
      ``reference`` (held-out points never trained on), ``p_value`` is the data-copying test's.
    - ``metric="copying"``: Meehan et al.'s data-copying z against ``train`` with
      ``reference`` held out (:func:`flows.evaluation.copying.data_copying`, ``cells``).
    - ``metric="all"``: every two-sample test that applies to the data, each with a permutation
      p-value (``permutations``, default 1999, shared splits), Holm's correction and one
      verdict at family-wise level ``alpha`` (:func:`flows.evaluation.verdict.evaluate_all`);
      with ``train`` (and held-out points in ``reference``) also memorization and copying.

    With ``out``, writes ``config.json`` and ``metrics.json`` there.
    """
    check_choice("metric", metric, EVAL_METRICS + TRAIN_METRICS + ("all",))
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    check_int("permutations", permutations, lo=0)
    _only_for(metric, reg=(reg, 0.05, ("sinkhorn",)), max_iter=(max_iter, 5000, ("sinkhorn",)),
              k=(k, 3, ("precision", "recall", "all")),
              cells=(cells, 3, TRAIN_METRICS + ("all",)), alpha=(alpha, ALPHA, ("all",)))
    x = load_array(samples, name="samples")
    if metric == "all":
        return _run_all(x, samples, reference, data, train, seed, out, permutations, alpha, k,
                        criterion, null_rate, cells, floor_pairs)
    if metric in TRAIN_METRICS:
        return _run_train_eval(x, samples, train, reference, data, metric, criterion, null_rate,
                               seed, out, cells)
    _check_distance_options(metric, train, criterion, null_rate, reference, data, floor_pairs)
    if data is not None:
        dim = load_dataset(data, name="data").dim
        n_ref = x.shape[0]
    else:
        ref = load_array(reference, name="reference")  # type: ignore[arg-type]
        dim, n_ref = ref.shape[1], ref.shape[0]
    if dim != x.shape[1]:
        raise BadInput(f"samples have dimension {x.shape[1]} but the reference has {dim}; they "
                       "must be equal")
    if metric in ("fd", "classes") and dim not in FEATURE_DATA:  # before --out is claimed
        raise BadInput(f"--metric {metric} needs images of dimension "
                       f"{', '.join(map(str, FEATURE_DATA))} ({', '.join(FEATURE_DATA.values())}"
                       f"), the dimensions with a feature classifier; the samples have {dim}")
    terms = {"samples": distance_bytes(x.shape[0], n_ref, dim) if metric != "sliced" else 0.0}
    if data is not None:  # the noise floor holds all its pairs of true samples at once
        terms["floor_pairs"] = floor_pair_bytes(floor_pairs, x.shape[0], n_ref, dim)
    if permutations:  # the pooled distance matrix of the permutation test
        terms["permutations"] = distance_bytes(x.shape[0] + n_ref, x.shape[0] + n_ref, dim)
    check_terms(terms)
    ds = None
    if data is not None:
        ref, _ = reference_for(data, x.shape[0], seed)
        ds = load_dataset(data, name="data")
    config = {"samples": str(samples), "reference": None if reference is None else str(reference),
              "data": data, "metric": metric, "floor_pairs": floor_pairs,
              "permutations": permutations}
    config.update({"reg": reg, "max_iter": max_iter} if metric == "sinkhorn" else {})
    config.update({"k": k} if metric in ("precision", "recall") else {})
    return _write_eval(out, config, seed, lambda: report_statistic(
        x, ref, metric, seed=seed, dataset=ds, pairs=floor_pairs, permutations=permutations,
        reg=check_float("reg", reg, lo=0.0), max_iter=max_iter, k=k))


def _run_all(x: np.ndarray, samples, reference, data, train, seed: int, out, permutations: int,
             alpha: float, k: int, criterion, null_rate, cells: int, floor_pairs: int):
    """:func:`run_eval` with ``--metric all`` (:func:`flows.evaluation.verdict.evaluate_all`):
    every input checked before ``out`` is claimed."""
    if floor_pairs != 10:
        raise BadInput(f"floor_pairs={floor_pairs!r} is not used by --metric all: each test's "
                       "null mean over the permutations is what an i.i.d. sample reads")
    if (reference is None) == (data is None):
        raise BadInput("give exactly one of --reference (a file) and --data (a dataset name)")
    if train is not None and reference is None:
        raise BadInput("--metric all with --train needs --reference: held-out points that were "
                       "never trained on (a --data sample may hold training points)")
    if train is None and (criterion != "calibrated" or null_rate != NULL_RATE):
        raise BadInput("criterion and null_rate are only used with --train (memorization)")
    criterion, null_rate = _memorization_options(criterion, null_rate)
    ref = (load_array(reference, name="reference") if data is None
           else reference_for(data, x.shape[0], seed)[0].numpy())
    tr = None if train is None else load_array(train, name="train")
    for name, arr in (("reference", ref), ("train", tr)):
        if arr is not None and arr.shape[1] != x.shape[1]:
            raise BadInput(f"samples have dimension {x.shape[1]} but {name} has "
                           f"{arr.shape[1]}; they must be equal")
    rows = x.shape[0] + ref.shape[0]
    check_terms({"pool": 3.0 * 8 * rows * rows})  # distances, their order, sorted copies
    permutations = permutations or PERMUTATIONS
    check_family(family(x.shape[1], tr is not None), tr, check_float("alpha", alpha),
                 permutations)
    config = {"samples": str(samples), "reference": None if reference is None else str(reference),
              "data": data, "train": None if train is None else str(train), "metric": "all",
              "permutations": permutations, "alpha": alpha, "k": k, "cells": cells}
    if tr is not None:
        config.update(criterion=criterion, null_rate=null_rate)
    return _write_eval(out, config, seed, lambda: evaluate_all(
        x, ref, tr, alpha, permutations, seed, k, criterion, null_rate, cells))


def _only_for(metric: str, **options) -> None:
    """:class:`BadInput` for an option (value, default, metrics that use it) changed from its
    default for a metric that does not use it, or not positive."""
    for name, (value, default, metrics) in options.items():
        if value != default and metric not in metrics:
            raise BadInput(f"{name}={value!r} is only used by --metric "
                           f"{' or '.join(metrics)}, not --metric {metric}")
        if not value > 0:
            raise BadInput(f"{name}={value!r} is not allowed; it must be > 0")


def _run_train_eval(x: np.ndarray, samples, train, reference, data, metric: str, criterion,
                    null_rate, seed: int, out, cells: int):
    """:func:`run_eval` with ``--metric memorization`` or ``copying``: the samples ``x``
    against the training set read from ``train`` (:class:`BadInput` without it, with
    ``data``, or for copying without held-out points in ``reference``)."""
    if train is None or data is not None:
        raise BadInput(f"--metric {metric} needs --train (a .npy/.csv file of the whole "
                       "training set) and no --data")
    if metric == "copying" and reference is None:
        raise BadInput("--metric copying needs --reference: held-out points of the data that "
                       "were never trained on")
    tr = load_array(train, name="train")
    held = None if reference is None else load_array(reference, name="reference")
    for name, arr in (("train", tr), ("reference", held)):
        if arr is not None and arr.shape[1] != x.shape[1]:
            raise BadInput(f"samples have dimension {x.shape[1]} but {name} has "
                           f"{arr.shape[1]}; they must be equal")
    config = {"samples": str(samples), "train": str(train), "metric": metric,
              "reference": None if reference is None else str(reference), "cells": cells}
    if metric == "copying":
        if criterion != "calibrated" or null_rate != NULL_RATE:
            raise BadInput("criterion and null_rate are only used by --metric memorization")
        return _write_eval(out, config, seed, lambda: report_copying(x, tr, held, cells, seed))
    criterion, null_rate = _memorization_options(criterion, null_rate)
    config.update(criterion=criterion, null_rate=null_rate)
    return _write_eval(out, config, seed, lambda: report_memorization(
        x, tr, held, criterion=criterion, null_rate=null_rate, seed=seed, cells=cells))


def _check_distance_options(metric: str, train, criterion, null_rate, reference, data,
                            floor_pairs) -> None:
    """Raise :class:`BadInput` for memorization options given to a distance metric, for not
    exactly one of ``reference`` and ``data``, or for a bad ``floor_pairs``."""
    if train is not None:
        raise BadInput(f"--train is only used by --metric memorization or copying, not "
                       f"--metric {metric}")
    if criterion != "calibrated" or null_rate != NULL_RATE:
        raise BadInput(f"criterion={criterion!r} and null_rate={null_rate!r} are only used by "
                       f"--metric memorization, not --metric {metric}")
    if (reference is None) == (data is None):
        raise BadInput("give exactly one of --reference (a file) and --data (a dataset name); "
                       "--metric memorization takes --train instead")
    check_positive_int("floor_pairs", floor_pairs)


def _memorization_options(criterion, null_rate) -> tuple[float | str, float]:
    """criterion ("calibrated" or a ratio in (0, 1)) and null_rate (in (0, 1)), checked."""
    if isinstance(criterion, str):
        if criterion != "calibrated":
            try:
                criterion = float(criterion)
            except ValueError:
                raise BadInput(f"criterion={criterion!r} is not allowed; give 'calibrated' or "
                               "a ratio in (0, 1)") from None
    if not isinstance(criterion, str):
        criterion = check_float("criterion", criterion)
        if not 0 < criterion < 1:
            raise BadInput(f"criterion={criterion!r} is not allowed; a ratio d1 / d2 threshold "
                           "lies in (0, 1)")
    null_rate = check_float("null_rate", null_rate)
    if not 0 < null_rate < 1:
        raise BadInput(f"null_rate={null_rate!r} is not allowed; it must lie in (0, 1)")
    return criterion, null_rate


def _write_eval(out, config: dict, seed: int, compute):
    if out is None:
        return compute()
    with RunDir(out, command="flows eval", config=config, seed=seed) as run:
        res = compute()
        run.write_json("metrics.json", res)
    return res
