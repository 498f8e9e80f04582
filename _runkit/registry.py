"""Named choices (couplings, paths, solvers, energies, ...): one registry each.

Examples
--------
>>> SOLVERS = Registry("solver")
>>> @SOLVERS.register("euler")
... def euler(f, x, dt):
...     return x + dt * f(x)
>>> _ = SOLVERS.add("midpoint", lambda f, x, dt: x + dt * f(x + 0.5 * dt * f(x)))
>>> SOLVERS.names()
['euler', 'midpoint']
>>> SOLVERS.get("euler") is euler, "rk4" in SOLVERS
(True, False)
>>> SOLVERS.get("rk4")
Traceback (most recent call last):
...
_runkit.errors.BadInput: solver='rk4' is not allowed; choose one of euler, midpoint
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .errors import BadInput

__all__ = ["Registry"]


class Registry:
    """A name -> object table for one kind of named choice.

    Parameters
    ----------
    kind : str
        What the names are (``"coupling"``); the parameter named in errors.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, Any] = {}

    def add(self, name: str, obj: Any, replace: bool = False) -> Any:
        """Register ``obj`` under ``name``; a taken name is refused unless ``replace``."""
        if not isinstance(name, str) or not name:
            raise BadInput(f"{self.kind} name {name!r} is not allowed; it must be a non-empty "
                           "string")
        if name in self._items and not replace:
            raise BadInput(f"{self.kind}={name!r} is already registered; pass replace=True to "
                           "replace it")
        self._items[name] = obj
        return obj

    def register(self, name: str, replace: bool = False) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add`; returns the object unchanged."""

        def deco(obj: Any) -> Any:
            return self.add(name, obj, replace=replace)

        return deco

    def get(self, name: str) -> Any:
        """The object registered as ``name``; unknown names raise ``BadInput`` listing the valid."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise BadInput(f"{self.kind}={name!r} is not allowed; choose one of "
                           f"{', '.join(self._items)}") from None

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()})"
