"""A plain install simulates and solves OT couplings on the compiled path: numba is a core
dependency, not an extra."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def core_dependencies() -> list[str]:
    """The names in ``[project] dependencies`` of pyproject.toml (read without tomllib, which
    Python 3.10 lacks)."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    return [re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower()
            for d in re.findall(r'^\s*"([^"]+)"', block, re.M)]


def test_numba_is_a_core_dependency():
    names = core_dependencies()
    assert "torch" in names and "numba" in names and "tqdm" not in names
    from neurodyn.dynamics import fastpath

    assert fastpath.AVAILABLE  # the environment the tests run in installs what the package needs
