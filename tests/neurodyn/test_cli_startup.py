"""The command line answers ``--help`` without importing torch, and the choices its parser
writes out are those of the library."""

import subprocess
import sys

import pytest

from neurodyn.cli import _common

COMMANDS = ("fit", "simulate", "restore", "path-integrate", "diffuse", "grid-cells", "manifold",
            "sweep")
HEAVY = ("torch", "matplotlib", "scipy", "numba", "sklearn", "ripser")


def _loaded_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print('loaded:', *[m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return out.stdout.splitlines()[-1].split()[1:]


def test_help_of_every_command_imports_no_torch():
    code = ("from neurodyn.cli import main\n"
            f"for argv in [['--help']] + [[c, '--help'] for c in {COMMANDS!r}]:\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit:\n"
            "        pass")
    assert _loaded_after(code) == []


def test_import_neurodyn_and_a_subpackage_import_no_torch():
    assert _loaded_after("import neurodyn, neurodyn.analysis, neurodyn.spatial") == []


@pytest.mark.parametrize("mirror, module, name", [
    ("PERTURBATIONS", "neurodyn.dynamics.perturbations", "PERTURBATIONS"),
    ("METHODS", "neurodyn.dynamics.simulation", "METHODS"),
    ("FIXED_METHODS", "neurodyn.dynamics.simulation", "FIXED_METHODS"),
    ("LATTICES", "neurodyn.geometry.populations", "LATTICES"),
    ("MIN_SURVEY_SAMPLES", "neurodyn.analysis.survey", "MIN_SURVEY_SAMPLES"),
    ("GRIDNESS_THRESHOLD", "neurodyn.spatial.gridcells.results", "GRIDNESS_THRESHOLD"),
    ("NULL_MIN_SHIFT", "neurodyn.spatial.gridcells.results", "NULL_MIN_SHIFT"),
    ("DEFAULT_DT_NETWORK", "neurodyn.spatial.gridcells.network", "DEFAULT_DT_NETWORK"),
])
def test_parser_choices_mirror_the_library(mirror, module, name):
    import importlib

    assert getattr(_common, mirror) == getattr(importlib.import_module(module), name)
