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
>>> Samples.from_dict({"nfe": 40, "w2": "inf", "x": np.ones(2), "other": 1})
Samples(nfe=40, w2=inf)
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        """The result rebuilt from its ``to_dict()`` (or a table row holding those keys).

        Fields are taken by name (other keys are ignored; a missing field keeps its default),
        ``"nan"``, ``"inf"`` and ``"-inf"`` become floats again (inside lists too), and a dict
        whose field is typed as a :class:`Result` (or ``Result | None``) is rebuilt as one.

        Parameters
        ----------
        data : mapping
            The JSON-ready fields.

        Returns
        -------
        Result
            An instance of ``cls``.
        """
        nested = _result_fields(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                value = data[f.name]
                kwargs[f.name] = (nested[f.name].from_dict(value)
                                  if f.name in nested and isinstance(value, Mapping)
                                  else _unjson(value))
        return cls(**kwargs)


def _result_fields(cls: type) -> dict[str, type]:
    """The fields of ``cls`` typed as a :class:`Result` (alone or in a union such as
    ``Result | None``), with that type; none when the annotations do not resolve."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a name of a local scope: no nested result to rebuild
        return {}
    out = {}
    for f in dataclasses.fields(cls):
        hint = hints.get(f.name)
        for t in (hint, *typing.get_args(hint)):
            if isinstance(t, type) and issubclass(t, Result):
                out[f.name] = t
                break
    return out


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _unjson(value: Any) -> Any:
    """``value`` with the JSON spellings of non-finite floats turned back into floats."""
    if isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if isinstance(value, list):
        return [_unjson(v) for v in value]
    if isinstance(value, dict):
        return {k: _unjson(v) for k, v in value.items()}
    return value
