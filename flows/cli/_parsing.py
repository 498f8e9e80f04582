"""What the ``flows`` parsers share: the help formatter, option types and option groups, and the
names of the choices they offer.

Building the parser imports no torch (``flows --help`` answers in a fraction of torch's import
time), so the choices are written out here: each is the list of names of a registry, or a
constant, of the library modules named beside it (the tests compare them), and the library checks
the values again when a command runs.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

from _runkit.cli import out_path

from ..errors import FlowsError
from ..training.config import TrainConfig

#: :data:`flows.field.REGIMES`
REGIMES = ("theory", "practice")
#: :data:`flows.coupling.COUPLINGS`
COUPLINGS = ("independent", "ot", "sinkhorn")
#: :data:`flows.coupling.OT_SOLVERS`
OT_SOLVERS = ("auto", "auction", "emd", "lsa")
#: :data:`flows.path.PATHS`
PATHS = ("linear", "vp", "target")
#: :data:`flows.sampling.ode.METHODS`
METHODS = ("euler", "midpoint", "rk4", "dopri5")
#: :data:`flows.evaluation.distances.METRICS`
METRICS = ("w2", "w1", "sinkhorn", "sliced", "fd")
#: :data:`flows.evaluation.report.EVAL_METRICS` and ``TRAIN_METRICS``
EVAL_METRICS = METRICS + ("energy", "hotelling", "precision", "recall", "variance", "bins",
                          "classes")
TRAIN_METRICS = ("memorization", "copying")
#: :data:`flows.evaluation.verdict.ALPHA` and ``PERMUTATIONS``
VERDICT_ALPHA = 0.01
VERDICT_PERMUTATIONS = 1999
#: :data:`flows.evaluation.nearest.NULL_RATE`
NULL_RATE = 0.02
#: :data:`flows.runs.sweeps.RISK_NS`, ``RISK_SEEDS`` and ``MEMORIZATION_NS``
RISK_NS = (32, 64, 128, 256, 512, 1024)
RISK_SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
MEMORIZATION_NS = (8, 32, 128, 512, 2048)

#: TrainConfig field -> its default (the defaults of ``flows train``'s options)
DEFAULTS = {f.name: f.default for f in fields(TrainConfig)}


class Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: X)`` unless the default is None (the help text then says it)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


def ints(text: str) -> list[int]:
    """A comma-separated list of integers.

    >>> ints("1, 2,3")
    [1, 2, 3]
    """
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        msg = f"{text!r} is not a comma-separated list of integers"
        raise argparse.ArgumentTypeError(msg) from None


def words(text: str) -> list[str]:
    """A comma-separated list of words.

    >>> words("fixed, sqrt,")
    ['fixed', 'sqrt']
    """
    return [v.strip() for v in text.split(",") if v.strip()]


def json_object(text: str) -> dict:
    """A JSON object (``--model-args``)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object")
    return value


def device(value: str) -> str:
    """``--device``: "cpu", "cuda" or "cuda:N", refused at parse time (exit 2, naming the
    option) when unknown or not available on this machine."""
    from ..field.module import resolve_device  # imports torch: only when a command runs

    try:
        resolve_device(value)
    except FlowsError as exc:
        why = "is not available here (no CUDA device)" if _is_cuda(value) else \
            "is not a device; use cpu, cuda or cuda:N"
        raise argparse.ArgumentTypeError(f"{value!r} {why}") from exc
    return value


def _is_cuda(value: str) -> bool:
    """Whether torch reads ``value`` as a CUDA device (refused then because none is here)."""
    import torch

    try:
        return torch.device(value).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def path_name(value: str) -> str:
    """A ``--path``: a name of :data:`PATHS` or ``affine:ALPHA,SIGMA`` (whose schedules the
    library checks before --out is claimed).

    Examples
    --------
    >>> path_name("affine:sin,cos")
    'affine:sin,cos'
    """
    if value in PATHS or value.startswith("affine:"):
        return value
    raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from "
                                     f"{', '.join(PATHS)} or affine:ALPHA,SIGMA)")


def opt(p: argparse.ArgumentParser, flag: str, help: str, **kw) -> None:
    """An option whose default, when not given, is the TrainConfig field of the same name."""
    dest = kw.pop("dest", flag.lstrip("-").replace("-", "_"))
    kw.setdefault("default", DEFAULTS.get(dest))
    p.add_argument(flag, dest=dest, help=help, **kw)


def experiment_common(p: argparse.ArgumentParser) -> None:
    """``--out``, ``--data`` and ``--seed`` of the width and samples experiments."""
    p.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    p.add_argument("--data", default="moons", help="dataset name or .npy/.csv file")
    p.add_argument("--seed", type=int, default=0, help="seed of every run (>= 0)")


def theory_steps(p: argparse.ArgumentParser, lr_note: str = "") -> None:
    """``--k``, ``--steps`` and ``--lr`` of a theory-regime experiment."""
    p.add_argument("--k", type=int, default=4, help="fixed (t, x0) draws per training point")
    p.add_argument("--steps", type=int, default=500, help="gradient-descent steps per run")
    p.add_argument("--lr", type=float, help="gradient-descent step size (default: 2.0)"
                   + (f"; {lr_note}" if lr_note else ""))
