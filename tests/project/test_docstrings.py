"""neurodyn's public docstrings give every parameter a type, and arrays and tensors a shape, in
numpy style (``u : torch.Tensor, shape (batch, n)``), as flows' docstrings do.

Public means a function, class or method whose name does not start with ``_``, in a module whose
path has no part starting with ``_`` (``__init__`` aside). The check reads the ``Parameters``
section of each docstring with ``ast`` (no import)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_WORD = r"(?:[A-Za-z_]\w*(?:\.\w+)*(?:\[[^\]]*\])?|\{[^}]*\}|'[^']*'|\"[^\"]*\"|None|\d+)"
_TYPE = rf"{_WORD}(?: (?:or|of) {_WORD})*"
_SHAPE = r"shapes? \([^)]*\)(?:(?:,| or) \([^)]*\))*"
#: ``int``, ``list of float``, ``str or None``, ``{'hex', 'square'}``,
#: ``torch.Tensor or None, shape (B, n)``, ``numpy.ndarray, shape (n,), optional``
TYPE_SPEC = re.compile(rf"^{_TYPE}(?:, {_SHAPE})?(?:,? or None|, optional)?$")
ARRAY = re.compile(r"Tensor|ndarray|\barray(?:_like)?\b|Parameter")


def _underline(line: str) -> bool:
    s = line.strip()
    return bool(s) and set(s) == {"-"}


def parameter_entries(doc: str) -> list[str]:
    """The first line of each entry of the docstring's ``Parameters`` section."""
    lines = doc.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() != "Parameters" or i + 1 >= len(lines) or not _underline(lines[i + 1]):
            continue
        base = None
        for j in range(i + 2, len(lines)):
            text = lines[j]
            if not text.strip():
                continue
            if j + 1 < len(lines) and _underline(lines[j + 1]):
                break  # the next section
            indent = len(text) - len(text.lstrip())
            base = indent if base is None else base
            if indent < base:
                break
            if indent == base:
                out.append(text.strip())
    return out


def entry_problem(entry: str) -> str | None:
    """Why a ``Parameters`` entry is not ``name : type`` (with a shape for arrays), or None."""
    if " : " not in entry:
        return "no type"
    spec = entry.split(" : ", 1)[1].strip()
    if not TYPE_SPEC.match(spec):
        return "not a type"
    if ARRAY.search(spec) and "shape" not in spec:
        return "no shape"
    return None


def public_modules() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "neurodyn").rglob("*.py")
                  if not any(part.startswith("_") and part != "__init__.py"
                             for part in p.relative_to(ROOT).parts))


def untyped_parameters(module: str) -> list[str]:
    """``name: entry (why)`` of every public docstring entry of ``module`` that lacks a type."""
    tree = ast.parse((ROOT / module).read_text())
    nodes = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            nodes.append((node.name, node))
            if isinstance(node, ast.ClassDef):
                nodes += [(f"{node.name}.{m.name}", m) for m in node.body
                          if isinstance(m, ast.FunctionDef) and not m.name.startswith("_")]
    found = []
    for name, node in nodes:
        for entry in parameter_entries(ast.get_docstring(node) or ""):
            why = entry_problem(entry)
            if why:
                found.append(f"{name}: {entry[:60]!r} ({why})")
    return found


def test_the_checker_tells_types_from_descriptions():
    doc = ("Do it.\n\nParameters\n----------\nu : torch.Tensor, shape (B, n)\n    States.\n"
           "n : int\nnet : the network.\nx : numpy.ndarray\nlattice : {'hex', 'square'}\n"
           "k, m : float or None\n\nReturns\n-------\nint : no entry of Parameters\n")
    entries = parameter_entries(doc)
    assert entries == ["u : torch.Tensor, shape (B, n)", "n : int", "net : the network.",
                       "x : numpy.ndarray", "lattice : {'hex', 'square'}", "k, m : float or None"]
    assert [entry_problem(e) for e in entries] == [None, None, "not a type", "no shape", None,
                                                   None]


@pytest.mark.parametrize("module", public_modules())
def test_public_parameters_have_types_and_shapes(module):
    found = untyped_parameters(module)
    assert not found, f"{module}: parameters without ' : type' (or a shape): " + "; ".join(found)

