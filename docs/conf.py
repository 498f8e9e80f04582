"""Sphinx configuration of the neurodyn-flows documentation (``make docs``).

Built offline with warnings as errors: no intersphinx, no download. The API reference is
generated from the docstrings (``_ext/apiref.py``), the command-line reference from the argparse
parsers (``_ext/cliref.py``), and the tutorial notebooks are copied from ``notebooks/`` and
executed by myst-nb as the pages are built (they are committed without outputs).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # this checkout's packages, even beside an installed copy
sys.path.insert(0, str(DOCS / "_ext"))
# the notebooks' kernels import the same checkout, and draw off-screen
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
os.environ.setdefault("MPLBACKEND", "Agg")

project = "neurodyn-flows"
author = "the neurodyn-flows authors"
copyright = "the neurodyn-flows authors, BSD-3-Clause"
release = version = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "apiref",
    "cliref",
]

# --- sources
exclude_patterns = ["_build", "README.md", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# --- the API reference (numpydoc renders the NumPy-style docstrings)
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings' Parameters sections give types and shapes
autodoc_default_options = {"exclude-members": "__init__, __new__"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# --- the notebooks: executed at build time, each in a fresh kernel from the repository's root
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = False
nb_merge_streams = True

# --- output
html_theme = "furo"
html_title = "neurodyn-flows"
html_static_path: list[str] = []
html_show_sourcelink = False


def _copy_notebooks(app) -> None:
    """``notebooks/*.ipynb`` into ``_generated/tutorials/`` (copied only when changed)."""
    target = DOCS / "_generated" / "tutorials"
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted((ROOT / "notebooks").glob("*.ipynb")):
        dst = target / src.name
        if not dst.is_file() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)


def setup(app):
    app.connect("builder-inited", _copy_notebooks)
