"""bench/README.md's generated tables are the rendering of the benchmarks' kept output
(``bench/tables.py``): none is retyped, and a retyped number is caught."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    return load_script("bench", "tables", "bench_tables")


def test_the_generated_tables_are_the_outputs_rendering(report):
    text = (ROOT / "bench" / "README.md").read_text()
    blocks = report.BLOCK.findall(text)
    assert {name for _, name, _, _, _ in blocks} >= {"bench_neurodyn"}
    for _, _, file, _, _ in blocks:
        assert (ROOT / "bench" / file).is_file(), file
    assert report.update(text)[1] == []
    assert report.main(["--check"]) == 0


def test_a_retyped_number_is_caught(report):
    text = (ROOT / "bench" / "README.md").read_text()
    block = report.BLOCK.search(text)
    table = block.group(4)
    number = re.search(r"\| (\d+\.\d+) \|", table).group(1)
    edited = text.replace(table, table.replace(f"| {number} |", f"| {number}1 |", 1))
    assert edited != text
    fixed, changed = report.update(edited)
    assert changed and fixed == text


def test_the_renderers_read_what_the_benches_write(report):
    results = doctest.testmod(report, verbose=False)
    assert results.attempted >= 2 and results.failed == 0
    kept = json.loads((ROOT / "bench" / "measured" / "bench_neurodyn.json").read_text())
    table = report.bench_neurodyn(json.dumps(kept))
    speedup = kept["gradient"]["speedup"]
    assert f"| {report._g(speedup)} |" in table and "1,024 trajectories" in table
