"""Public names of a package imported from their modules on first use (PEP 562), for the
packages of both libraries (``flows``, ``neurodyn`` and their subpackages).

A package's ``__init__`` lists its public names by module and attaches the lookup::

    __getattr__, __dir__, __all__ = lazy_names(__name__, {"loop": ("train", "TrainConfig")})

so importing the package (and any one of its modules) imports nothing else; ``pkg.train``
imports ``pkg.loop`` and returns its ``train``. A submodule is reachable as an attribute too
(``pkg.loop``), imported when first asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping


def lazy_names(package: str, modules: Mapping[str, Iterable[str]]
               ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` of ``package`` whose names live in ``modules``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : mapping of str to iterable of str
        Module (relative to the package, dotted) -> the public names it defines.

    Returns
    -------
    tuple
        The module-level ``__getattr__`` and ``__dir__``, and ``__all__`` (sorted names).

    Examples
    --------
    >>> get, _, names = lazy_names("_runkit", {"errors": ("BadInput",)})
    >>> names, get("BadInput").__name__
    (['BadInput'], 'BadInput')
    >>> get("errors").__name__
    '_runkit.errors'
    """
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            setattr(sys.modules[package], name, value)
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, sorted(where)
