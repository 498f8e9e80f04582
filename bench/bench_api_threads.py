"""The README's Python snippets against the command line doing the same work, side by side.

Each case is the snippet of the README's "Python quickstart" at its stated size and the command
line that does the same computation, each run as a fresh process, alternating, ``--runs`` times:

- ``fit``: ``nd.fit(nd.FitConfig(geometry="ring", n=128, seed=0))`` / ``neurodyn fit ring``;
- ``simulate``: ``nd.simulate`` of 64 lesioned states for 20 tau at dt 0.1 /
  ``neurodyn simulate --perturb lesion --strength 0.4 --count 64 --duration 20``;
- ``path-integrate``: ``nd.path_integration(net, "ou:0.2:10:0.5", runs=16, duration=200,
  seed=1)`` / ``neurodyn path-integrate`` with the same arguments;
- ``train``: ``flows.train(flows.TrainConfig(data="moons", steps=5000, seed=0))`` /
  ``flows train --data moons --steps 5000``.

Two numbers per variant. ``work s``: the computation alone, the Python call timed around it in its
process and, for the command line, the wall time it records in ``timing.json`` (``fit_seconds``,
``seconds``, ``train_wall_time_s``; path-integrate records none, so its column is the whole
process). ``process s``: the whole process (interpreter, imports, the command line's figures and
files too). ``api / cli`` is the ratio of the medians of ``work s`` (the target: at most 1.5).
The variant ``api, torch default threads`` is the same snippet with ``threads=`` set to torch's
own default count, i.e. what a Python user got before library calls chose their thread count.

Usage::

    python bench/bench_api_threads.py [--runs 3] [--cases fit,simulate,path-integrate,train]
                                      [--no-default-threads] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: case -> (set-up, the README's call timed alone); the set-up imports the modules the call needs
#: (``{model}``: a fitted ring), since the command lines' recorded times leave imports out too
SNIPPETS = {
    "fit": ("import neurodyn as nd\nnd.fit, nd.FitConfig",
            'nd.fit(nd.FitConfig(geometry="ring", n=128, seed=0){threads})'),
    "simulate": ("import neurodyn as nd\n"
                 "net, _ = nd.load_model({model!r})\n"
                 'u0 = nd.perturbed_states(net.manifold, count=64, kind="lesion", strength=0.4,'
                 " seed=0)\nnd.simulate",
                 "nd.simulate(net, u0, duration=20.0, dt=0.1{threads})"),
    "path-integrate": ("import neurodyn as nd\nnet, _ = nd.load_model({model!r})\n"
                       "nd.path_integration",
                       'nd.path_integration(net, "ou:0.2:10:0.5", runs=16, duration=200.0, '
                       "seed=1{threads})"),
    "train": ("import flows\nflows.train, flows.TrainConfig",
              'flows.train(flows.TrainConfig(data="moons", steps=5000, seed=0), '
              "progress=False{threads})"),
}

#: case -> (the command line's words after the program, the timing.json key of its work or None)
COMMANDS = {
    "fit": (["neurodyn", "fit", "ring", "--n", "128", "--seed", "0"], "fit_seconds"),
    "simulate": (["neurodyn", "simulate", "--model", "{model}", "--perturb", "lesion",
                  "--strength", "0.4", "--count", "64", "--duration", "20", "--dt", "0.1",
                  "--seed", "0"], "seconds"),
    "path-integrate": (["neurodyn", "path-integrate", "--model", "{model}", "--velocity",
                        "ou:0.2:10:0.5", "--runs", "16", "--duration", "200", "--seed", "1"],
                       None),
    "train": (["flows", "train", "--data", "moons", "--steps", "5000", "--seed", "0"],
              "train_wall_time_s"),
}


def _console(name: str) -> list[str]:
    """The console script ``name`` beside this interpreter, else the same through ``-c``."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", f"import sys; from {name}.cli import main; "
                                  "sys.exit(main(sys.argv[1:]))"]


def api_code(case: str, model: Path, torch_default: bool) -> str:
    """The Python program of ``case``: the snippet, timed around its call, printing the seconds.

    With ``torch_default`` the call gets ``threads=`` torch's default count (read before any
    library call changes it)."""
    setup, call = SNIPPETS[case]
    threads = ", threads=torch.get_num_threads()" if torch_default else ""
    return ("import time, torch\n" + setup.format(model=str(model)) + "\n"
            + "t0 = time.perf_counter()\n" + call.format(threads=threads) + "\n"
            + "print(time.perf_counter() - t0)\n")


def run_api(case: str, model: Path, torch_default: bool) -> tuple[float, float]:
    """``(work s, process s)`` of one fresh process running the snippet."""
    t0 = time.perf_counter()
    done = _run([sys.executable, "-c", api_code(case, model, torch_default)])
    return float(done.stdout.strip().splitlines()[-1]), time.perf_counter() - t0


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    """Run ``argv``; a failure raises with the end of its stderr."""
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {done.returncode}: "
                           f"{done.stderr.strip()[-800:]}")
    return done


def run_cli(case: str, model: Path, out: Path) -> tuple[float, float]:
    """``(work s, process s)`` of one fresh process of the command line (``out`` replaced)."""
    words, key = COMMANDS[case]
    words = [w.format(model=str(model)) for w in words]
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    _run([*_console(words[0]), *words[1:], "--out", str(out)])
    process = time.perf_counter() - t0
    if key is None:
        return process, process
    return float(json.loads((out / "timing.json").read_text())[key]), process


def measure(cases: list[str], runs: int, default_threads: bool, tmp: Path) -> dict:
    """``{case: {variant: {"work": [...], "process": [...]}}}``, runs interleaved."""
    model = tmp / "ring"
    _run([*_console("neurodyn"), "fit", "ring", "--out", str(model)])
    variants = ["api", "cli"] + (["api, torch default threads"] if default_threads else [])
    times = {c: {v: {"work": [], "process": []} for v in variants} for c in cases}
    for _ in range(runs):  # interleaved, so a slow spell of the machine hits every variant
        for case in cases:
            for variant in variants:
                if variant == "cli":
                    work, process = run_cli(case, model, tmp / "out")
                else:
                    work, process = run_api(case, model, variant != "api")
                times[case][variant]["work"].append(work)
                times[case][variant]["process"].append(process)
    return times


def report(times: dict, runs: int) -> dict:
    """Print the table; returns the medians and the ratios."""
    print(f"{'case':15s} {'variant':28s} {'work s':>8s} {'process s':>10s} {'api / cli':>10s}"
          f"   (median of {runs})")
    summary = {}
    for case, variants in times.items():
        cli = statistics.median(variants["cli"]["work"])
        summary[case] = {}
        for variant, t in variants.items():
            work, process = statistics.median(t["work"]), statistics.median(t["process"])
            ratio = work / cli
            summary[case][variant] = {"work_s": work, "process_s": process, "ratio": ratio}
            shown = "" if variant == "cli" else f"{ratio:10.2f}"
            print(f"{case:15s} {variant:28s} {work:8.2f} {process:10.2f} {shown}")
    return summary


def main(argv: list[str] | None = None) -> dict:
    """Measure and print; returns the summary (``--json`` writes it too)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="fresh processes per variant")
    p.add_argument("--cases", default=",".join(SNIPPETS), help="comma-separated cases")
    p.add_argument("--no-default-threads", action="store_true",
                   help="leave out the variant with torch's default thread count")
    p.add_argument("--json", type=Path, help="also write the summary here")
    a = p.parse_args(argv)
    cases = [c for c in a.cases.split(",") if c]
    unknown = sorted(set(cases) - set(SNIPPETS))
    if unknown:
        p.error(f"--cases: unknown {unknown}; choose from {sorted(SNIPPETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        summary = report(measure(cases, a.runs, not a.no_default_threads, Path(tmp)), a.runs)
    if a.json:
        a.json.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
