"""Training by conditional flow matching: the two-layer ReLU field or any velocity module.

Loss: L(theta) = E_{t, (x0, x1) ~ coupling} || v_theta(x_t, t[, c]) - dx_t ||^2, t ~ U(0, 1).

- "practice": Adam, minibatches of ``batch`` points drawn (with replacement) from a fixed pool
  of ``n_train`` training points; the learning rate rises linearly over ``warmup`` steps, then
  follows a cosine decay to zero (:func:`flows.training.steps.learning_rate`). The model is
  the built-in two-layer ReLU field (both layers, direct gradients) or any ``torch.nn.Module``
  v(x, t[, c]) (autograd; see :mod:`flows.field.module`), with the same couplings, paths, labels,
  checkpoints and exact resume.
- "theory": the built-in field only; A fixed at +-1, only W, full-batch gradient descent on the
  fixed empirical objective of n = ``n_train`` data points with k = ``k_draws`` fixed (t, x0)
  draws each (a fixed least-squares problem in the outputs); inputs normalised to the sphere.

With ``labels`` the training is class-conditional (:mod:`flows.conditions`): OT pairs within
classes, a fraction ``label_dropout`` of the labels is replaced by the null label for
classifier-free guidance.

All randomness comes from generators derived from ``seed``; each practice step draws from its own
seed (:func:`flows.training.batches.step_seed`), so a checkpoint needs only the weights, the
optimizer state and the loss history for a resumed run to end exactly where an uninterrupted one
does.
Ctrl-C finishes the current step and writes a checkpoint before the KeyboardInterrupt
propagates. ``device`` places the model, the batches and the OT costs (the assignment itself
runs on the CPU).
"""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from torch import nn

import _runkit
from _runkit import BadInput, Diverged
from _runkit.files import check_adam_state, check_finite_tensors, check_like, check_saved_step
from _runkit.runtime import with_threads

from ..conditions import LabelledSplits, labelled_splits, load_labels
from ..data import Dataset, Splits, load_dataset, make_splits, source_for
from ..errors import FlowsError, as_generator, check_positive_int, derive_seed
from ..field import FieldSpec, TwoLayerReLUField, features
from ..field.module import ModuleField, build_module, check_module_field, resolve_device
from ..path import get_path
from .batches import Batches, default_workers, draw_batch, ot_warm_start, step_seed
from .checkpoint import atomic_save, load
from .config import TrainConfig, TrainResult
from .ema import WeightAverage
from .steps import FlatAdam, field_step, module_step, theory_step

__all__ = ["CHECKPOINT", "TrainConfig", "TrainResult", "build_model", "default_workers",
           "draw_batch", "fixed_objective", "prepare_data", "step_seed", "theory_test_loss",
           "train"]

CHECKPOINT = "checkpoint.pt"
FORMAT = "flows-checkpoint-3"


def prepare_data(config: TrainConfig) -> tuple[Splits, Dataset]:
    """Train / held-out / floor splits of the data and the source distribution of a run.

    With ``config.labels`` the splits are :class:`flows.conditions.LabelledSplits`.
    """
    cfg = config.resolved()
    ds = load_dataset(cfg.data, name="data")
    source = source_for(cfg.source, ds.dim)
    seed = derive_seed(cfg.seed, "splits")
    if cfg.labels is not None:
        if ds.pool is None:
            raise FlowsError(f"labels={cfg.labels!r} need a finite data set (digits or a file); "
                             f"data={cfg.data!r} is generated")
        labels = load_labels(cfg.labels, cfg.data, ds.pool.shape[0])
        return labelled_splits(ds, labels, cfg.n_train, cfg.n_eval, seed), source  # type: ignore[arg-type]
    return make_splits(ds, cfg.n_train, cfg.n_eval, seed), source  # type: ignore[arg-type]


def fixed_objective(x1: torch.Tensor, source: Dataset, k: int, path_name: str, sigma_min: float,
                    spec: FieldSpec, seed: int | torch.Generator
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Features and targets of the empirical objective of the theory.

    Each of the n points x1_i gets k fixed draws (t_ij ~ U(0, 1), x0_ij ~ source), giving
    z_ij = z(x_t, t) and u_ij = dx_t. Returns z of shape (n k, p) and u of shape (n k, d).
    """
    g = as_generator(seed)
    x1k = x1.repeat_interleave(check_positive_int("k_draws", k), dim=0)
    x0 = source.sample(x1k.shape[0], g)
    t = torch.rand(x1k.shape[0], 1, generator=g)
    ps = get_path(path_name, sigma_min).sample(x0, x1k, t, g)
    return features(ps.x_t, t, spec.fourier, spec.normalize), ps.dx_t


def build_model(cfg: TrainConfig, dim: int, classes: int = 0,
                module: nn.Module | None = None) -> nn.Module:
    """The initial velocity field of a run: the built-in field, ``cfg.model`` or ``module``.

    Initial weights come from ``derive_seed(cfg.seed, "init")`` (a given ``module`` is used as
    it is). Returns a :class:`TwoLayerReLUField` or a :class:`flows.field.module.ModuleField`.
    """
    cfg = cfg.resolved()
    if module is not None:
        if not isinstance(module, nn.Module):
            raise FlowsError(f"model={module!r} is not allowed; pass a torch.nn.Module")
        return ModuleField(module, classes, dim)
    if cfg.model is not None:
        field = ModuleField(build_module(cfg.model, cfg.model_args,
                                         derive_seed(cfg.seed, "init")), classes, dim)
        check_module_field(field, dim, f"model={cfg.model!r}")
        return field
    spec = FieldSpec(dim, cfg.width, cfg.regime, bool(cfg.normalize), cfg.fourier, classes)
    return TwoLayerReLUField(spec, seed=derive_seed(cfg.seed, "init"))


@with_threads
def train(config: TrainConfig, out_dir: str | Path | None = None, resume: bool = True,
          stop_after: int | None = None, progress: bool | None = None,
          splits: Splits | None = None, source: Dataset | None = None,
          workers: int | None = None, model: nn.Module | None = None,
          device: str | torch.device = "cpu") -> TrainResult:
    """Train a velocity field by conditional flow matching.

    Parameters
    ----------
    config : TrainConfig
    out_dir : path or None
        Directory for ``checkpoint.pt`` (written atomically every ``checkpoint_every`` steps, at
        the end and on KeyboardInterrupt). With ``resume`` a matching checkpoint is continued.
    resume : bool
        Continue from an existing checkpoint (its config must equal this one).
    stop_after : int or None
        Stop once this many steps are done (an interruption, for tests); ``completed`` is False.
    progress : bool or None
        Show a tqdm bar (None: when stderr is a terminal).
    splits, source : optional
        Precomputed :func:`prepare_data` output (else computed from the config).
    workers : int or None
        Threads preparing the batches of coming steps (practice regime), so that couplings are
        solved on other cores while a step trains; 0 draws them in the training thread. None
        means :func:`default_workers`. The result does not depend on it.
    model : torch.nn.Module or None
        A velocity module forward(x, t[, c]) to train instead of the one ``config`` names
        (practice regime; its current weights are the initialisation).
    device : str or torch.device
        "cpu" or "cuda" (or "cuda:N"): where the model, the batches and the OT costs live.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    TrainResult

    Examples
    --------
    >>> cfg = TrainConfig(data="moons", steps=5, width=16, batch=32, n_train=64, n_eval=8)
    >>> train(cfg, progress=False).losses.shape
    torch.Size([5])
    """
    cfg = config.resolved(module=model is not None or config.model is not None)
    dev = resolve_device(device)
    splits, source, classes = _training_data(cfg, splits, source, model)
    theory = cfg.regime == "theory"
    field = build_model(cfg, splits.train.shape[1], classes, model).to(dev)
    builtin = isinstance(field, TwoLayerReLUField)
    initial_W = field.W.detach().cpu().clone() if builtin else None
    opt = _optimizer(cfg, field)
    avg = WeightAverage(field, cfg.ema, cfg.ema_warmup) if cfg.ema else None
    losses = torch.empty(cfg.steps)
    step, elapsed = 0, 0.0
    ckpt = Path(out_dir) / CHECKPOINT if out_dir is not None else None
    if ckpt is not None and resume and ckpt.is_file():
        step, elapsed = _restore(load(ckpt), cfg, field, opt, losses, ckpt, avg)
    end = cfg.steps if stop_after is None else min(cfg.steps, max(step, int(stop_after)))
    workers = _checked_workers(workers, cfg)
    batches, step_fn = _step_function(cfg, field, opt, splits, source, classes, workers,
                                      step >= end, end, dev)
    step_fn = step_fn if avg is None else avg.wrap(step_fn)
    bar = _runkit.progress(total=cfg.steps, initial=step, desc=f"train {cfg.data}",
                           enabled=progress)

    def save(step: int, elapsed: float) -> None:
        if ckpt is not None:
            atomic_save(_state(cfg, field, opt, losses, step, elapsed, avg), ckpt)

    try:
        step, elapsed = _run_steps(cfg, step_fn, losses, step, end, elapsed, bar, save)
    finally:
        bar.close()
        if batches is not None:
            batches.close()
    test_loss = None
    if theory and step == cfg.steps:
        test_loss = theory_test_loss(cfg, splits, source, field)
    last = None if avg is None else field
    field = field if avg is None else avg.averaged_field()
    return TrainResult(field, cfg, losses[:step].clone(), step, elapsed, step == cfg.steps,
                       initial_W, test_loss, classes, last)


def _optimizer(cfg: TrainConfig, field):
    """Flat Adam on the built-in field's weights (None in the theory regime, which steps them
    itself), or torch's Adam on a module's parameters."""
    if isinstance(field, TwoLayerReLUField):
        return None if cfg.regime == "theory" else FlatAdam([field.W, field.A])
    return torch.optim.Adam(field.parameters(), lr=cfg.lr)  # type: ignore[arg-type]


def _checked_workers(workers: int | None, cfg: TrainConfig) -> int:
    """The batch-preparing threads: :func:`default_workers` for None, else an int >= 0
    (:class:`FlowsError` otherwise, or above 1024)."""
    if workers is None:
        workers = default_workers(cfg.coupling)
    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 1024:
        raise FlowsError(f"workers={workers!r} is not allowed; it must be an int in [0, 1024]")
    return workers


def _training_data(cfg: TrainConfig, splits: Splits | None, source: Dataset | None,
                   model: nn.Module | None) -> tuple[Splits, Dataset, int]:
    """The splits and source of ``cfg`` (prepared unless both are given) and the number of
    classes; :class:`FlowsError` when labels and config disagree or a module is given in the
    theory regime."""
    if splits is None or source is None:
        splits, source = prepare_data(cfg)
    if (cfg.labels is not None) != isinstance(splits, LabelledSplits):
        raise FlowsError("splits must carry labels exactly when the config has labels; "
                         "use prepare_data(config)")
    if model is not None and cfg.regime == "theory":
        raise FlowsError("model= is not allowed in the theory regime; it trains the built-in "
                         "field")
    classes = splits.classes if isinstance(splits, LabelledSplits) else 0
    return splits, source, classes


def _step_function(cfg: TrainConfig, field, opt, splits: Splits, source: Dataset,
                   classes: int, workers: int, done: bool, end: int,
                   dev: torch.device) -> tuple[Batches | None, Callable[[int], float]]:
    """The batch producer (None in the theory regime) and the function that trains step ``i``
    and returns its loss; ``done``: no step is left, so no warm start is computed."""
    theory = cfg.regime == "theory"
    pool_labels = splits.train_labels if classes else None
    base = derive_seed(cfg.seed, "train")
    warm = None if theory or classes or done else \
        ot_warm_start(cfg, splits.train, source, base, dev)
    batches = None if theory else Batches(
        functools.partial(draw_batch, cfg, splits.train, source, base,
                          pool_labels=pool_labels, classes=classes, device=dev, warm=warm),
        workers, end)
    if theory:
        z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                               cfg.sigma_min, field.spec, derive_seed(cfg.seed, "objective"))
        return batches, theory_step(field, z.to(dev), u.to(dev), cfg.lr)
    if isinstance(field, TwoLayerReLUField):
        return batches, field_step(cfg, field, opt, batches)
    return batches, module_step(cfg, field, opt, batches)


def _run_steps(cfg: TrainConfig, step_fn: Callable[[int], float], losses: torch.Tensor,
               step: int, end: int, elapsed: float, bar,
               save: Callable[[int, float], None]) -> tuple[int, float]:
    """Train steps ``step..end`` into ``losses``, checkpointing (``save``) every
    ``checkpoint_every`` steps; a KeyboardInterrupt is deferred to the end of the running step,
    saved, then raised. Returns the steps done and the training time."""
    with _deferred_interrupt() as interrupted:
        while step < end:
            t0 = time.perf_counter()
            chunk = min(end, (step // cfg.checkpoint_every + 1) * cfg.checkpoint_every)
            start = step
            while step < chunk and not interrupted():
                losses[step] = step_fn(step)
                step += 1
                check_loss(cfg, losses, step)
            elapsed += time.perf_counter() - t0
            if step > start:
                bar.update(step - start)
                bar.set_postfix_str(f"loss {float(losses[step - 1]):.4g}")
                save(step, elapsed)
            if interrupted():
                raise KeyboardInterrupt
    return step, elapsed


EXPLODED = 1e3


def check_loss(cfg: TrainConfig, losses: torch.Tensor, step: int) -> None:
    """Raise :class:`~_runkit.Diverged` if the loss of step ``step`` is non-finite or exploded.

    Exploded: above ``EXPLODED`` times the reference loss, the first positive loss of the run
    (the loss of step 1 unless that is 0; a stable run stays below it). While every loss so
    far is 0 the field matches its targets exactly and there is no scale to explode from: only
    a non-finite loss counts then, and the first positive loss becomes the reference.

    Parameters
    ----------
    cfg : TrainConfig
        The run's config (its ``lr`` is named in the message).
    losses : torch.Tensor, shape (steps,)
        Losses of steps 1..``step`` in ``losses[:step]`` (squared errors, so >= 0).
    step : int
        The step just done, >= 1.

    Examples
    --------
    >>> cfg = TrainConfig(data="moons", lr=0.1)
    >>> check_loss(cfg, torch.tensor([0.0, 0.0, 5.0, 4000.0]), 3)  # 5 sets the scale
    >>> check_loss(cfg, torch.tensor([0.0, 0.0, 5.0, 6000.0]), 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.Diverged: the training loss diverged at step 4 (loss 6e+03, 1.2e+03 times ...
    """
    loss = float(losses[step - 1])
    if not math.isfinite(loss):
        raise Diverged(f"the training loss diverged at step {step} (loss {loss:.3g}); lower lr "
                       f"(now {cfg.lr:g})", step=step, parameter="lr")
    ref, at = float(losses[0]), 1
    if ref <= 0 < loss:  # only a positive loss can have exploded; find the scale it is on
        positive = torch.nonzero(losses[:step] > 0)
        at = int(positive[0, 0]) + 1
        ref = float(losses[at - 1])
    if ref > 0 and loss > EXPLODED * ref:
        raise Diverged(f"the training loss diverged at step {step} (loss {loss:.3g}, "
                       f"{loss / ref:.3g} times the loss {ref:.3g} of step {at}); lower lr "
                       f"(now {cfg.lr:g})", step=step, parameter="lr")


@contextlib.contextmanager
def _deferred_interrupt() -> Iterator[Callable[[], bool]]:
    """Within the block Ctrl-C (SIGINT) only raises a flag, read by the yielded callable.

    The training loop finishes the step it is in, writes its checkpoint and then raises
    KeyboardInterrupt, so an interruption never leaves a half-applied update. Outside the main
    thread, where no signal handler can be set, SIGINT behaves as usual.
    """
    hit = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit.is_set
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hit.set())
    try:
        yield hit.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


def theory_test_loss(cfg: TrainConfig, splits: Splits, source: Dataset,
                     field: TwoLayerReLUField) -> float:
    """The theory objective on held-out points with fresh (t, x0) draws.

    Uses n = min(n_train, n_eval) held-out points with k_draws draws each.
    """
    n = min(cfg.n_train, splits.heldout.shape[0])  # type: ignore[type-var]
    z, u = fixed_objective(splits.heldout[:n], source, cfg.k_draws, cfg.path, cfg.sigma_min,
                           field.spec, derive_seed(cfg.seed, "test-objective"))
    dev = field.W.device
    with torch.no_grad():
        return float((field.forward_z(z.to(dev)) - u.to(dev)).square().sum(1).mean())


def _state(cfg, field, opt, losses, step, elapsed, avg=None) -> dict:
    """Checkpoint contents: plain tensors and numbers only (loadable with weights_only=True);
    ``ema`` (the weight average's state) only for a run with one."""
    weights = {k: v.detach().cpu().clone() for k, v in field.state_dict().items()}
    blob = {"format": FORMAT, "config": cfg.to_dict(), "step": step, "elapsed": elapsed,
            "weights": weights, "optimizer": None if opt is None else opt.state_dict(),
            "losses": losses[:step].clone()}
    if avg is not None:
        blob["ema"] = avg.state_dict()
    return blob


def _check_fields(blob: dict, cfg, field, opt, path: Path, avg=None) -> int:
    """The checkpoint's step, once every field is checked: ``step`` in ``[0, steps]``, the
    weights and the Adam moments of the field's shapes, ``step`` losses, all finite."""
    what = "checkpoint"
    try:
        step = check_saved_step(blob, cfg.steps, what, path)
        check_like(blob.get("weights"), field.state_dict(), what, path, "weights")
        if isinstance(opt, FlatAdam):
            check_like(blob.get("optimizer"), opt.state_dict(), what, path, "optimizer")
            check_saved_step(blob["optimizer"], step, what, path, "t")
        elif opt is not None:
            check_adam_state(blob.get("optimizer"), list(field.parameters()), what, path)
        check_like(blob.get("losses"), torch.empty(step), what, path, "losses")
        if avg is not None:
            _check_average(blob, avg, step, what, path)
        elapsed = blob.get("elapsed")
        if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or elapsed < 0:
            raise BadInput(f"{what}={str(path)!r}: field 'elapsed' is {elapsed!r}, not a "
                           "number of seconds >= 0; the file is damaged or was edited")
        check_finite_tensors({k: blob.get(k) for k in ("weights", "optimizer", "losses",
                                                       "elapsed", "ema")}, what, path)
    except BadInput as err:
        raise BadInput(f"{err}; use another --out or --fresh") from None
    return step


def _check_average(blob: dict, avg: WeightAverage, step: int, what: str, path: Path) -> None:
    """The checkpoint's weight average: the accumulator of the field's shapes, ``step``
    updates."""
    check_like(blob.get("ema"), avg.state_dict(), what, path, "ema")
    if check_saved_step(blob["ema"], step, what, path, "n") != step:
        raise BadInput(f"{what}={str(path)!r}: field 'n' of 'ema' is {blob['ema']['n']}, not "
                       f"the step {step}; the file is damaged or was edited")


def _restore(blob: dict, cfg, field, opt, losses, path: Path,
             avg: WeightAverage | None = None) -> tuple[int, float]:
    if blob.get("format") != FORMAT:
        raise FlowsError("the checkpoint in --out is not a training checkpoint of this version "
                         "of flows; use another --out or --fresh")
    if blob["config"] != cfg.to_dict():
        diff = sorted(k for k in blob["config"] if blob["config"][k] != cfg.to_dict().get(k))
        raise FlowsError(f"the checkpoint in --out was written with a different config "
                         f"(differs in {diff}); use another --out or --fresh")
    step = _check_fields(blob, cfg, field, opt, path, avg)
    try:
        field.load_state_dict(blob["weights"])
    except RuntimeError as exc:
        raise FlowsError(f"the checkpoint in --out does not fit this model ({exc}); use "
                         "another --out or --fresh") from exc
    if opt is not None:
        opt.load_state_dict(blob["optimizer"])
    losses[:step] = blob["losses"]
    if avg is not None:
        avg.load_state_dict(blob["ema"])
    return step, float(blob["elapsed"])
