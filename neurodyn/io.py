"""Saving and loading networks, configs and metrics; atomic writes.

A model file (``model.pt``) holds everything needed to rebuild a :class:`HopfieldNetwork`: the
geometry, activation and energy configs, the energy's state, bias, tau, transport gains and the
target manifold's profile. Every file is written to a temporary name and moved into place, so an
interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .activation import make_activation
from .energy import make_energy
from .geometry import make_geometry
from .manifold import TargetManifold
from .network import HopfieldNetwork, Transport

__all__ = ["save_model", "load_model", "load_states", "atomic_torch_save", "write_json",
           "read_json", "to_jsonable", "ModelFormatError"]

FORMAT = "neurodyn.model/1"


class ModelFormatError(ValueError):
    """A file is not a model this library wrote, or is damaged."""


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """``torch.save`` to a temporary file, then an atomic rename onto ``path``."""
    _atomic(Path(path), lambda tmp: torch.save(obj, tmp))


def to_jsonable(obj: Any) -> Any:
    """Convert tensors, arrays, dataclasses, tuples and non-finite floats for JSON output.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"``.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return to_jsonable(obj.detach().cpu().numpy())
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else str(x)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    text = json.dumps(to_jsonable(obj), indent=2, sort_keys=True) + "\n"

    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write(text)

    _atomic(Path(path), write)


def read_json(path: str | Path) -> Any:
    """Read a JSON file."""
    with open(path) as fh:
        return json.load(fh)


def save_model(network: HopfieldNetwork, path: str | Path, extra: dict | None = None) -> None:
    """Save a network to ``path`` (atomically).

    Parameters
    ----------
    network : the network; its energy must be rebuildable from a config.
    path : destination file, conventionally ``DIR/model.pt``.
    extra : JSON-serialisable metadata stored alongside (e.g. the fit config).
    """
    payload = {
        "format": FORMAT,
        "geometry": network.geometry.config(),
        "activation": network.activation.config(),
        "energy": network.energy_fn.config(),
        "energy_state": {k: v.detach().clone() for k, v in network.energy_fn.state_dict().items()},
        "bias": network.bias.detach().clone(),
        "tau": network.tau,
        "transport": None if network.transport is None else network.transport.gains.clone(),
        "manifold_u0": None if network.manifold is None else network.manifold.u0.clone(),
        "extra": to_jsonable(extra or {}),
    }
    atomic_torch_save(payload, path)


def load_model(path: str | Path) -> tuple[HopfieldNetwork, dict]:
    """Load a network saved by :func:`save_model`.

    Parameters
    ----------
    path : a model file, or a directory holding ``model.pt``.

    Returns
    -------
    network, extra : the rebuilt network and the stored metadata.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "model.pt"
    if not path.exists():
        raise FileNotFoundError(f"model: no model file at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # damaged or foreign file
        raise ModelFormatError(f"model: {path} could not be read as a model file ({exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelFormatError(f"model: {path} is not a {FORMAT} file")
    geometry = make_geometry(payload["geometry"])
    activation = make_activation(payload["activation"])
    energy = make_energy(payload["energy"], geometry, payload["energy_state"])
    manifold = None
    if payload["manifold_u0"] is not None:
        manifold = TargetManifold(geometry, activation, payload["manifold_u0"])
    transport = None
    if payload["transport"] is not None:
        transport = Transport(geometry, payload["transport"])
    net = HopfieldNetwork(geometry, activation, energy, payload["bias"], payload["tau"],
                          transport, manifold)
    return net, payload.get("extra", {})


def load_states(path: str | Path, geometry, name: str = "init") -> torch.Tensor:
    """Load initial potentials from a ``.npy`` file and shape them for ``geometry``.

    Accepted shapes: ``(*shape)`` (one state), ``(B, *shape)``, and ``(B, N)`` with ``N`` the
    population size (a torus sheet flattened row by row).

    Parameters
    ----------
    path : str or Path
        The ``.npy`` file.
    geometry : Geometry
        The population's geometry.
    name : str
        The name used in error messages.

    Returns
    -------
    Tensor, shape (B, *geometry.shape), float64
    """
    arr = np.load(path)
    u0 = torch.as_tensor(arr, dtype=torch.float64)
    g = geometry
    if u0.dim() == g.dim:
        u0 = u0.unsqueeze(0)
    if tuple(u0.shape[1:]) != g.shape:
        u0 = u0.reshape(u0.shape[0], -1) if u0.dim() >= 2 else u0
        if u0.dim() != 2 or u0.shape[1] != g.size:
            raise ValueError(f"{name} {path}: shape {arr.shape}; expected (B, {g.size})"
                             + ("" if g.dim == 1 else f" or (B, {g.shape[0]}, {g.shape[1]})"))
        u0 = u0.reshape((u0.shape[0],) + g.shape)
    if not torch.isfinite(u0).all():
        raise ValueError(f"{name} {path}: contains non-finite values")
    return u0
