"""Checkpoints and saved models, through the run contract's atomic writer and safe loader.

Files are written by :func:`_runkit.atomic_torch_save` (unique temporary name, fsync,
``os.replace``) and read by :func:`_runkit.safe_torch_load` (``weights_only=True``): they hold
only tensors, numbers, strings and dicts, and a truncated, foreign or planted file is refused
with :class:`~_runkit.BadInput` naming it, without running anything from it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from _runkit import BadInput, atomic_torch_save, safe_torch_load, write_json

from .field import FieldSpec, TwoLayerReLUField

MODEL_FORMAT = "flows-model-1"

__all__ = ["atomic_save", "atomic_write_json", "load", "save_model", "load_model",
           "MODEL_FORMAT"]


def atomic_save(obj: object, path: str | Path) -> None:
    """``torch.save(obj)`` to ``path`` atomically (see :func:`_runkit.atomic_torch_save`)."""
    atomic_torch_save(obj, path)


def atomic_write_json(obj: object, path: str | Path) -> None:
    """Write JSON with the one writer of the run contract (:func:`_runkit.write_json`)."""
    write_json(obj, path)


def load(path: str | Path, what: str = "checkpoint") -> dict:
    """Load a checkpoint or model file written by :func:`atomic_save` (weights only).

    Parameters
    ----------
    path : str or Path
    what : str
        The parameter naming the file in messages (``"checkpoint"``, ``"model"``).

    Returns
    -------
    dict

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "checkpoint.pt"
    >>> atomic_save({"format": "x", "W": torch.zeros(2)}, p)
    >>> sorted(load(p))
    ['W', 'format']
    """
    hint = "; use --fresh to start over or another --out" if what == "checkpoint" else ""
    try:
        blob = safe_torch_load(path, what=what)
    except BadInput as err:
        raise BadInput(f"{err}{hint}") from None
    if not isinstance(blob, dict):
        raise BadInput(f"{what}={str(path)!r} holds a {type(blob).__name__}, not a flows "
                       f"{what}{hint}")
    return blob


def save_model(path: str | Path, field: TwoLayerReLUField, config: dict) -> None:
    """Save a trained field with its spec and training config (``model.pt``)."""
    atomic_save({"format": MODEL_FORMAT, "spec": field.spec.to_dict(),
                 "W": field.W.detach().clone(), "A": field.A.detach().clone(),
                 "config": config}, path)


def _model_file(path: Path) -> Path:
    if path.is_dir():
        inner = path / "model.pt"
        if not inner.exists():
            raise BadInput(f"model={str(path)!r} is a directory without model.pt; give a "
                           "training --out directory or its model.pt")
        return inner
    return path


def load_model(path: str | Path) -> tuple[TwoLayerReLUField, dict]:
    """Load ``model.pt`` (or a directory holding it); returns (field, training config dict).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> save_model(d / "model.pt", TwoLayerReLUField(FieldSpec(2, 8), seed=0), {"seed": 0})
    >>> field, cfg = load_model(d)
    >>> field.spec.width, cfg
    (8, {'seed': 0})
    """
    path = _model_file(Path(path))
    blob = load(path, what="model")
    if blob.get("format") != MODEL_FORMAT:
        raise BadInput(f"model={str(path)!r} is not a flows model file (format "
                       f"{blob.get('format')!r}, expected {MODEL_FORMAT!r})")
    spec_d, config = blob.get("spec"), blob.get("config")
    if not isinstance(spec_d, dict) or not isinstance(config, dict):
        raise BadInput(f"model={str(path)!r} is damaged: its spec or config is missing")
    try:
        spec = FieldSpec(**spec_d)
    except (TypeError, ValueError) as err:
        raise BadInput(f"model={str(path)!r} is damaged: its spec is invalid ({err})") from None
    shapes = {"W": (spec.width, spec.in_features), "A": (spec.width, spec.dim)}
    for key, shape in shapes.items():
        value = blob.get(key)
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != shape \
                or not value.is_floating_point() or not bool(torch.isfinite(value).all()):
            got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise BadInput(f"model={str(path)!r} is damaged: {key} is {got}, expected a finite "
                           f"float tensor of shape {shape}")
    field = TwoLayerReLUField(spec, seed=0)
    with torch.no_grad():
        field.W.copy_(blob["W"])
        field.A.copy_(blob["A"])
    return field, config
