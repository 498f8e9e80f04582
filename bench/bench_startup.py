"""Start-up time of the libraries and their command lines, as fresh processes.

Each case runs ``--runs`` times as a new Python process (wall time of the whole process, so the
interpreter's own start is in every number); the median is printed beside its ratio to the
median of ``python -c "import torch"``, the floor of anything that trains. The targets: ``import
flows`` at most 1.5x torch's import, ``flows --help`` (and each ``flows <command> --help`` with
``--commands``) at most 0.5x. The command lines run as the installed console scripts beside the
interpreter when there are any, else as ``python -c "from flows.cli import main; ..."``.

Usage::

    python bench/bench_startup.py [--runs 7] [--commands]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: ``flows`` sub-commands whose ``--help`` ``--commands`` adds
FLOWS_HELPS = ("train", "sample", "eval", "experiment", "experiment width",
               "experiment samples", "experiment risk", "experiment stopping",
               "experiment ntk-gap", "experiment memorization")


def _console(name: str) -> list[str]:
    """The console script ``name`` beside this interpreter, else the same through ``-c``."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", f"import sys; from {name}.cli import main; "
                                  "sys.exit(main(sys.argv[1:]))"]


def cases(commands: bool) -> dict[str, list[str]]:
    """Case label -> the command line that runs it."""
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
    return out


def wall_time(argv: list[str]) -> float:
    """Seconds one fresh process of ``argv`` takes (its output discarded; failures raise)."""
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7, help="fresh processes per case")
    p.add_argument("--commands", action="store_true",
                   help="also every 'flows <command> --help'")
    a = p.parse_args(argv)
    todo = cases(a.commands)
    times: dict[str, list[float]] = {k: [] for k in todo}
    for _ in range(a.runs):  # interleaved, so a slow spell of the machine hits every case
        for label, cmd in todo.items():
            times[label].append(wall_time(cmd))
    base = statistics.median(times["import torch"])
    print(f"{'case':38s} {'median s':>9s} {'min s':>7s} {'/ torch':>8s}   ({a.runs} runs)")
    for label, ts in times.items():
        med = statistics.median(ts)
        print(f"{label:38s} {med:9.3f} {min(ts):7.3f} {med / base:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
