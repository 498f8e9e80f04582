"""The checkpoint of a fit: what identifies it, and writing and reading ``fit_state.pt``.

A checkpoint holds CPU tensors only (a fit resumes on any device) and the fit's config without
the keys that do not change its arithmetic (device, checkpoint spacing, the final check); a
checkpoint written with another config is refused, naming the keys that differ.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from _runkit import BadInput, atomic_torch_save, check_interrupt, safe_torch_load
from _runkit import progress as progress_bar
from _runkit.files import check_finite_tensors, check_saved_step

from .config import FitConfig

__all__ = ["FORMAT", "to_device", "checkpoint_config", "save_checkpoint", "load_checkpoint",
           "check_resumable", "checkpointed_steps"]

#: the ``format`` entry of every fit checkpoint
FORMAT = "neurodyn.fit/2"


def to_device(obj, device):
    """Every tensor of ``obj`` (nested dicts, lists and tuples) on ``device``."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(v, device) for v in obj)
    return obj


def checkpoint_config(config: FitConfig) -> dict:
    """The config keys a checkpoint must match to be resumed (as a plain dict)."""
    d = config.to_dict()
    d.pop("device")  # a checkpoint resumes on any device
    d.pop("checkpoint_every")
    d.pop("check_kappa")
    d.pop("kappa_tol")
    return d


def save_checkpoint(path: Path | None, config: FitConfig, **state) -> None:
    """Write ``state`` (tensors moved to the CPU) with the format and config, atomically;
    nothing when ``path`` is None."""
    if path is not None:
        atomic_torch_save({"format": FORMAT, "config": checkpoint_config(config),
                           **to_device(state, "cpu")}, path)


def load_checkpoint(path: Path, config: FitConfig) -> dict:
    """Read a checkpoint written for ``config``.

    Raises
    ------
    BadInput
        When the file is not a fit checkpoint, or was written with a different config (the
        message names the differing keys), or when a field is damaged: ``step`` outside
        ``[0, steps]``, a history whose length is not ``step``, a NaN or infinite tensor (the
        message names the file and the field).
    """
    state = safe_torch_load(path, what="fit checkpoint")  # BadInput on a bad file
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise BadInput(f"checkpoint {path}: not a fit checkpoint of this library; use --fresh")
    old, new = state["config"], checkpoint_config(config)
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        raise BadInput(f"checkpoint {path}: written with a different config (keys {diff}: "
                       + ", ".join(f"{k}={old.get(k)!r} there, {new.get(k)!r} now"
                                     for k in diff) + "); use --fresh to start over")
    _check_fields(state, config, path)
    return state


def check_resumable(path: Path, config: FitConfig) -> None:
    """Refuse (:class:`~_runkit.BadInput`), reading only, a checkpoint at ``path`` that a fit of
    ``config`` cannot resume (:func:`load_checkpoint`); an absent one is fine. A run directory
    calls it before it writes anything (:class:`~_runkit.RunDir`'s ``check``)."""
    if not Path(path).exists():
        return
    load_checkpoint(Path(path), config)


def _check_fields(state: dict, config: FitConfig, path: Path) -> None:
    """Refuse a checkpoint whose step, history or tensors cannot be those of a fit of
    ``config`` (the shapes of the tensors are checked where they are loaded)."""
    what = "fit checkpoint"
    step = check_saved_step(state, config.steps, what, path)
    history = state.get("history")
    if not isinstance(history, dict) or not history or any(
            not isinstance(v, list) or len(v) != step for v in history.values()):
        raise BadInput(f"{what}={str(path)!r}: field 'history' does not hold {step} losses a "
                       "term (the step); the file is damaged or was edited; use --fresh")
    check_finite_tensors({k: v for k, v in state.items() if k != "config"}, what, path)


def checkpointed_steps(config: FitConfig, step0: int, history: dict, step_fn: Callable,
                       save: Callable[[int], None], *, progress: bool | None, ckpt: Path | None,
                       holds: Callable[[int], str], interrupted_cls: type[Exception]) -> None:
    """Run the fit's steps ``step0 .. config.steps - 1`` under a progress bar, checkpointed.

    Parameters
    ----------
    config : FitConfig
        ``steps`` and ``checkpoint_every``.
    step0 : int
        The first step (that of a resumed checkpoint, else 0).
    history : dict
        The per-term losses, one entry a step in ``history["linear"]``.
    step_fn : callable
        ``step_fn(step)`` runs one step, appends its losses to ``history`` and returns the
        progress bar's postfix (a dict, or None).
    save : callable
        ``save(done)`` writes the checkpoint after ``done`` steps: every
        ``config.checkpoint_every`` steps, at the end, and on Ctrl-C.
    progress : bool or None
        Show the bar (None: only on a terminal).
    ckpt : Path or None
        The checkpoint file named in the interruption message.
    holds : callable
        ``holds(done)`` says what the checkpoint holds after ``done`` steps.
    interrupted_cls : type
        Raised on Ctrl-C, after saving the completed steps.
    """
    bar = progress_bar(total=config.steps, desc="fit", enabled=progress, initial=step0)
    try:
        for step in range(step0, config.steps):
            postfix = step_fn(step)
            bar.update(1)
            if postfix:
                bar.set_postfix(**postfix)
            if (step + 1) % config.checkpoint_every == 0:
                save(step + 1)
            check_interrupt()
    except KeyboardInterrupt:
        done = len(history["linear"])
        save(done)
        where = f"; checkpoint {ckpt} holds {holds(done)}" if ckpt is not None \
            else " (no output directory, nothing saved)"
        raise interrupted_cls(f"fit interrupted after {done} of {config.steps} steps{where}; "
                              "rerun the same command to resume") from None
    finally:
        bar.close()
    save(config.steps)
