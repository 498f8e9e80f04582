"""Checkpoints and saved models, through the run contract's atomic writer and safe loader.

Files are written by :func:`_runkit.atomic_torch_save` (unique temporary name, fsync,
``os.replace``) and read by :func:`_runkit.safe_torch_load` (``weights_only=True``): they hold
only tensors, numbers, strings and dicts, and a truncated, foreign or planted file is refused
with :class:`~_runkit.BadInput` naming it, without running anything from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import torch

from _runkit import BadInput, atomic_torch_save, safe_torch_load, write_json

from ..field.module import MODEL_FORMAT, field_from_blob, model_blob, upgrade_blob

__all__ = ["atomic_save", "atomic_write_json", "load", "save_model", "load_model",
           "LoadedModel", "MODEL_FORMAT"]


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


def save_model(path: str | Path, field: torch.nn.Module, config: dict) -> None:
    """Save a trained field with its spec and training config (``model.pt``): the built-in
    field's spec, or a user module's import path and arguments, and its tensors
    (:func:`flows.field.module.model_blob`)."""
    atomic_save(model_blob(field, config), path)


def _model_file(path: Path) -> Path:
    if path.is_dir():
        inner = path / "model.pt"
        if not inner.exists():
            raise BadInput(f"model={str(path)!r} is a directory without model.pt; give a "
                           "training --out directory or its model.pt")
        return inner
    return path


class LoadedModel(NamedTuple):
    """What :func:`load_model` returns: a named pair, so ``field, cfg = load_model(p)`` works.

    Attributes
    ----------
    field : torch.nn.Module
        The velocity field, rebuilt and filled with its saved tensors.
    config : dict
        The training config it was saved with.
    """

    field: torch.nn.Module
    config: dict


def load_model(path: str | Path, model: torch.nn.Module | None = None,
               trust: Iterable[str] = ()) -> LoadedModel:
    """Load ``model.pt`` (or a directory holding it): a :class:`LoadedModel` (``.field``, the
    training ``.config`` dict), which unpacks as the pair ``(field, config)``.

    Files of an earlier format (``flows-model-1``) are converted on load
    (:func:`flows.field.module.upgrade_blob`). A user module is rebuilt by importing its recorded
    class (or is ``model``) and filled with the saved tensors; nothing in the file is executed
    (:func:`flows.field.module.field_from_blob`).
    A recorded class whose module is not imported yet is imported only if ``trust`` names the
    module (or a package holding it): importing runs the module's code.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from flows.field import FieldSpec, TwoLayerReLUField
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> save_model(d / "model.pt", TwoLayerReLUField(FieldSpec(2, 8), seed=0), {"seed": 0})
    >>> loaded = load_model(d)
    >>> loaded.field.spec.width, loaded.config
    (8, {'seed': 0})
    >>> field, cfg = loaded
    """
    path = _model_file(Path(path))
    what = f"model={str(path)!r}"
    blob = upgrade_blob(load(path, what="model"), what)  # earlier formats are converted
    config = blob.get("config")
    if not isinstance(config, dict):
        raise BadInput(f"model={str(path)!r} is damaged: its config is missing")
    return LoadedModel(field_from_blob(blob, model, what=what, trust=trust), config)
