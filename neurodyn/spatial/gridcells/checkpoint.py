"""The checkpoint of a long grid-cell run: what identifies it, and writing and reading it.

A run simulated in segments (:func:`neurodyn.spatial.gridcells.run.run_grid_cells`) can save,
between two segments, everything it needs to go on: the network state, the index of the next
sample, the function evaluations and wall time so far, the decoded phases and every sum of its
rate maps and null. Segments are cut at the same samples and each segment's noise is seeded by
its first sample, so a resumed run ends bit-identical to an uninterrupted one. A checkpoint
written by another run (other arguments, trajectory or network: :func:`run_identity`) is
refused, naming what differs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch

from _runkit import BadInput, atomic_torch_save, safe_torch_load

__all__ = ["FORMAT", "run_identity", "save_run_state", "load_run_state"]

#: the ``format`` entry of every grid-cell checkpoint
FORMAT = "neurodyn.grid-cells/1"


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def run_identity(network, trajectory, arguments: dict) -> dict:
    """What a checkpoint must match to be resumed: ``arguments`` (the run's numbers, JSON-like)
    and digests of the trajectory's positions and of the network's parameters and buffers.

    Parameters
    ----------
    network : torch.nn.Module
        The network.
    trajectory : Trajectory
        The trajectory.
    arguments : dict
        Plain values (numbers, strings, lists, None).

    Returns
    -------
    dict

    Examples
    --------
    >>> from neurodyn.spatial.agent import generate_trajectory
    >>> tr = generate_trajectory(1.0, seed=0)
    >>> a = run_identity(torch.nn.Linear(2, 2), tr, {"seed": 0})
    >>> a == run_identity(torch.nn.Linear(2, 2), tr, {"seed": 0}), sorted(a)
    (False, ['network', 'seed', 'trajectory'])
    """
    state = list(network.state_dict().values())
    return {**json.loads(json.dumps(arguments)),
            "trajectory": _digest(trajectory.t, trajectory.position),
            "network": _digest(*state)}


def _tensors(obj):
    """Every numpy array in ``obj`` (nested dicts and lists) as a tensor."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, dict):
        return {k: _tensors(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_tensors(v) for v in obj]
    return obj


def _arrays(obj):
    """Every tensor in ``obj`` as a numpy array (the inverse of :func:`_tensors`)."""
    if isinstance(obj, torch.Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: _arrays(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_arrays(v) for v in obj]
    return obj


def save_run_state(path: Path, identity: dict, state: dict) -> None:
    """Write ``state`` (numbers, tensors and numpy arrays in dicts and lists) with the format
    and ``identity``, atomically, on the CPU."""
    state = {k: (v.detach().cpu() if isinstance(v, torch.Tensor) else v)
             for k, v in state.items()}
    atomic_torch_save({"format": FORMAT, "identity": identity, **_tensors(state)}, path)


def load_run_state(path: Path, identity: dict) -> dict:
    """Read a checkpoint written for ``identity`` (numpy arrays where numpy arrays were saved).

    Raises
    ------
    BadInput
        Not a grid-cell checkpoint, or written by a run with another identity (the message
        names the keys that differ); :class:`~_runkit.BadInput` for an unreadable file.
    """
    state = safe_torch_load(path, what="grid-cell checkpoint")
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise BadInput(f"checkpoint {path}: not a grid-cell checkpoint of this library; "
                       "use --fresh")
    old = state.pop("identity")
    diff = sorted(k for k in set(old) | set(identity) if old.get(k) != identity.get(k))
    if diff:
        raise BadInput(f"checkpoint {path}: written by another run (keys {diff} differ); "
                       "use --fresh to start over")
    state.pop("format")
    u = state.pop("u")
    return {"u": u, **_arrays(state)}
