"""Saving and loading networks, configs and metrics; atomic writes.

Model files load with ``weights_only=True`` (:func:`_runkit.safe_torch_load`); the writers are
those of :mod:`_runkit` (atomic, unique temporary names, fsync).

A model file (``model.pt``) holds everything needed to rebuild a :class:`HopfieldNetwork`: the
geometry, activation and energy configs, the energy's state, bias, tau, transport gains and the
target manifold's profile. Every file is written to a temporary name and moved into place, so an
interrupted run never leaves a half-written file.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from _runkit import (
    BadInput,
    atomic_torch_save,
    check_array,
    check_memory,
    read_json,
    safe_torch_load,
    to_jsonable,
    write_json,
)
from _runkit.files import check_finite_tensors, load_npy

from .activation import make_activation
from .energies import make_energy
from .geometry.populations import make_geometry
from .manifold import TargetManifold
from .network import HopfieldNetwork, Transport

__all__ = ["save_model", "load_model", "LoadedModel", "load_states", "load_velocity_array",
           "atomic_torch_save", "write_json", "read_json", "to_jsonable", "ModelFormatError"]

FORMAT = "neurodyn.model/1"


class ModelFormatError(BadInput):
    """A file is not a model this library wrote, or is damaged."""


def save_model(network: HopfieldNetwork, path: str | Path, extra: dict | None = None,
               overwrite: bool = False) -> None:
    """Save a network to ``path`` (atomically); an existing file is replaced only when asked.

    Parameters
    ----------
    network : HopfieldNetwork
        The network; its energy must be rebuildable from a config.
    path : str or Path
        Destination file, conventionally ``DIR/model.pt``.
    extra : dict or None
        JSON-serialisable metadata stored alongside (e.g. the fit config).
    overwrite : bool
        Replace a file that exists at ``path`` (a model ``neurodyn fit`` wrote there, say).
        Without it such a file is left as it is and :class:`~_runkit.BadInput` names it: a
        second save to one path is a mistake more often than an intention.

    Raises
    ------
    BadInput
        ``path`` exists and ``overwrite`` is False, or is a directory.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=1)).network
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.pt"
    >>> save_model(net, path)
    >>> save_model(net, path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: path='.../model.pt' exists; save_model replaces a file only ...
    >>> save_model(net, path, overwrite=True)

    Notes
    -----
    The tensors are stored on the CPU, so a network fitted on ``cuda`` loads anywhere. Besides
    ``extra`` the file records ``library_version``, ``git_commit`` (the checkout's commit where
    the library runs from one) and, for a network from :func:`neurodyn.fit`, its resolved
    config under ``fit``; keys of ``extra`` take precedence.
    """
    target = Path(path)
    if target.is_dir():
        raise BadInput(f"path={str(path)!r} is a directory; name the file, e.g. "
                       f"{str(target / 'model.pt')!r}")
    if target.exists() and not overwrite:
        raise BadInput(f"path={str(path)!r} exists; save_model replaces a file only with "
                       "overwrite=True (or choose another path)")
    extra = {**_provenance(network), **(extra or {})}
    payload = {
        "format": FORMAT,
        "geometry": network.geometry.config(),
        "activation": network.activation.config(),
        "energy": network.energy_fn.config(),
        "energy_state": {k: v.detach().cpu().clone()
                         for k, v in network.energy_fn.state_dict().items()},
        "bias": network.bias.detach().cpu().clone(),
        "tau": network.tau,
        "transport": None if network.transport is None else network.transport.gains.cpu().clone(),
        "manifold_u0": None if network.manifold is None else network.manifold.u0.cpu().clone(),
        "extra": to_jsonable(extra),
    }
    atomic_torch_save(payload, path)


def _provenance(network: HopfieldNetwork) -> dict:
    """What a model file records of where it came from: the library's version, the commit of
    its checkout (when it runs from one) and the fit's config (a network of :func:`fit`)."""
    from _runkit.rundir import git_commit, library_version

    out: dict = {"library_version": library_version()}
    commit = git_commit()
    if commit is not None:
        out["git_commit"] = commit
    config = getattr(network, "fit_config", None)  # set by neurodyn.fit: the resolved dict
    if isinstance(config, dict):
        out["fit"] = config
    return out


class LoadedModel(NamedTuple):
    """What :func:`load_model` returns: a named pair, so ``net, extra = load_model(p)`` works.

    Attributes
    ----------
    network : HopfieldNetwork
        The rebuilt network.
    extra : dict
        The metadata stored with it (:func:`save_model`'s ``extra``, e.g. the fit config).
    """

    network: HopfieldNetwork
    extra: dict


def load_model(path: str | Path, what: str = "model") -> LoadedModel:
    """Load a network saved by :func:`save_model` (``weights_only``: no code in it can run).

    Parameters
    ----------
    path : str or Path
        A model file, or a directory holding ``model.pt``.
    what : str
        The parameter named in an error.

    Returns
    -------
    LoadedModel
        ``.network`` (the rebuilt network) and ``.extra`` (the stored metadata); it unpacks
        as the pair ``(network, extra)``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> save_model(fit(FitConfig(n=32, steps=1)).network, d / "model.pt", extra={"seed": 0})
    >>> loaded = load_model(d)
    >>> loaded.network.geometry.shape, loaded.extra["seed"], loaded.extra["fit"]["n"]
    ((32,), 0, 32)
    >>> sorted(k for k in loaded.extra if k != "git_commit")  # besides the weights
    ['fit', 'library_version', 'seed']
    >>> net, extra = loaded

    Raises
    ------
    ModelFormatError
        The file is missing, truncated, foreign, or holds anything but tensors and plain values.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "model.pt"
    if not path.exists():
        raise ModelFormatError(f"{what}={str(path)!r}: no model file there")
    try:
        payload = safe_torch_load(path, what=what)
    except BadInput as err:
        raise ModelFormatError(str(err)) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelFormatError(f"{what}={str(path)!r} is not a {FORMAT} file")
    _check_declared_size(payload, path, what)
    _check_finite_fields(payload, path, what)
    try:
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
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as err:
        raise ModelFormatError(f"{what}={str(path)!r} is a damaged {FORMAT} file "
                               f"({type(err).__name__}: {err})") from None
    _check_drive(net, path, what)
    return LoadedModel(net, payload.get("extra", {}))


def _check_drive(net: HopfieldNetwork, path: Path, what: str) -> None:
    """Refuse a model whose own input at its target bump (at rest without one) lies outside
    the sane range of a simulation's potentials (:data:`~neurodyn.dynamics.simulation.
    STATE_LIMIT`), naming the field behind it: a run of it could only diverge."""
    from .dynamics.simulation import STATE_LIMIT

    u = (net.manifold.u0 if net.manifold is not None
         else torch.zeros(net.geometry.shape, dtype=torch.float64))[None]
    r = net.activation(u)
    terms = {"bias": lambda: net.bias, "energy_state": lambda: net.energy_fn.grad(r)}
    if net.transport is not None:  # the transport's input at a speed of 1 rad per tau
        terms["transport"] = lambda: net.transport(r, torch.ones(1, net.geometry.dim,
                                                                 dtype=r.dtype))
    for field, term in terms.items():
        size = float(term().detach().abs().max())
        if not size <= STATE_LIMIT:
            raise ModelFormatError(
                f"{what}={str(path)!r}: field {field!r} drives the potentials by {size:.3g} at "
                f"the network's own target bump, outside a simulation's sane range "
                f"|u| <= {STATE_LIMIT:g}; the file is damaged or was edited")


#: Bytes a network allocates per neuron, at least (float64 state, bias, coordinates, spectra,
#: transport and their work buffers); the declared size times this is checked before building.
BYTES_PER_NEURON = 128


def _declared_neurons(geometry: object, path: Path, what: str) -> int:
    """The number of neurons a model file's geometry config declares, checked to be sizes."""
    if not isinstance(geometry, dict) or "n" not in geometry:
        return 1  # rebuilding it refuses the config, or uses the small default size
    sizes = geometry["n"]
    sizes = [sizes] if not isinstance(sizes, (list, tuple)) else list(sizes)
    total = 1
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ModelFormatError(f"{what}={str(path)!r}: field 'geometry' declares n={size!r}; "
                                   f"it must be a positive integer")
        total *= int(size)
    return total


def _check_declared_size(payload: dict, path: Path, what: str) -> None:
    """Refuse, before anything is built, a model whose declared size cannot fit in memory."""
    neurons = _declared_neurons(payload.get("geometry"), path, what)
    try:
        check_memory("n", float(neurons) * BYTES_PER_NEURON)
    except BadInput as err:
        raise ModelFormatError(f"{what}={str(path)!r} declares a network of n={neurons:,} "
                               f"neurons: {str(err).split(': ', 1)[-1]}") from None
    profile = payload.get("manifold_u0")  # the target bump: one value a neuron
    if isinstance(profile, torch.Tensor) and profile.numel() != neurons:
        raise ModelFormatError(f"{what}={str(path)!r}: field 'geometry' declares n={neurons:,} "
                               f"neurons but field 'manifold_u0' holds {profile.numel():,} "
                               "values; the file is damaged or was edited")


def _check_finite_fields(payload: dict, path: Path, what: str) -> None:
    """Refuse a model whose tensors or ``tau`` hold NaN or infinity, naming the field."""
    fields = ("bias", "tau", "transport", "manifold_u0", "energy_state")
    try:
        check_finite_tensors({k: payload.get(k) for k in fields}, what, path)
    except BadInput as err:
        raise ModelFormatError(str(err)) from None


def _load_npy(path: str | Path, name: str) -> np.ndarray:
    return load_npy(path, name)  # size, checksum, no pickles: BadInput naming the file


def load_states(path: str | Path, geometry, name: str = "init") -> torch.Tensor:
    """Load initial potentials from a ``.npy`` file and shape them for ``geometry``.

    Accepted shapes: ``(*shape)`` (one state), ``(B, *shape)``, and ``(B, N)`` with ``N`` the
    population size (a torus sheet flattened row by row). Complex, non-finite or empty arrays
    are refused.

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

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from neurodyn.geometry.populations import Torus
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u0.npy"
    >>> np.save(p, np.zeros((3, 64)))
    >>> load_states(p, Torus(8, 8)).shape
    torch.Size([3, 8, 8])
    """
    g = geometry
    arr = _load_npy(path, name)
    check_array(name, arr, empty=False)
    allowed = f"({', '.join(map(str, g.shape))}), (B, {', '.join(map(str, g.shape))})"
    if g.dim > 1:
        allowed += f" or (B, {g.size})"
    shape = tuple(arr.shape)
    if shape == g.shape:
        arr = arr[None]
    elif len(shape) == g.dim + 1 and shape[1:] == g.shape:
        pass
    elif g.dim > 1 and len(shape) == 2 and shape[1] == g.size:
        arr = arr.reshape((shape[0],) + g.shape)
    else:
        raise BadInput(f"{name}={str(path)!r} has shape {shape}; allowed: {allowed}")
    if arr.shape[0] < 1:
        raise BadInput(f"{name}={str(path)!r} holds no state (shape {shape})")
    return torch.as_tensor(np.ascontiguousarray(arr), dtype=torch.float64)


def load_velocity_array(path: str | Path, name: str = "velocity-file") -> np.ndarray:
    """Load a velocity time series from a ``.npy`` file: real, finite, at least one sample.

    Parameters
    ----------
    path : str or Path
        The file.
    name : str
        The name used in error messages.

    Returns
    -------
    ndarray, float64
        Shape as stored (checked against the run by
        :class:`~neurodyn.dynamics.inputs.ArrayVelocity`).
    """
    arr = _load_npy(path, name)
    check_array(f"{name}={str(path)!r}", arr, ndim=(1, 2, 3))
    return arr.astype(np.float64)


def fit_or_load(config, cache: str | Path | None) -> tuple[HopfieldNetwork, dict]:
    """The network of a :class:`~neurodyn.fitting.core.FitConfig`: loaded from the model cache
    ``cache`` when it holds this config's fit, else fitted and saved there (``None``: fitted,
    nothing saved). The demo and bench scripts share their fitted models through it.

    The model lives in ``cache/<geometry>-<hash of the config>/model.pt`` (the config beside it,
    under ``fit`` in the file's extra), so another config never loads it; the fit's checkpoint
    goes to the same folder, so an interrupted fit resumes.

    Returns
    -------
    network, info : HopfieldNetwork, dict
        ``info`` holds ``fit_seconds`` (0 when loaded) and ``model``, the model folder (None
        without a cache).
    """
    import hashlib
    import json

    from .fitting.core import fit

    if cache is None:
        result = fit(config, progress=False)
        return result.network, {"fit_seconds": result.seconds, "model": None}
    key = hashlib.sha1(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()[:10]
    folder = Path(cache) / f"{config.geometry}-{key}"
    if (folder / "model.pt").exists():
        network, _ = load_model(folder)
        return network, {"fit_seconds": 0.0, "model": str(folder)}
    result = fit(config, out_dir=folder, progress=False)
    # a cache: a script running beside this one may have saved the same fit meanwhile
    save_model(result.network, folder / "model.pt", extra={"fit": config.to_dict()},
               overwrite=True)
    return result.network, {"fit_seconds": result.seconds, "model": str(folder)}
