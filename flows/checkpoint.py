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
from .field import FieldSpec, TwoLayerReLUField


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
    return torch.load(path, map_location="cpu", weights_only=False)


def save_model(path: str | Path, field: TwoLayerReLUField, config: dict) -> None:
    """Save a trained field with its spec and training config (``model.pt``)."""
    atomic_save({"format": "flows-model-1", "spec": field.spec.to_dict(),
                 "W": field.W.detach().clone(), "A": field.A.detach().clone(),
                 "config": config}, path)


def load_model(path: str | Path) -> tuple[TwoLayerReLUField, dict]:
    """Load ``model.pt`` (or a directory holding it); returns (field, training config dict)."""
    path = Path(path)
    if path.is_dir():
        path = path / "model.pt"
    blob = load(path)
    if blob.get("format") != "flows-model-1":
        raise FlowsError(f"model={str(path)!r} is not a flows model file")
    field = TwoLayerReLUField(FieldSpec(**blob["spec"]), seed=0)
    with torch.no_grad():
        field.W.copy_(blob["W"])
        field.A.copy_(blob["A"])
    return field, blob["config"]
