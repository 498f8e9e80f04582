"""The demos at their full sizes: the long measurements behind bench/README.md's numbers.

``make demo`` runs every demo at the size that carries its claim within about 15 minutes on two
cores; the numbers bench/README.md quotes from a demo (the theory sweeps over 8 seeds, the drift
study over three ring sizes, ...) come from the same scripts at ``--full``, which takes hours on
two cores. This runs them, through ``demos/run_all.py --full``, with its page and a line per demo
as it finishes:

    python bench/demos_full.py --out results/bench/demos_full [--only NAME,...] [--jobs 2]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DEMOS = Path(__file__).resolve().parents[1] / "demos"


def main(argv: list[str] | None = None) -> dict:
    """Run ``demos/run_all.py --full`` with ``argv`` (default ``--out
    results/bench/demos_full``) in its own process; returns its summary (``run_all.json``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--out" not in argv:
        argv += ["--out", "results/bench/demos_full"]
    done = subprocess.run([sys.executable, str(DEMOS / "run_all.py"), "--full", "--notebooks",
                           "off", *argv])
    if done.returncode != 0:
        raise SystemExit(done.returncode)
    out = Path(argv[argv.index("--out") + 1])
    return json.loads((out / "run_all.json").read_text())


if __name__ == "__main__":
    main()
