"""Devices of a simulation: ``cpu`` or ``cuda``, checked once, and a network placed there.

Examples
--------
>>> check_device("cpu")
device(type='cpu')
"""

from __future__ import annotations

import copy

import torch

from _runkit import BadInput

__all__ = ["DEVICES", "check_device", "on_device", "module_tensors"]

DEVICES = ("cpu", "cuda")


def check_device(device: str | torch.device) -> torch.device:
    """The device ``device`` as a :class:`torch.device`, refused when it is not usable.

    Parameters
    ----------
    device : str or torch.device
        ``"cpu"``, ``"cuda"`` or ``"cuda:I"`` (or a :class:`torch.device`).

    Raises
    ------
    BadInput
        for another kind of device, or ``cuda`` on a machine without a CUDA device.
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise BadInput(f"device={device!r}: not a device; choose one of {DEVICES}",
                       param="device") from None
    if dev.type not in DEVICES:
        raise BadInput(f"device={device!r}: unsupported; choose one of {DEVICES}", param="device")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise BadInput(f"device={device!r}: torch finds no CUDA device on this machine; "
                           "use device='cpu'", param="device")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise BadInput(f"device={device!r}: only {torch.cuda.device_count()} CUDA "
                           "device(s) here", param="device")
    return dev


def module_tensors(module: torch.nn.Module) -> list[torch.Tensor]:
    """Every parameter and buffer of ``module`` and its submodules (one walk of the tree).

    >>> len(module_tensors(torch.nn.Linear(2, 3)))
    2
    """
    return [t for m in module.modules()
            for d in (m._parameters, m._buffers) for t in d.values() if t is not None]


def on_device(module: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """``module`` itself if all its tensors live on ``device``, else a copy moved there."""
    tensors = module_tensors(module)
    if all(t.device == device or (device.index is None and t.device.type == device.type)
           for t in tensors):
        return module
    return copy.deepcopy(module).to(device)
