"""The API reference's pages, written from the packages' own lists of public names.

A package's public names are its ``__all__`` (for ``neurodyn``, ``flows`` and their subpackages
the lazy-name table of the ``__init__``, :func:`_runkit.lazy.lazy_names`); so is a top-level
module's that defines one (``neurodyn.io``, ``flows.errors``, ...). One page per package or
module: its docstring, then each name documented from its own docstring by autodoc. An object
public under several names (``neurodyn.fit`` is ``neurodyn.fitting.fit``) is documented once,
under its shortest name, and the other pages link to it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

#: the packages whose public names the reference documents, in the order of the index
PACKAGES = ("neurodyn", "flows")


def public_modules(top: str) -> list[str]:
    """The package ``top``, its subpackages and its top-level modules that define ``__all__``,
    shortest names first (private ones, ``_name``, left out)."""
    package = importlib.import_module(top)
    names = [top]
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts):
            continue
        if info.ispkg or len(parts) == 2:
            if info.ispkg or "__all__" in vars(importlib.import_module(info.name)):
                names.append(info.name)
    return sorted(names, key=lambda n: (n.count("."), n))


def _directive(obj: object) -> str:
    if inspect.isclass(obj):
        return "autoclass"
    if callable(obj):
        return "autofunction"
    if inspect.ismodule(obj):
        return "automodule"
    return "autodata"


def _role(directive: str) -> str:
    return {"autoclass": "class", "autofunction": "func", "automodule": "mod"}.get(directive,
                                                                                     "data")


def page(module: str, documented: dict[int, str]) -> str:
    """The reST page of ``module``; ``documented`` (id of an object -> its documented name) is
    updated with the names this page documents."""
    mod = importlib.import_module(module)
    lines = [module, "=" * len(module), "", f".. automodule:: {module}", "   :no-members:", ""]
    links = []
    for name in sorted(getattr(mod, "__all__", ())):
        obj = getattr(mod, name)
        full = f"{module}.{name}"
        directive = _directive(obj)
        if directive == "automodule":
            continue  # a submodule has its own page
        if id(obj) in documented and directive != "autodata":
            links.append(f"- :{_role(directive)}:`{name} <{documented[id(obj)]}>`")
            continue
        if directive != "autodata":
            documented[id(obj)] = full
        lines += [f".. {directive}:: {full}"]
        if directive == "autoclass":
            lines += ["   :members:", "   :show-inheritance:"]
        lines.append("")
    if links:
        lines += ["Also public here (documented under their shorter name):", "", *links, ""]
    lines += _module_sections(mod, documented)
    return "\n".join(lines)


def _module_sections(package: object, documented: dict[int, str]) -> list[str]:
    """For a subpackage, a section per module of it that defines ``__all__``: the names public
    there and not already documented (the types its functions return, its helpers), which the
    subpackage's short list leaves to the module."""
    if not hasattr(package, "__path__") or package.__name__.count(".") == 0:
        return []
    lines: list[str] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        entries = []
        for name in sorted(vars(module).get("__all__", ())):
            obj = getattr(module, name)
            directive = _directive(obj)
            if directive == "automodule" or (id(obj) in documented and directive != "autodata"):
                continue
            full = f"{module.__name__}.{name}"
            if directive != "autodata":
                documented[id(obj)] = full
            entries += [f".. {directive}:: {full}"]
            if directive == "autoclass":
                entries += ["   :members:", "   :show-inheritance:"]
            entries.append("")
        if entries:
            title = f"In ``{module.__name__}``"
            lines += [title, "-" * len(title), "", *entries]
    return lines


def write_pages(folder: Path) -> list[str]:
    """Write every page (``folder/<module>.rst``) and the reference's index; returns the
    modules. A page is rewritten only when its text changed."""
    folder.mkdir(parents=True, exist_ok=True)
    documented: dict[int, str] = {}
    modules = [m for top in PACKAGES for m in public_modules(top)]
    for module in sorted(modules, key=lambda n: (n.count("."), n)):
        _write(folder / f"{module}.rst", page(module, documented))
    toc = "\n".join(f"   {m}" for m in modules)
    _write(folder / "index.rst", "API reference\n=============\n\n"
           "Every public name of ``neurodyn`` and ``flows``, from its docstring: the names each\n"
           "package's ``__init__`` lists (its ``__all__``), then those of each subpackage and of\n"
           "each top-level module that defines ``__all__``. An object public under several\n"
           "names is documented under the shortest.\n\n"
           f".. toctree::\n   :maxdepth: 1\n\n{toc}\n")
    return modules


def _write(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


#: the NumPy-docstring sections whose entries open with a ``name : type`` (or a bare type) line
TYPED_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives",
                  "Attributes"}


def literal_types(lines: list[str]) -> None:
    """Mark the type of every entry of a typed section as plain text, in place.

    A type states a shape in Python's notation (``shape (..., *shape)``), which reST would read as
    the start of an emphasis. The escape applies to the type part of an entry's first line (after
    ``" : "``, or the whole line in Returns without a name) and to nothing else of the docstring.
    """
    section, indent = None, None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) >= 3:
            section, indent = line.strip(), len(line) - len(line.lstrip())
            continue
        if section not in TYPED_SECTIONS or not line.strip() or set(line.strip()) == {"-"}:
            continue
        if len(line) - len(line.lstrip()) != indent:
            continue  # a description line
        head, sep, kind = line.partition(" : ")
        if not sep:
            if section in ("Returns", "Yields", "Receives"):
                head, kind = line[:indent], line[indent:]
            else:
                continue
        lines[i] = head + sep + kind.replace("\\*", "*").replace("*", "\\*")


def _process_docstring(app, what, name, obj, options, lines) -> None:
    literal_types(lines)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)
    app.connect("builder-inited",
                lambda app: write_pages(Path(app.srcdir) / "_generated" / "api"))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
