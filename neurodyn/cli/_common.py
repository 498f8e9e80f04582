"""Helpers shared by the neurodyn sub-commands: durations with units, the run's config."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..io import load_model, write_json

__all__ = ["parse_time", "args_dict", "prepare", "experiment_parser"]


def parse_time(text: str, tau_seconds: float) -> float:
    """Parse a duration: a number (units of tau), or a number with ``tau``, ``s`` or ``ms``.

    Examples
    --------
    >>> parse_time("20", 0.01), parse_time("0.5s", 0.01), parse_time("30ms", 0.01)
    (20.0, 50.0, 3.0)
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(tau|s|ms)?\s*", str(text))
    if not m:
        raise ValueError(f"time={text!r}: expected a number, optionally with a unit tau, s or ms")
    try:
        value = float(m.group(1))
    except ValueError:
        raise ValueError(f"time={text!r}: {m.group(1)!r} is not a number") from None
    unit = m.group(2) or "tau"
    if unit == "s":
        value /= tau_seconds
    elif unit == "ms":
        value /= 1000 * tau_seconds
    return value


def args_dict(args: argparse.Namespace) -> dict:
    """The parsed arguments as a dict, without the sub-command's function."""
    return {k: v for k, v in vars(args).items() if not callable(v)}


def prepare(args: argparse.Namespace, command: str):
    """Load ``--model``, create ``--out`` and record the command's config there."""
    network, _ = load_model(args.model)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json({"command": command, **args_dict(args)}, out / "config.json")
    return network, out


def experiment_parser(sub, name: str, help: str, func, duration: float, dt: float
                      ) -> argparse.ArgumentParser:
    """A sub-command that runs an experiment on a fitted model: ``--model``, ``--out``,
    ``--duration``, ``--dt`` (tau) and ``--seed``, with the given defaults."""
    p = sub.add_parser(name, help=help)
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--duration", type=float, default=duration)
    p.add_argument("--dt", type=float, default=dt)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=func)
    return p
