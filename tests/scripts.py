"""Load a demo or bench script as a module, as ``python demos/<name>.py`` would run it: its own
folder first on ``sys.path`` (the scripts import their neighbours, ``_models`` and ``page`` in
demos/, ``bench_flows`` in bench/, and nothing else beside the installed package)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_script(folder: str, name: str, module: str | None = None):
    """``ROOT/folder/name.py`` as a module named ``module`` (default ``name``), registered in
    ``sys.modules`` so dataclasses and pickling find it."""
    where = str(ROOT / folder)
    if where not in sys.path:
        sys.path.insert(0, where)
    spec = importlib.util.spec_from_file_location(module or name, ROOT / folder / f"{name}.py")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded
