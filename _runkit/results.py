"""Typed results: dataclasses with ``to_dict()`` and a one-line ``repr``.

Subclass :class:`Result` with ``@dataclass(frozen=True)`` (or ``@dataclass`` for a result that a
run fills in). ``to_dict()`` gives the JSON-ready fields; fields declared with :func:`artifact`
(large arrays, models, figures that are written to their own files) are left out of it.

Every result prints as one line of at most :data:`REPR_LIMIT` characters (its class, then its
fields with 4 significant digits, arrays by their shape, nested results by their class name, cut
short with a count of what was left out); the details are in ``to_dict()``, ``to_pandas()`` and,
in Jupyter, ``_repr_html_`` (a table of every field). A subclass that writes its own
``__repr__`` keeps it and keeps to the same limit.

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
>>> @dataclass(frozen=True)
... class Long(Result):
...     values: list
>>> text = repr(Long(list(range(1000))))
>>> text
'Long(values=[0, 1, 2, 3, 4, 5, ... (1000 items)])'
>>> len(repr(Long([{"k" * 40: "v" * 300}] * 9))) <= REPR_LIMIT
True

``to_pandas()`` gives a pandas DataFrame (pandas is not a dependency: without it, ImportError
naming it): a result that maps names to rows gives one row per name, any other one row.

>>> @dataclass(frozen=True)
... class Sweep(Result):
...     rows: dict
>>> Sweep({"a": {"rate": 1.0, "ok": True}, "b": {"rate": 2.0, "ok": False}}).to_pandas()
   rate     ok
a   1.0   True
b   2.0  False
>>> r.to_pandas()
   nfe  w2
0   40 NaN
"""

from __future__ import annotations

import dataclasses
import html
import math
import typing
from collections.abc import Mapping
from typing import Any

from .files import to_jsonable

__all__ = ["Result", "REPR_LIMIT", "artifact", "one_line", "require_pandas", "require_xarray"]

#: the longest ``repr`` of a result, in characters (one line)
REPR_LIMIT = 200


def artifact(**kwargs: Any) -> Any:
    """A dataclass field kept out of ``to_dict()``, ``repr`` and ``==`` (arrays, models).

    Returns
    -------
    dataclasses.Field
    """
    meta = {**kwargs.pop("metadata", {}), "json": False}
    return dataclasses.field(repr=False, compare=False, metadata=meta, **kwargs)


class Result:
    """Base of typed results: ``to_dict()`` converts the fields with the one JSON convention;
    ``repr`` is one line of at most :data:`REPR_LIMIT` characters (:func:`one_line`).

    Not a dataclass itself, so that frozen and mutable dataclasses both derive from it.
    """

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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # @dataclass keeps a __repr__ already in the class's own dict and IPython prefers a
        # __repr__ of the class's own dict to a _repr_pretty_ it inherits: every subclass
        # holds both (a __repr__ written in the class body is kept)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = Result.__repr__
        cls._repr_pretty_ = Result._repr_pretty_

    def __repr__(self) -> str:
        return one_line(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's display: the one line of ``repr``."""
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        """Jupyter's display: the one line, then a table of every field (nested mappings by
        ``outer.inner`` rows, arrays by their shape, at most 200 rows)."""
        rows = _html_rows(self)
        more = (f"<tr><td colspan=2>... {len(rows) - 200} more rows: .to_dict()</td></tr>"
                if len(rows) > 200 else "")
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in rows[:200])
        return (f"<p><code>{html.escape(repr(self))}</code></p>"
                f"<table><tbody>{body}{more}</tbody></table>")

    def to_pandas(self):
        """The result as a table (needs pandas, which the package does not install).

        A result whose ``to_dict()`` maps names to rows (dicts of values: one row per variant,
        or per family and kappa) gives one row per row-dict, indexed by the names (a
        ``MultiIndex`` for rows nested under groups); any other gives one row of its fields,
        nested keys joined by ``.``. Non-finite values are floats again (``NaN``, ``inf``).

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        ImportError
            pandas is not installed (the message says how to install it).
        """
        pd = require_pandas(f"{type(self).__name__}.to_pandas()")
        data = _unjson(self.to_dict())
        if len(data) == 1 and isinstance(next(iter(data.values())), Mapping):
            data = next(iter(data.values()))  # a result whose one field is its table
        keys, rows = _named_rows(data)
        if not rows:
            return pd.DataFrame([_flat(data)])
        while len(keys[0]) > 1 and len({k[0] for k in keys}) == 1:
            keys = [k[1:] for k in keys]  # one group above every row: not an index level
        if all(len(k) == 1 for k in keys):
            return pd.DataFrame(rows, index=[k[0] for k in keys])
        return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(keys))

    def to_xarray(self):
        """The table of :meth:`to_pandas` as an ``xarray.Dataset`` (needs xarray, extra
        ``xarray``): one variable per column along the dimension ``row`` (its names as
        coordinates; ``row_0``, ``row_1``, ... for rows nested under groups).

        Returns
        -------
        xarray.Dataset

        Raises
        ------
        ImportError
            xarray is not installed (the message says how to install it).
        """
        require_xarray(f"{type(self).__name__}.to_xarray()")
        table = self.to_pandas()
        if table.index.nlevels > 1:
            table.index = table.index.set_names([f"row_{i}" for i in range(table.index.nlevels)])
        else:
            table.index.name = "row"
        return table.to_xarray()


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


def require_pandas(what: str):
    """The ``pandas`` module, or ImportError saying that ``what`` needs it and how to install it.

    Parameters
    ----------
    what : str
        The call that needs pandas (named in the message).

    Returns
    -------
    module
    """
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(f"{what} needs pandas, which is not installed: pip install pandas"
                          ) from exc
    return pandas


def require_xarray(what: str):
    """The ``xarray`` module, or ImportError saying that ``what`` needs it and how to install it
    (xarray is optional: labelled arrays for analysis, not needed to run anything).

    Parameters
    ----------
    what : str
        The call that needs xarray (named in the message).

    Returns
    -------
    module
    """
    try:
        import xarray
    except ImportError as exc:
        raise ImportError(f"{what} needs xarray, which is not installed: pip install "
                          "'neurodyn-flows[xarray]' (or pip install xarray)") from exc
    return xarray


def _is_row(value: Any) -> bool:
    """A mapping with at least one value that is not a mapping (one table row; its nested
    mappings become ``outer.inner`` columns)."""
    return (isinstance(value, Mapping)
            and any(not isinstance(v, Mapping) for v in value.values()))


def _named_rows(data: Mapping, prefix: tuple = ()) -> tuple[list[tuple], list[dict]]:
    """``(index keys, rows)`` when every value of ``data`` is a row or a mapping of rows (to
    any depth), else two empty lists. Entries that are not mappings (a note, a kappa) are
    left out of the table when there are rows."""
    keys: list[tuple] = []
    rows: list[dict] = []
    for name, value in data.items():
        if _is_row(value):
            keys.append((*prefix, name))
            rows.append(_flat(value))
        elif isinstance(value, Mapping) and value:
            sub_keys, sub_rows = _named_rows(value, (*prefix, name))
            if not sub_rows:
                return [], []
            keys += sub_keys
            rows += sub_rows
    if len({len(k) for k in keys}) > 1:  # rows at several depths: not one table
        return [], []
    return keys, rows


def _flat(data: Mapping, prefix: str = "") -> dict:
    """``data`` with nested mappings flattened into ``outer.inner`` keys."""
    out: dict = {}
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            out.update(_flat(value, key + "."))
        else:
            out[key] = value
    return out


def one_line(result: Any, limit: int = REPR_LIMIT) -> str:
    """``TYPE(field=value, ...)`` on one line of at most ``limit`` characters.

    Each field as :func:`_short` gives it (4 significant digits, arrays by shape, nested
    results by class name, at most 6 items of a list and 4 entries of a mapping), a field's
    text cut at 60 characters, and the fields that do not fit counted at the end.

    Parameters
    ----------
    result : dataclass instance
        The result.
    limit : int
        The longest line, >= 40.

    Returns
    -------
    str

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Fit(Result):
    ...     loss: float
    ...     note: str
    >>> one_line(Fit(1 / 3, "x" * 80))
    "Fit(loss=0.3333, note='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...)"
    >>> one_line(Fit(0.5, "y" * 500), limit=40)
    'Fit(loss=0.5, ... 1 more field)'
    """
    name = type(result).__name__
    shown = [f for f in dataclasses.fields(result) if f.repr] if dataclasses.is_dataclass(
        result) else []
    parts = [_cut(f"{f.name}={_short(getattr(result, f.name), 1)}", 60) for f in shown]
    text = f"{name}()"
    for i in range(len(parts), -1, -1):  # the most fields that fit, with a count of the rest
        rest = len(parts) - i
        tail = [f"... {rest} more field{'s' if rest > 1 else ''}"] if rest else []
        text = f"{name}({', '.join(parts[:i] + tail)})"
        if len(text) <= limit:
            return text
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    """``text`` with everything after ``limit - 3`` characters replaced by ``...``."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _html_rows(result: Any) -> list[tuple[str, str]]:
    """``(name, value)`` rows of every field of a result for :meth:`Result._repr_html_`:
    nested mappings and results flattened to ``outer.inner``, everything else as
    :func:`_short` gives it."""
    def rows(prefix: str, value: Any) -> list[tuple[str, str]]:
        if isinstance(value, Result) and dataclasses.is_dataclass(value):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                     if f.repr}
        if isinstance(value, Mapping) and value:
            return [r for k, v in value.items() for r in rows(f"{prefix}.{k}" if prefix
                                                                else str(k), v)]
        return [(prefix, _short(value, 1))]
    return rows("", result)


def _short(value: Any, depth: int) -> str:
    """A one-line summary of ``value`` (see :func:`one_line`)."""
    if isinstance(value, Result):
        if depth:
            return type(value).__name__
        return one_line(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, Mapping):
        items = [f"{k!r}: {_short(v, depth + 1)}" for k, v in list(value.items())[:4]]
        more = f", ... ({len(value)} entries)" if len(value) > 4 else ""
        return "{" + ", ".join(items) + more + "}"
    if isinstance(value, (list, tuple)):
        items = [_short(v, depth + 1) for v in value[:6]]
        more = f", ... ({len(value)} items)" if len(value) > 6 else ""
        return "[" + ", ".join(items) + more + "]"
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__}(shape={tuple(shape)})"
    text = " ".join(repr(value).split())  # a module's repr spans lines
    return _cut(text, 60)
