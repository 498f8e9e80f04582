"""Helpers shared by the neurodyn sub-commands: durations with units, the run contract, and the
names of the choices the parsers offer.

Building the parser imports no torch (``neurodyn --help`` answers in a fraction of torch's
import time): the command modules import the library only inside the command that runs, and
the choices and defaults shown in the help are written out here, each beside the library
constant it mirrors (the tests compare them); the library checks the values again when a
command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import math
import re
from collections.abc import Callable, Iterator

from _runkit import BadInput, Diverged, RunDir, check_positive, check_positive_int
from _runkit.runtime import set_threads
from _runkit.seeds import SEED_MAX, check_seed

__all__ = ["parse_time", "args_config", "config_of", "command", "open_run", "experiment_parser",
           "options_named", "positive",
           "nonnegative", "positive_int", "PERTURBATIONS", "METHODS", "FIXED_METHODS",
           "LATTICES", "MIN_SURVEY_SAMPLES", "GRIDNESS_THRESHOLD", "NULL_MIN_SHIFT",
           "DEFAULT_DT_NETWORK"]

#: :data:`neurodyn.dynamics.perturbations.PERTURBATIONS`
PERTURBATIONS = ("none", "noise", "shape", "amplitude", "lesion")
#: :data:`neurodyn.dynamics.simulation.FIXED_METHODS` and ``METHODS``
FIXED_METHODS = ("euler", "midpoint", "rk4")
METHODS = FIXED_METHODS + ("dopri5",)
#: :data:`neurodyn.geometry.populations.LATTICES`
LATTICES = ("hex", "square")
#: :data:`neurodyn.analysis.survey.MIN_SURVEY_SAMPLES`
MIN_SURVEY_SAMPLES = 20
#: :data:`neurodyn.spatial.gridcells.results.GRIDNESS_THRESHOLD` and ``NULL_MIN_SHIFT``
GRIDNESS_THRESHOLD = 0.8
NULL_MIN_SHIFT = 20.0
#: :data:`neurodyn.spatial.gridcells.network.DEFAULT_DT_NETWORK`
DEFAULT_DT_NETWORK = 2.0

#: argparse destinations that are not part of a run's config
_NOT_CONFIG = ("func", "debug", "json", "command")


def parse_time(text: str, tau_seconds: float, name: str = "time") -> float:
    """Parse a duration: a number (units of tau), or a number with ``tau``, ``s`` or ``ms``.

    Parameters
    ----------
    text : str
        ``"20"``, ``"20tau"``, ``"0.5s"`` or ``"30ms"``.
    tau_seconds : float
        Length of tau in seconds (for ``s`` and ``ms``).
    name : str
        The parameter named in an error.

    Returns
    -------
    float
        The duration in units of tau (finite, > 0).

    Examples
    --------
    >>> parse_time("20", 0.01), parse_time("0.5s", 0.01), parse_time("30ms", 0.01)
    (20.0, 50.0, 3.0)
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+|nan|inf|-inf)\s*(tau|s|ms)?\s*", str(text))
    if not m:
        raise BadInput(f"{name}={text!r}: expected a number, optionally with a unit tau, s or ms")
    try:
        value = float(m.group(1))
    except ValueError:
        raise BadInput(f"{name}={text!r}: {m.group(1)!r} is not a number") from None
    if not (math.isfinite(tau_seconds) and tau_seconds > 0):
        raise BadInput(f"--tau-seconds={tau_seconds!r}: must be a finite number > 0")
    unit = m.group(2) or "tau"
    if unit == "s":
        value /= tau_seconds
    elif unit == "ms":
        value /= 1000 * tau_seconds
    if not (math.isfinite(value) and value > 0):
        raise BadInput(f"{name}={text!r}: must be a finite duration > 0")
    return value


def _typed(check: Callable, what: str) -> Callable[[str], float]:
    def parse(text: str):
        try:
            value = float(text) if what != "int" else int(text)
        except ValueError:
            kind = "an integer" if what == "int" else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        try:
            return check("value", value)
        except BadInput:
            allowed = "an integer >= 1" if what == "int" else what
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be {allowed}"
                                             ) from None

    parse.__name__ = what
    return parse


def _check_nonnegative(name, v):
    if not (math.isfinite(v) and v >= 0):
        raise BadInput(name)
    return v


#: argparse ``type=`` for a finite number > 0
positive = _typed(check_positive, "a finite number > 0")
#: argparse ``type=`` for a finite number >= 0
nonnegative = _typed(_check_nonnegative, "a finite number >= 0")
#: argparse ``type=`` for an integer >= 1
positive_int = _typed(check_positive_int, "int")


def seed_arg(text: str) -> int:
    """argparse ``type=`` for ``--seed``: an integer in ``[0, 2**63 - 1]``
    (:func:`_runkit.seeds.check_seed`), refused when the command line is parsed, before
    anything is read or written.

    >>> seed_arg("7")
    7
    >>> seed_arg("-5")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '-5' is not allowed; it must be an integer in [0, 922...]
    """
    try:
        return check_seed("seed", int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be an integer in "
                                         f"[0, {SEED_MAX}]") from None


def device_arg(text: str) -> str:
    """argparse ``type=`` for ``--device``: ``cpu`` or ``cuda[:I]``, refused (exit 2, naming
    the option) when torch finds no such device on this machine."""
    from ..dynamics.device import check_device

    try:
        check_device(text)
    except BadInput as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def add_device_argument(parser: argparse.ArgumentParser,
                        note: str = "fixed-step runs on the CPU are compiled") -> None:
    """Add ``--device`` (default ``cpu``) to a command that simulates or fits."""
    parser.add_argument("--device", type=device_arg, default="cpu",
                        help=f"cpu or cuda (cuda:I) where torch finds one; {note}")


def config_of(config_type, args: argparse.Namespace, **parsed):
    """The run config ``config_type`` (a dataclass) of the parsed arguments whose names are its
    fields, with ``parsed`` (values this module turned into the config's units) in their
    place."""
    options = {**vars(args), **parsed}
    return config_type(**{f.name: options[f.name] for f in dataclasses.fields(config_type)
                          if f.name in options})


def args_config(args: argparse.Namespace) -> dict:
    """The parsed arguments as the run's config (without the handler, ``--debug`` and the
    command name)."""
    return {k: v for k, v in vars(args).items() if k not in _NOT_CONFIG and not callable(v)}


def command(handler: Callable[[argparse.Namespace], dict]) -> Callable:
    """Wrap a sub-command's handler for the run contract.

    Sets torch's threads from ``--threads``; missing or unreadable files named on the command
    line become :class:`~_runkit.BadInput` (exit 2) and a state that leaves its sane range
    becomes :class:`~_runkit.Diverged` (exit 1). The library refuses input with ``BadInput``
    itself: any other ``ValueError`` or ``TypeError`` is a bug and ends the command with exit
    1, "unexpected" (:func:`_runkit.cli_main`).
    """

    @functools.wraps(handler)
    def run(args: argparse.Namespace):
        from ..dynamics.simulation import NonFiniteStateError

        set_threads(getattr(args, "threads", 1), "--threads")
        try:
            return handler(args)
        except NonFiniteStateError as err:
            raise Diverged(f"{err}", step=getattr(err, "step", None), parameter="dt") from err
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError,
                PermissionError) as err:
            raise BadInput(str(err)) from err

    return run


@contextlib.contextmanager
def options_named(config_type) -> Iterator[None]:
    """Name the option of a refusal whose parameter is a field of the dataclass
    ``config_type``: a :class:`~_runkit.BadInput` whose ``param`` is ``key`` (or ``key.part``;
    ``n/batch`` names both) is raised again led by ``--key:``. A refusal that already names an
    option, or none, passes unchanged. No message is read."""
    try:
        yield
    except BadInput as err:
        keys = err.param.split(".")[0].split("/") if err.param else []
        fields = {f.name for f in dataclasses.fields(config_type)}
        if not keys or not set(keys) <= fields:
            raise
        options = "/".join("--" + k.replace("_", "-") for k in keys)
        raise BadInput(f"{options}: {err}", param=keys[0]) from None


def open_run(args: argparse.Namespace, name: str, config: dict | None = None,
             check: Callable[[], object] | None = None) -> RunDir:
    """The locked run directory ``--out`` of sub-command ``name``, recording its config.

    Call it after every input is checked: entering it compares with what ``--out`` holds, then
    locks, then writes (:class:`~_runkit.RunDir`), so a refusal writes nothing. A sub-command
    with ``--fresh`` may start over in a directory whose ``config.json`` has an older shape
    (:class:`~_runkit.RunDir`'s ``fresh``); ``check`` refuses, reading only, what the
    directory holds that the run cannot continue (a checkpoint of another config)."""
    return RunDir(args.out, command=f"neurodyn {name}",
                  config=args_config(args) if config is None else config,
                  seed=getattr(args, "seed", None), fresh=getattr(args, "fresh", None),
                  check=check)


def experiment_parser(sub, name: str, help: str, func, duration: float, dt: float
                      ) -> argparse.ArgumentParser:
    """A sub-command that runs an experiment on a fitted model: ``--model``, ``--out``,
    ``--duration``, ``--dt`` (tau), ``--seed`` and ``--device``, with the given defaults."""
    p = sub.add_parser(name, help=help, description=help,
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", required=True, help="directory holding model.pt (or the file)")
    p.add_argument("--out", required=True, help="output directory (locked while the run writes)")
    p.add_argument("--duration", type=positive, default=duration,
                   help="simulated time (units of tau)")
    p.add_argument("--dt", type=positive, default=dt, help="integration step (units of tau)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seeds every random draw")
    add_device_argument(p)
    p.set_defaults(func=command(func))
    return p
