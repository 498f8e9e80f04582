"""Each flows demo runs at --quick size and writes finite metrics and its figures."""

import math
from pathlib import Path

import pytest

from tests.scripts import load_script

DEMOS = Path(__file__).resolve().parents[2] / "demos"


def _load(name):
    return load_script("demos", name)


def _finite(v):
    if isinstance(v, list):
        return all(_finite(x) for x in v)
    return not isinstance(v, float) or math.isfinite(v)


@pytest.mark.parametrize("name", ["flows_moons", "flows_theory", "flows_digits",
                                  "flows_digits_by_class"])
def test_demo_quick(tmp_path, name):
    metrics = _load(name).main(["--out", str(tmp_path), "--quick"])
    assert (tmp_path / "metrics.json").is_file()
    assert metrics["figures"] and all((tmp_path / f).is_file() for f in metrics["figures"])
    assert all(_finite(v) for k, v in metrics.items() if k != "figures")
