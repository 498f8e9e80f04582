"""Library code never imports the command lines' module ``_runkit.cli``: what a library call
needs at run time (threads, Ctrl-C, progress) is ``_runkit.runtime``, the notebook display of
figures ``_runkit.notebook``; and torch's thread count is set in one place."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.project.test_layout import ROOT, import_graph

#: where importing ``_runkit.cli`` is allowed: the two command lines and the run contract itself
CLI_HOMES = ("neurodyn.cli", "flows.cli", "_runkit")


def _outside_cli(module: str) -> bool:
    return not any(module == home or module.startswith(home + ".") for home in CLI_HOMES)


def test_no_library_module_imports_runkit_cli():
    graph = import_graph()
    assert "_runkit.cli" in graph["neurodyn.cli"] | graph["neurodyn.cli._common"] | set().union(
        *(graph[m] for m in graph if m.startswith("flows.cli"))), "the finder sees no CLI import"
    offenders = sorted(m for m, targets in graph.items()
                       if "_runkit.cli" in targets and _outside_cli(m))
    assert offenders == [], f"library modules importing _runkit.cli: {offenders}"


def test_importing_the_library_loads_no_cli_module():
    code = ("import sys, _runkit, neurodyn.fitting.core, neurodyn.plotting.manifold, "
            "neurodyn.spatial.gridcells.run, flows.training.loop, flows.plotting.figures, "
            "flows.runs.sweeps; "
            "print(sorted(m for m in sys.modules if m.split('.')[-1] == 'cli' "
            "and m.split('.')[0] in ('neurodyn', 'flows', '_runkit')))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    assert proc.stdout.strip() == "[]"


def test_cli_main_is_still_reachable_from_the_package():
    code = "import sys, _runkit; f = _runkit.cli_main; print('_runkit.cli' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    assert proc.stdout.strip() == "True"


def _calls_set_num_threads(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.Attribute) and node.attr == "set_num_threads"
               for node in ast.walk(tree))


def test_the_thread_count_is_set_in_one_place():
    setters = sorted(str(p.relative_to(ROOT)) for pkg in ("neurodyn", "flows", "_runkit")
                     for p in (ROOT / pkg).rglob("*.py") if _calls_set_num_threads(p))
    assert setters == ["_runkit/runtime.py"]
