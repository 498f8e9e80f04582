"""Start-up time of the libraries and their command lines, as fresh processes.

Each case runs ``--runs`` times as a new Python process (wall time of the whole process, so the
interpreter's own start is in every number); the median is printed beside its ratio to the
median of ``python -c "import torch"``, the floor of anything that trains. The targets: ``import
flows`` and ``import neurodyn`` at most 1.5x torch's import, ``flows --help`` and ``neurodyn
--help`` (and each ``<command> --help`` with ``--commands``) at most 0.5x, and a one-state
1,000-step ``neurodyn simulate`` of a fitted 128-ring, figures included, at most 3x (the ring is
fitted once, before the timed runs). The command lines run as the installed console scripts
beside the interpreter when there are any, else as ``python -c "from flows.cli import main; ..."``.

Usage::

    python bench/bench_startup.py [--runs 7] [--commands] [--no-simulate]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _runkit.timing import Stopwatch

#: ``flows`` sub-commands whose ``--help`` ``--commands`` adds
FLOWS_HELPS = ("train", "sample", "eval", "experiment", "experiment width",
               "experiment samples", "experiment risk", "experiment stopping",
               "experiment ntk-gap", "experiment memorization")
#: ``neurodyn`` sub-commands whose ``--help`` ``--commands`` adds
NEURODYN_HELPS = ("fit", "simulate", "restore", "path-integrate", "diffuse", "grid-cells",
                  "manifold", "sweep")


def _console(name: str) -> list[str]:
    """The console script ``name`` beside this interpreter, else the same through ``-c``."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", f"import sys; from {name}.cli import main; "
                                  "sys.exit(main(sys.argv[1:]))"]


def cases(commands: bool, model: Path | None = None, scratch: Path | None = None
          ) -> dict[str, list[str]]:
    """Case label -> the command line that runs it (``simulate`` when ``model`` is given)."""
    py = sys.executable
    out = {
        "import torch": [py, "-c", "import torch"],
        "import flows": [py, "-c", "import flows"],
        "import neurodyn": [py, "-c", "import neurodyn"],
        "flows --help": [*_console("flows"), "--help"],
        "neurodyn --help": [*_console("neurodyn"), "--help"],
    }
    if commands:
        for words in FLOWS_HELPS:
            out[f"flows {words} --help"] = [*_console("flows"), *words.split(), "--help"]
        for word in NEURODYN_HELPS:
            out[f"neurodyn {word} --help"] = [*_console("neurodyn"), word, "--help"]
    if model is not None:
        out["neurodyn simulate (1 x 1,000 steps)"] = [
            *_console("neurodyn"), "simulate", "--model", str(model), "--out", str(scratch),
            "--count", "1", "--duration", "100", "--dt", "0.1"]
    return out


def wall_time(argv: list[str]) -> float:
    """Seconds one fresh process of ``argv`` takes (its output discarded; failures raise)."""
    if "--out" in argv:  # simulate writes a fresh run directory each time
        shutil.rmtree(argv[argv.index("--out") + 1], ignore_errors=True)
    t0 = Stopwatch()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return t0.wall_s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7, help="fresh processes per case")
    p.add_argument("--commands", action="store_true",
                   help="also every 'flows <command> --help' and 'neurodyn <command> --help'")
    p.add_argument("--no-simulate", action="store_true",
                   help="leave out the simulate case (and the fit it needs)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        model = None
        if not a.no_simulate:
            model = Path(tmp) / "ring"
            subprocess.run([*_console("neurodyn"), "fit", "ring", "--out", str(model)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return _report(cases(a.commands, model, Path(tmp) / "sim"), a.runs)


def _report(todo: dict[str, list[str]], runs: int) -> int:
    times: dict[str, list[float]] = {k: [] for k in todo}
    for _ in range(runs):  # interleaved, so a slow spell of the machine hits every case
        for label, cmd in todo.items():
            times[label].append(wall_time(cmd))
    base = statistics.median(times["import torch"])
    print(f"{'case':38s} {'median s':>9s} {'min s':>7s} {'/ torch':>8s}   ({runs} runs)")
    for label, ts in times.items():
        med = statistics.median(ts)
        print(f"{label:38s} {med:9.3f} {min(ts):7.3f} {med / base:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
