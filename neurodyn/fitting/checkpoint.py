"""The checkpoint of a fit: what identifies it, and writing and reading ``fit_state.pt``.

A checkpoint holds CPU tensors only (a fit resumes on any device) and the fit's config without
the keys that do not change its arithmetic (device, checkpoint spacing, the final check); a
checkpoint written with another config is refused, naming the keys that differ.
"""

from __future__ import annotations

from pathlib import Path

import torch

from _runkit import atomic_torch_save, safe_torch_load

from .config import FitConfig

__all__ = ["FORMAT", "to_device", "checkpoint_config", "save_checkpoint", "load_checkpoint"]

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
    ValueError
        When the file is not a fit checkpoint, or was written with a different config (the
        message names the differing keys).
    """
    state = safe_torch_load(path, what="fit checkpoint")  # BadInput on a bad file
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"checkpoint {path}: not a fit checkpoint of this library; use --fresh")
    old, new = state["config"], checkpoint_config(config)
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        raise ValueError(f"checkpoint {path}: written with a different config (keys {diff}: "
                         + ", ".join(f"{k}={old.get(k)!r} there, {new.get(k)!r} now"
                                     for k in diff) + "); use --fresh to start over")
    return state
