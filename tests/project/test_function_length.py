"""Functions short enough to read at once: no library function or method has more than
``MAX_LINES`` lines of code, counted from its ``def`` line to its last line without its
docstring (parameter documentation is required and may be long; the code beside it may not).

A function that could not be split yet is named in ``ALLOWED`` with its current length, so that
it cannot grow; the list is meant to shrink."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("neurodyn", "flows", "_runkit")
MAX_LINES = 60

#: ``module:qualified name`` -> lines of code it has now: the numba-compiled kernels, each one
#: compiled loop nest whose split would move its hot loops across calls the compiler must inline.
ALLOWED = {
    "neurodyn/dynamics/_compiled/kernels.py:_interaction": 138,
    "neurodyn/dynamics/_compiled/kernels.py:_run": 73,
    "flows/assignment/_auction_kernels.py:auction": 103,
    "flows/assignment/_matching_kernels.py:sparse_assignment": 66,
}


def _docstring_lines(node: ast.AST) -> int:
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].end_lineno - body[0].lineno + 1
    return 0


def code_lengths(path: Path) -> dict[str, int]:
    """Qualified name (``Class.method``, ``outer.inner``) -> lines of code of every function
    defined in the file at ``path``."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[name] = child.end_lineno - child.lineno + 1 - _docstring_lines(child)
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text()), "")
    return out


def library_lengths() -> dict[str, int]:
    return {f"{path.relative_to(ROOT).as_posix()}:{name}": n
            for pkg in PACKAGES for path in sorted((ROOT / pkg).rglob("*.py"))
            for name, n in code_lengths(path).items()}


def test_the_counter_skips_the_docstring_and_sees_methods(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('class A:\n    def f(self):\n        """Doc\n\n        more."""\n'
                   '        x = 1\n        return x\n\n\ndef g():\n    def h():\n        pass\n'
                   '    return h\n')
    assert code_lengths(src) == {"A.f": 3, "g": 4, "g.h": 2}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_function_is_longer_than_a_screen(package):
    lengths = library_lengths()
    long = {k: n for k, n in lengths.items()
            if k.startswith(package + "/") and n > MAX_LINES and k not in ALLOWED}
    listed = ", ".join(f"{k} ({n})" for k, n in sorted(long.items()))
    assert not long, f"functions over {MAX_LINES} lines of code (split them): {listed}"


def test_allowed_functions_do_not_grow_and_leave_the_list_once_short():
    lengths = library_lengths()
    for key, allowed in ALLOWED.items():
        assert key in lengths, f"{key} is gone: remove it from ALLOWED"
        assert lengths[key] <= allowed, f"{key} grew to {lengths[key]} lines (allowed {allowed})"
        assert lengths[key] > MAX_LINES, f"{key} is {lengths[key]} lines: remove it from ALLOWED"
