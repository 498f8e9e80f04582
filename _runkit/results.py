"""Typed results: frozen dataclasses with ``to_dict()``.

Subclass :class:`Result` with ``@dataclass(frozen=True)``. ``to_dict()`` gives the JSON-ready
fields; fields declared with :func:`artifact` (large arrays, models, figures that are written to
their own files) are left out of it.

Examples
--------
>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(frozen=True)
... class Samples(Result):
...     nfe: int
...     w2: float
...     x: np.ndarray = artifact()
>>> r = Samples(nfe=40, w2=float("nan"), x=np.zeros((3, 2)))
>>> r.to_dict()
{'nfe': 40, 'w2': 'nan'}
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .files import to_jsonable

__all__ = ["Result", "artifact"]


def artifact(**kwargs: Any) -> Any:
    """A dataclass field kept out of ``to_dict()``, ``repr`` and ``==`` (arrays, models).

    Returns
    -------
    dataclasses.Field
    """
    meta = {**kwargs.pop("metadata", {}), "json": False}
    return dataclasses.field(repr=False, compare=False, metadata=meta, **kwargs)


@dataclasses.dataclass(frozen=True)
class Result:
    """Base of typed results; ``to_dict()`` converts the fields with the one JSON convention."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready fields (non-finite floats as ``"nan"``/``"inf"``; artifacts left out)."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.metadata.get("json", True)}
