"""What a command prints for a person: what it did, the few numbers that matter, where the rest is.

A command returns its full metrics (a JSON-able dict); :func:`cli_main <_runkit.cli.cli_main>`
prints them as one JSON line only with ``--json``. Otherwise stdout gets at most three lines
(:func:`human_lines`)::

    neurodyn fit: done in 11.1 s; wrote ring/: 4 figures (bump.png, ...); metrics.json, model.pt
      normal rate / kappa 1, neutral eigenvalues 1, field error 3.2e-05
      every number: ring/metrics.json (or --json)

The numbers are the command's *headline*: ``(label, dotted path)`` pairs into its result,
declared beside the command line (a command without one shows its first four top-level
numbers); a path the result does not hold is left out.

Examples
--------
>>> format_number(float("nan")), format_number("nan")
('nan', 'nan')

"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Headline", "headline_numbers", "human_lines", "format_number"]

#: ``(label, dotted path)`` pairs naming a command's key numbers in its result
Headline = Sequence[tuple[str, str]]

#: the most numbers on the summary's second line
MAX_NUMBERS = 4


def format_number(value: Any) -> str:
    """A number for a person: 4 significant digits, yes/no, lists of at most 4 items.

    >>> format_number(0.000123456), format_number(12), format_number(True), format_number("x")
    ('0.0001235', '12', 'yes', 'x')
    >>> format_number([1, 2.5, 3, 4, 5])
    '[1, 2.5, 3, 4, ...]'
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(format_number(v) for v in value[:MAX_NUMBERS])
        return f"[{items}{', ...' if len(value) > MAX_NUMBERS else ''}]"
    return str(value)


def _lookup(result: Mapping, path: str) -> Any:
    cur: Any = result
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _is_number(value: Any) -> bool:
    """A number, a non-finite float as JSON spells it (``"nan"``), or a list of numbers."""
    if isinstance(value, (list, tuple)):
        return 0 < len(value) and all(_is_number(v) for v in value)
    return isinstance(value, (bool, int, float)) or value in ("nan", "inf", "-inf")


def headline_numbers(result: Any, headline: Headline | None = None) -> list[tuple[str, Any]]:
    """The key numbers of a command's ``result``: its ``headline`` paths that it holds, or,
    without a headline, its first top-level numbers (at most :data:`MAX_NUMBERS`).

    >>> headline_numbers({"w2": 0.31, "floor": {"mean": 0.2}, "n": 5},
    ...                  [("W2", "w2"), ("floor", "floor.mean"), ("absent", "x.y")])
    [('W2', 0.31), ('floor', 0.2)]
    >>> headline_numbers({"b": 2, "note": "text", "a": 1.5})
    [('b', 2), ('a', 1.5)]
    """
    if not isinstance(result, Mapping):
        return []
    if headline:
        found = [(label, _lookup(result, path)) for label, path in headline]
        return [(label, v) for label, v in found if _is_number(v)][:MAX_NUMBERS]
    return [(k, v) for k, v in result.items() if _is_number(v)][:MAX_NUMBERS]


def human_lines(command: str, result: Any, done: str, seconds: float,
                out: str | Path | None = None, headline: Headline | None = None) -> list[str]:
    """The lines a command prints when it succeeds without ``--json`` (at most three).

    Parameters
    ----------
    command : str
        ``"neurodyn fit"``.
    result : dict or None
        What the command returned (its full metrics).
    done : str
        The line saying what was written where (:func:`~_runkit.cli.written_summary`); empty
        when the command wrote no folder.
    seconds : float
        The command's wall time.
    out : path or None
        The command's ``--out``.
    headline : sequence of (label, path), optional
        The command's key numbers.

    Returns
    -------
    list of str

    Examples
    --------
    >>> human_lines("flows eval", {"value": 0.52, "floor": 0.5}, "", 1.25,
    ...             headline=[("W2", "value"), ("floor", "floor")])
    ['flows eval: done in 1.2 s', '  W2 0.52, floor 0.5', '  every number: rerun with --json']
    """
    if result is None and not done:
        return []
    lines = [done or f"{command}: done in {seconds:.1f} s"]
    numbers = headline_numbers(result, headline)
    if numbers:
        lines.append("  " + ", ".join(f"{label} {format_number(v)}" for label, v in numbers))
    if result is not None:
        metrics = Path(out) / "metrics.json" if out is not None else None
        where = (f"{metrics} (or --json)" if metrics is not None and metrics.is_file()
                 else "rerun with --json")
        lines.append(f"  every number: {where}")
    return lines
