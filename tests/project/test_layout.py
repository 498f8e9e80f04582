"""The shape of the house: no import cycle (imports inside functions included), few modules at
each package's top, no module hidden by a function of the same name."""

import ast
import importlib
import inspect
import pkgutil
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("neurodyn", "flows", "_runkit")
#: at most this many modules directly in a package folder (``__init__`` included)
TOP_MODULES = 12


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """module -> the library modules it imports, wherever the import stands (functions too).

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of
    ``pkg``. A package's ``__init__`` is not counted as imported by its own submodules' relative
    imports of siblings (``from . import x`` reads ``pkg.x``)."""
    files = {(_module_name(p), p) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    modules = {m for m, _ in files}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in files:
        tree = ast.parse(path.read_text())
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _without_init_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # a package's __init__ re-exporting its submodules, and a submodule reaching a sibling
    # through the package, is the one loop Python resolves by design: drop the edges from a
    # module into the __init__ of a package that contains it
    return {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}


def test_cycle_finder_sees_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_counting_imports_inside_functions():
    found = cycles(_without_init_edges(import_graph()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "_runkit"])
def test_few_modules_at_the_top_of_each_package(package):
    for folder in [ROOT / package, *[d for d in (ROOT / package).rglob("*") if d.is_dir()]]:
        if folder.name == "__pycache__" or not (folder / "__init__.py").exists():
            continue
        count = len(list(folder.glob("*.py")))
        assert count <= TOP_MODULES, f"{folder.relative_to(ROOT)} holds {count} modules"


@pytest.mark.parametrize("package", ["neurodyn", "flows"])
def test_no_module_is_hidden_by_a_function(package):
    pkg = importlib.import_module(package)
    for info in pkgutil.walk_packages(pkg.__path__, package + "."):
        if info.name.endswith("__main__"):
            continue
        parent_name, _, leaf = info.name.rpartition(".")
        parent = importlib.import_module(parent_name)
        importlib.import_module(info.name)
        value = getattr(parent, leaf)
        assert isinstance(value, types.ModuleType), (
            f"{parent_name}.{leaf} is a {type(value).__name__}, hiding the module {info.name}")
        assert not inspect.isfunction(value)


def script_imports(folder: Path) -> dict[str, set[str]]:
    """script -> the scripts of ``folder`` it imports (by their module name, anywhere in it)."""
    scripts = {p.stem: p for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in scripts.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
        graph[name] = (found & set(scripts)) - {name}
    return graph


def test_script_imports_of_a_planted_cycle_are_found(tmp_path):
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    (tmp_path / "c.py").write_text("import numpy\n")
    graph = script_imports(tmp_path)
    assert graph == {"a": {"b"}, "b": {"a"}, "c": set()}
    assert cycles(graph) == [["a", "b"]]


@pytest.mark.parametrize("folder", ["demos", "bench"])
def test_scripts_run_against_the_installed_package(folder):
    """No script edits ``sys.path`` (a script's own folder is on it when it runs; the library is
    installed), and the scripts that import each other do so without a cycle."""
    for path in sorted((ROOT / folder).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            uses_sys_path = isinstance(node, ast.Attribute) and node.attr == "path" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys"
            assert not uses_sys_path, f"{folder}/{path.name}:{node.lineno} uses sys.path"
    assert cycles(script_imports(ROOT / folder)) == []
