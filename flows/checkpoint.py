"""Atomic checkpoints and saved models.

A file is written to ``<name>.tmp`` in the same directory and moved into place with
``os.replace``, so an interrupted write never leaves a truncated checkpoint behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from .errors import FlowsError
from .model import field_from_blob, model_blob


def atomic_save(obj: object, path: str | Path) -> None:
    """torch.save(obj) to ``path`` atomically (tmp file then os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_json(obj: object, path: str | Path) -> None:
    """Write JSON (indented, sorted keys) to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def load(path: str | Path) -> dict:
    """Load a checkpoint or model file written by :func:`atomic_save`."""
    path = Path(path)
    if not path.is_file():
        raise FlowsError(f"model={str(path)!r} does not exist; give a training --out directory "
                         "or its model.pt")
    return torch.load(path, map_location="cpu", weights_only=True)


def save_model(path: str | Path, field: torch.nn.Module, config: dict) -> None:
    """Save a trained field (built-in or a user module's spec and tensors) with its training
    config (``model.pt``); see :func:`flows.model.model_blob`."""
    atomic_save(model_blob(field, config), path)


def load_model(path: str | Path, model: torch.nn.Module | None = None
               ) -> tuple[torch.nn.Module, dict]:
    """Load ``model.pt`` (or a directory holding it); returns (field, training config dict).

    A user module is rebuilt from its recorded import path and arguments (or is ``model``);
    see :func:`flows.model.field_from_blob`.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "model.pt"
    blob = load(path)
    return field_from_blob(blob, model, what=f"model={str(path)!r}"), blob["config"]
