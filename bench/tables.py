"""The tables of ``bench/README.md`` rendered from the benchmarks' own output.

Each renderer reads what one bench script writes (its JSON file, or the table it prints) and
returns a Markdown table; nothing in a generated table is typed by hand. In ``bench/README.md`` a
generated table sits between two markers naming the renderer and the output file (relative to
``bench/``, kept under ``bench/measured/``)::

    <!-- report: bench_neurodyn measured/bench_neurodyn.json -->
    ...the rendered table...
    <!-- end report -->

Usage::

    python bench/tables.py                  # rewrite every generated table of bench/README.md
    python bench/tables.py --check          # exit 1, naming them, if a table differs
    python bench/tables.py NAME FILE        # print one table (e.g. of a fresh run's output)

To refresh a table, run the bench with the command its section gives, keep its output under
``bench/measured/`` and run ``python bench/tables.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"

BLOCK = re.compile(r"(<!-- report: (\S+) (\S+) -->\n)(.*?)(<!-- end report -->)", re.S)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _g(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without exponent where it reads plainly."""
    return f"{x:.{digits}g}" if 1e-3 <= abs(x) < 1e5 or x == 0 else f"{x:.{digits - 1}e}"


def bench_neurodyn(text: str) -> str:
    """``bench_neurodyn.py --out DIR``'s ``bench_neurodyn.json``.

    >>> out = {"simulation": {"batch": 2, "n": 8, "rk4_steps": 10, "target_seconds": 10.0,
    ...        "float32": {"seconds": 1.0, "dense_seconds": 2.0, "meets_target": True}},
    ...        "gradient": {"n": 16, "batch": 1, "learned_seconds": 0.001, "dense_seconds": 0.1,
    ...        "speedup": 100.0, "max_abs_difference": 1e-14, "meets_target": True},
    ...        "threads": 1}
    >>> print(bench_neurodyn(json.dumps(out)))  # doctest: +NORMALIZE_WHITESPACE
    | measure | learned Fourier energy | dense matrix | dense / Fourier | target | met |
    |---|---|---|---|---|---|
    | 2 trajectories of N = 8, 10 RK4 steps, float32 (s) | 1 | 2 | 2 | <= 10 s | yes |
    | gradient at N = 16, batch 1 (s) | 0.001 | 0.1 | 100 | >= 10x faster | yes |
    <BLANKLINE>
    """
    res = json.loads(text)
    sim, grad = res["simulation"], res["gradient"]
    rows = []
    for dtype in ("float32", "float64"):
        if dtype in sim:
            r = sim[dtype]
            rows.append([f"{sim['batch']:,} trajectories of N = {sim['n']}, "
                         f"{sim['rk4_steps']:,} RK4 steps, {dtype} (s)", _g(r["seconds"]),
                         _g(r["dense_seconds"]), _g(r["dense_seconds"] / r["seconds"]),
                         f"<= {_g(sim['target_seconds'])} s",
                         "yes" if r["meets_target"] else "no"])
    rows.append([f"gradient at N = {grad['n']:,}, batch {grad['batch']} (s)",
                 _g(grad["learned_seconds"]), _g(grad["dense_seconds"]), _g(grad["speedup"]),
                 ">= 10x faster", "yes" if grad["meets_target"] else "no"])
    return _table(["measure", "learned Fourier energy", "dense matrix", "dense / Fourier",
                   "target", "met"], rows)


def bench_speed(text: str) -> str:
    """``bench_speed.py --out DIR``'s ``bench_speed.json``: per size, the medians of per-round
    ratios and neurodyn's RK4 time for 1,000 steps."""
    res = json.loads(text)
    rows = []
    for r in res["rows"]:
        size = r["n"] if r["geometry"] == "ring" else "x".join(map(str, r["n"]))
        canns = r.get("rk4_over_canns_euler_per_step")
        rows.append([f"{r['geometry']} {size}", str(r["batch"]),
                     _g(r["neurodyn_rk4_1000_steps_s"]),
                     "n/a" if canns is None else _g(canns),
                     _g(r["euler32_over_numpy_floor"])])
    return _table(["population", "B", "RK4, 1,000 steps (s)",
                   "RK4 step / canns' Euler step", "float32 Euler step / numpy FFT floor"], rows)


def eval_power(text: str) -> str:
    """The table ``eval_power.py`` prints (its standard output).

    >>> print(eval_power('''flagged at p < 0.01 (permutations 49); digits, n = 300 vs 300, 3 s
    ... sampler          reps    sliced       any
    ... fresh               2      0.00      0.00
    ... shrink 0.8          2      1.00      1.00'''))  # doctest: +NORMALIZE_WHITESPACE
    | sampler | reps | sliced | any |
    |---|---|---|---|
    | fresh | 2 | 0 | 0 |
    | shrink 0.8 | 2 | 1 | 1 |
    <BLANKLINE>
    """
    lines = [line for line in text.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("sampler"))
    tests = lines[start].split()[2:]
    rows = []
    for line in lines[start + 1:]:
        words = line.split()
        values, reps = words[-len(tests):], words[-len(tests) - 1]
        name = " ".join(words[:-len(tests) - 1])
        rows.append([name, reps, *(_g(float(v)) for v in values)])
    return _table(["sampler", "reps", *tests], rows)


RENDERERS = {"bench_neurodyn": bench_neurodyn, "bench_speed": bench_speed,
             "eval_power": eval_power}


def render(name: str, path: Path) -> str:
    """The table of renderer ``name`` for the bench output in ``path``."""
    if name not in RENDERERS:
        raise SystemExit(f"report: unknown table {name!r}; known: {', '.join(RENDERERS)}")
    return RENDERERS[name](path.read_text())


def update(text: str, base: Path = HERE) -> tuple[str, list[str]]:
    """``text`` with every generated table rendered again from its file under ``base``, and
    the names of the tables that changed."""
    changed = []

    def block(m: re.Match) -> str:
        table = render(m.group(2), base / m.group(3))
        if table != m.group(4):
            changed.append(f"{m.group(2)} ({m.group(3)})")
        return m.group(1) + table + m.group(5)

    return BLOCK.sub(block, text), changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", nargs="?", help="one table to print: " + ", ".join(RENDERERS))
    p.add_argument("file", nargs="?", type=Path, help="the bench output it renders")
    p.add_argument("--check", action="store_true",
                   help="only check that bench/README.md's generated tables are up to date")
    a = p.parse_args(argv)
    if a.name:
        if a.file is None:
            p.error("give the bench output file to render")
        print(render(a.name, a.file), end="")
        return 0
    text, changed = update(README.read_text())
    if a.check:
        if changed:
            print("bench/README.md: generated tables differ from their output: "
                  + ", ".join(changed), file=sys.stderr)
            return 1
        return 0
    README.write_text(text)
    print(f"bench/README.md: {len(changed)} table(s) rewritten" +
          (f": {', '.join(changed)}" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
