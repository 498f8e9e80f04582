"""The demos at their full sizes: the long measurements behind the README's numbers.

``make demo`` runs every demo at the size that carries its claim within about 15 minutes on two
cores; the numbers the README quotes from a demo (the theory sweeps over 8 seeds, the drift
study over three ring sizes, ...) come from the same scripts at ``--full``, which takes hours on
two cores. This runs them, through ``demos/run_all.py --full``, with its page and a line per demo
as it finishes:

    python bench/demos_full.py --out results/bench/demos_full [--only NAME,...] [--jobs 2]
"""

from __future__ import annotations

import sys
from pathlib import Path

DEMOS = Path(__file__).resolve().parents[1] / "demos"


def main(argv: list[str] | None = None) -> dict:
    """Run ``demos/run_all.py --full`` with ``argv`` (default ``--out
    results/bench/demos_full``); returns its summary."""
    sys.path.insert(0, str(DEMOS))
    import run_all

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--out" not in argv:
        argv += ["--out", "results/bench/demos_full"]
    return run_all.main(["--full", "--notebooks", "off", *argv])


if __name__ == "__main__":
    main()
