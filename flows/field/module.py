"""Velocity models: the built-in two-layer ReLU field or any torch module v(x, t[, c]).

A user model is any ``torch.nn.Module`` whose ``forward(x, t)`` (unconditional) or
``forward(x, t, c)`` (class-conditional) returns the velocity, with

- x : float tensor of shape (B, d), on the training device;
- t : float tensor of shape (B, 1), times in [0, 1];
- c : int64 tensor of shape (B,), labels in 0..K, where K (the number of classes) is the null
  label of classifier-free guidance ("no class": the unconditional field).

It is trained by autograd with ``torch.optim.Adam`` (the built-in field keeps its direct
gradients). A model named by import path, ``"pkg.module:Class"`` with JSON keyword arguments,
is saved as that spec plus its ``state_dict``: loading imports the class from the recorded path
(the user's own code) and fills in the tensors, so nothing is executed from the file itself
(checkpoints load with ``weights_only=True``). Importing a module runs its code, so a model file
may name only a class whose module is already imported in this process or is trusted by the
caller (``trust=`` of :func:`~flows.training.checkpoint.load_model`, ``--trust-module`` on the
command line): a planted file cannot make the loader import anything else.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterable

import torch
from torch import nn

from ..errors import FlowsError, check_int

_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
#: modules of this library that have moved, as model files written before the move name them
MOVED_MODULES = {"flows.nets.conv": "flows.field.conv", "flows.nets.mlp": "flows.field.mlp"}


def import_class(target: str) -> type:
    """The class named by ``"pkg.module:Class"`` (imported from the user's environment).

    Raises :class:`FlowsError` naming the target when it is malformed, cannot be imported or
    is not a ``torch.nn.Module`` subclass.

    Examples
    --------
    >>> import_class("torch.nn:Linear").__name__
    'Linear'
    >>> import_class("flows.nets.conv:ConvField").__module__  # a model file of before the move
    'flows.field.conv'
    """
    if not isinstance(target, str) or not _TARGET.match(target):
        raise FlowsError(f"model={target!r} is not allowed; name a class as 'package.module:Class'")
    module_name, qualname = target.split(":")
    module_name = MOVED_MODULES.get(module_name, module_name)
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise FlowsError(f"model={target!r}: module {module_name!r} cannot be imported ({exc}); "
                         "put it on PYTHONPATH or install it") from exc
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise FlowsError(f"model={target!r}: {module_name!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise FlowsError(f"model={target!r} is not a torch.nn.Module subclass")
    return obj


def check_model_args(args: object) -> dict:
    """Keyword arguments of a user model: a JSON-serialisable dict with string keys."""
    if args is None:
        return {}
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise FlowsError(f"model_args={args!r} is not allowed; it must be a dict with string keys")
    try:
        json.dumps(args)
    except (TypeError, ValueError) as exc:
        raise FlowsError(f"model_args={args!r} is not JSON-serialisable ({exc})") from exc
    return args


def build_module(target: str, args: dict | None, seed: int) -> nn.Module:
    """Instantiate ``target(**args)`` with its initial weights drawn from ``seed``.

    The global torch RNG is forked for the construction (and restored afterwards), so the
    initialisation is reproducible and the caller's RNG state is untouched.
    """
    cls = import_class(target)
    kwargs = check_model_args(args)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(check_int("seed", seed) % 2**63)  # 1.5 or "0" is refused
        try:
            module = cls(**kwargs)
        except TypeError as exc:
            raise FlowsError(f"model={target!r} could not be built with model_args={kwargs!r}: "
                             f"{exc}") from exc
    return module


def check_module_field(field: ModuleField, dim: int, name: str = "model") -> None:
    """Call a user model once on a batch of two zero states (and labels 0 when it is
    conditional) and refuse it with :class:`FlowsError` naming ``name`` when its forward does
    not take ``(x, t[, c])`` or returns another shape. No gradient is recorded."""
    x = torch.zeros(2, dim)
    c = torch.zeros(2, dtype=torch.long) if field.classes else None
    try:
        with torch.no_grad():
            field(x, torch.zeros(2), c)
    except FlowsError as exc:
        raise FlowsError(f"{name}: {exc}") from exc
    except (TypeError, RuntimeError, ValueError, IndexError) as exc:
        want = "(x, t, c)" if field.classes else "(x, t)"
        raise FlowsError(f"{name}: forward{want} failed on a batch of 2 states of dimension "
                         f"{dim}: {exc}") from exc


class ModuleField(nn.Module):
    """Adapter giving a user module the field interface v(x, t[, c]) of the library.

    t may be a float, a scalar tensor (as the ODE solvers pass it) or of shape (B,) / (B, 1);
    the module always receives t of shape (B, 1). With ``classes`` > 0 the labels c are passed
    as the third argument.

    Parameters
    ----------
    module : torch.nn.Module
        forward(x, t) or forward(x, t, c) returning (B, d).
    classes : int
        Number K of classes (0: unconditional).
    dim : int or None
        Data dimension d (recorded with a saved model).

    Examples
    --------
    >>> class Zero(nn.Module):
    ...     def forward(self, x, t):
    ...         return x * 0 + t
    >>> ModuleField(Zero())(torch.ones(3, 2), 0.5)[0].tolist()
    [0.5, 0.5]
    """

    def __init__(self, module: nn.Module, classes: int = 0, dim: int | None = None) -> None:
        super().__init__()
        self.module = module
        self.classes = int(classes)
        self.dim = dim

    def forward(self, x: torch.Tensor, t: torch.Tensor | float,
                c: torch.Tensor | None = None) -> torch.Tensor:
        """v(x, t[, c]), x of shape (B, d), returns (B, d)."""
        b = x.shape[0]
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device).reshape(-1, 1).expand(b, 1)
        if self.classes:
            if c is None:
                raise FlowsError(f"this model has classes={self.classes}; pass labels c of "
                                 f"shape ({b},) with values in 0..{self.classes}")
            v = self.module(x, t, c)
        else:
            v = self.module(x, t)
        if v.shape != x.shape:
            raise FlowsError(f"the model returned shape {tuple(v.shape)} for x of shape "
                             f"{tuple(x.shape)}; a velocity has the shape of x")
        return v


def class_target(module: nn.Module) -> str:
    """The import path ``"pkg.module:Class"`` of a module's class (as :func:`import_class` reads
    it)."""
    cls = type(module)
    return f"{cls.__module__}:{cls.__qualname__}"


def resolve_device(device: str | torch.device) -> torch.device:
    """A torch device from "cpu", "cuda" or "cuda:N", refused when it is not available here.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise FlowsError(f"device={device!r} is not allowed; use 'cpu' or 'cuda'") from exc
    if dev.type not in ("cpu", "cuda"):
        raise FlowsError(f"device={device!r} is not allowed; use 'cpu' or 'cuda'")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise FlowsError(f"device={device!r} is not available: this torch build or machine has "
                         "no CUDA device; use device='cpu'")
    return dev


MODEL_FORMAT = "flows-model-2"

#: Earlier model formats that :func:`upgrade_blob` converts on load, with what changed since.
LEGACY_MODEL_FORMATS = {
    "flows-model-1": "the built-in field only, its weights as top-level 'W' and 'A' and a spec "
                     "without 'classes' (before user modules and class labels)",
}


def model_blob(field: nn.Module, config: dict) -> dict:
    """What ``model.pt`` holds: the field's kind and spec, its tensors and the training config.

    Only strings, numbers, dicts and tensors (``torch.load(weights_only=True)`` reads it). A
    user module is recorded by its import path and keyword arguments (``config["model"]`` and
    ``config["model_args"]``), or by its class path alone when it was passed in built.
    """
    from .relu import TwoLayerReLUField

    state = {k: v.detach().cpu().clone() for k, v in field.state_dict().items()}
    if isinstance(field, TwoLayerReLUField):
        return {"format": MODEL_FORMAT, "kind": "builtin", "spec": field.spec.to_dict(),
                "state_dict": state, "config": config, **_provenance()}
    if not isinstance(field, ModuleField):
        raise FlowsError(f"field={type(field).__name__} cannot be saved; expected a "
                         "TwoLayerReLUField or a ModuleField")
    named = config.get("model") is not None
    spec = {"target": config["model"] if named else class_target(field.module),
            "args": config.get("model_args") or {} if named else None,
            "classes": field.classes, "dim": field.dim}
    return {"format": MODEL_FORMAT, "kind": "module", "spec": spec, "state_dict": state,
            "config": config, **_provenance()}


def _provenance() -> dict:
    """The library version and, when it runs from a checkout, the commit that wrote a model."""
    from _runkit.rundir import git_commit, library_version

    commit = git_commit()
    return {"library_version": library_version(), **({"git_commit": commit} if commit else {})}


def upgrade_blob(blob: object, what: str = "model") -> dict:
    """A model file's contents in today's format (:data:`MODEL_FORMAT`).

    Files of an earlier format (:data:`LEGACY_MODEL_FORMATS`) are converted: ``flows-model-1``
    held the built-in two-layer field's ``W`` (m, p) and ``A`` (m, d) at the top level and a
    spec without ``classes``; it becomes a ``builtin`` model with ``classes=0`` and the same
    tensors (the field's parameterisation is unchanged since). Today's files pass unchanged.

    Parameters
    ----------
    blob : dict
        What the file holds (loaded with ``weights_only=True``).
    what : str
        The file as named in errors.

    Returns
    -------
    dict
        ``{"format": MODEL_FORMAT, "kind", "spec", "state_dict", "config", ...}``; a converted
        file also has ``"converted_from"`` (its original format).

    Examples
    --------
    >>> old = {"format": "flows-model-1", "W": torch.zeros(8, 4), "A": torch.zeros(8, 2),
    ...        "spec": {"dim": 2, "width": 8, "regime": "practice", "normalize": False,
    ...                 "fourier": 0}, "config": {"data": "moons"}}
    >>> new = upgrade_blob(old)
    >>> new["format"], new["kind"], new["spec"]["classes"], sorted(new["state_dict"])
    ('flows-model-2', 'builtin', 0, ['A', 'W'])
    """
    fmt = blob.get("format") if isinstance(blob, dict) else None
    if fmt == MODEL_FORMAT:
        return blob
    if fmt == "flows-model-1":
        spec = blob.get("spec")
        if not isinstance(spec, dict):
            raise FlowsError(f"{what} is a damaged flows-model-1 file: its spec is missing")
        return {"format": MODEL_FORMAT, "kind": "builtin", "spec": {"classes": 0, **spec},
                "state_dict": {"W": blob.get("W"), "A": blob.get("A")},
                "config": blob.get("config"), "converted_from": fmt}
    known = ", ".join([MODEL_FORMAT, *LEGACY_MODEL_FORMATS])
    raise FlowsError(f"{what} is not a flows model file (format {fmt!r}; this version reads "
                     f"{known})")


def check_trusted(target: str, trust: Iterable[str] = (), what: str = "model") -> None:
    """Refuse to import the module of ``target`` unless it is imported already, trusted or a
    module of this library (``flows.*``, e.g. :class:`flows.field.conv.ConvField`).

    ``trust`` lists module names (a package trusts its submodules). Raises
    :class:`FlowsError` naming the module and how to trust it.

    Examples
    --------
    >>> check_trusted("torch.nn:Linear")  # imported already
    >>> check_trusted("not_yet_imported_pkg.models:Net", trust=["not_yet_imported_pkg"])
    >>> try:
    ...     check_trusted("not_yet_imported_pkg.models:Net")
    ... except FlowsError as err:
    ...     print(str(err).split(";")[0])
    model names class 'not_yet_imported_pkg.models:Net', whose module is not imported
    """
    module_name = str(target).split(":")[0]
    if module_name in sys.modules or module_name.startswith("flows."):  # or this library's own
        return
    for name in trust:
        if module_name == name or module_name.startswith(f"{name}."):
            return
    raise FlowsError(f"{what} names class {target!r}, whose module is not imported; importing "
                     f"it runs its code, so trust it first: trust=[{module_name!r}] (command "
                     f"line: --trust-module {module_name})")


def check_declared_width(spec, state: object, what: str = "model") -> None:
    """Refuse, before the field is built, a built-in field whose declared width and dimension
    cannot fit in memory (the message gives the estimate and the limit) or do not match the
    shape of its saved weights ``W`` (m, p).

    >>> from flows.field import FieldSpec
    >>> check_declared_width(FieldSpec(2, 8), {"W": torch.zeros(8, 4)})
    >>> check_declared_width(FieldSpec(2, 8), {"W": torch.zeros(3, 4)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: model declares width 8 and 4 inputs, but its weights W have ...
    """
    from _runkit import BadInput, check_memory

    m, p, d = spec.width, spec.in_features, spec.dim
    try:  # the weights W (m, p) and A (m, d) as float32, with gradients and Adam moments
        check_memory("width", float(m) * (p + d) * 4 * 4)
    except BadInput as err:
        raise FlowsError(f"{what} declares width {m:,} and dimension {d}: "
                         f"{str(err).split(': ', 1)[-1]}") from None
    weights = state.get("W") if isinstance(state, dict) else None
    if isinstance(weights, torch.Tensor) and tuple(weights.shape) != (m, p):
        raise FlowsError(f"{what} declares width {m} and {p} inputs, but its weights W have "
                         f"shape {tuple(weights.shape)}; the file is damaged or was edited")


def _checked_spec(blob: dict, what: str) -> dict:
    """The ``spec`` of a model file's contents, refused (naming the file and the field) when
    it or the ``kind`` is missing or of the wrong type."""
    spec, kind = blob.get("spec"), blob.get("kind")
    needed = ("target", "args", "classes") if kind == "module" else ()
    if kind not in ("builtin", "module"):
        problem = f"field 'kind' is {kind!r}, not 'builtin' or 'module'"
    elif not isinstance(spec, dict):
        problem = "field 'spec' is missing" if spec is None else \
            f"field 'spec' is a {type(spec).__name__}, not a dict"
    elif any(k not in spec for k in needed):
        problem = f"field 'spec' lacks {[k for k in needed if k not in spec]}"
    else:
        return spec
    raise FlowsError(f"{what}: {problem}; the file is damaged or was edited")


def _first(err: BaseException) -> str:
    """An exception's message without its traceback's noise (one line)."""
    return " ".join(str(err).split()) or type(err).__name__


def field_from_blob(blob: dict, model: nn.Module | None = None, what: str = "model",
                    trust: Iterable[str] = ()) -> nn.Module:
    """Rebuild the field saved by :func:`model_blob` (or by an earlier version: files of
    :data:`LEGACY_MODEL_FORMATS` are converted by :func:`upgrade_blob`).

    A user module is rebuilt by importing its recorded class (the user's code, not anything in
    the file) with the recorded arguments, or is the given ``model`` (needed when it was trained
    from a module passed in built); then its tensors are loaded.
    """
    from .relu import FieldSpec, TwoLayerReLUField

    blob = upgrade_blob(blob, what)
    spec = _checked_spec(blob, what)
    if blob["kind"] == "builtin":
        try:
            declared = FieldSpec(**spec)
        except (TypeError, ValueError) as err:  # a value the file holds: name the file
            raise FlowsError(f"{what}: field 'spec' holds {_first(err)}; the file is damaged "
                             "or was edited") from None
        check_declared_width(declared, blob.get("state_dict"), what)
        field: nn.Module = TwoLayerReLUField(declared, seed=0)
    elif model is not None:
        field = ModuleField(model, spec["classes"], spec.get("dim"))
    elif spec["args"] is None:
        raise FlowsError(f"{what} holds a {spec['target']} module passed in built (its "
                         "arguments are unknown); rebuild it and pass it as model=")
    else:
        check_trusted(spec["target"], trust, what)
        field = ModuleField(build_module(spec["target"], spec["args"], 0), spec["classes"],
                            spec.get("dim"))
    state = blob.get("state_dict")
    if not isinstance(state, dict) or not all(
            isinstance(v, torch.Tensor) and (not v.is_floating_point() or bool(torch.isfinite(
                v).all())) for v in state.values()):
        raise FlowsError(f"{what} is damaged: its tensors are missing or not finite")
    try:
        field.load_state_dict(state)
    except RuntimeError as exc:
        raise FlowsError(f"{what}: the saved tensors do not fit the rebuilt model ({exc})") from exc
    return field
