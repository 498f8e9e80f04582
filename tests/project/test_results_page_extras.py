"""The results page links an SVG beside every PNG that has one (the library writes them when
RUNKIT_SVG=1, as run_all asks), and shows the tutorial notebooks: executed with nbclient,
their PNG outputs as the section's figures, and a rendering of the whole notebook beside them."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from _runkit.files import atomic_save_figure

REPORT_PY = Path(__file__).resolve().parents[2] / "demos" / "page.py"


def _load_report_module():
    spec = importlib.util.spec_from_file_location("demos_report_extras", REPORT_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


report = _load_report_module()


def _figure() -> Figure:
    fig = Figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    return fig


def test_svg_beside_png_is_written_on_request_and_linked(tmp_path, monkeypatch):
    atomic_save_figure(_figure(), tmp_path / "demo" / "a.png", dpi=30)
    assert not (tmp_path / "demo" / "a.svg").exists()  # control: off by default
    monkeypatch.setenv("RUNKIT_SVG", "1")
    atomic_save_figure(_figure(), tmp_path / "demo" / "b.png", dpi=30)
    assert (tmp_path / "demo" / "b.svg").read_text().lstrip().startswith("<?xml")
    section = report.Section(title="demo", figures=["demo/a.png", "demo/b.png"])
    page = report.build_report(tmp_path, [section]).read_text()
    assert page.count(">SVG</a>") == 1 and 'href="demo/b.svg"' in page


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source":
         "# A tiny tutorial\n\nIt draws `one` line, **bold**, [a link](https://example.org)."},
        {"cell_type": "code", "id": "plot", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
                   "ax.plot([0, 1], [0, 1]);\nprint('hello')\nimport sys\n"
                   "_ = sys.stderr.write('bar 1/2\\rbar 2/2\\n')"},
        {"cell_type": "markdown", "id": "list", "metadata": {}, "source": "- first\n- second"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def test_notebooks_are_executed_onto_the_page(tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    books = tmp_path / "repo" / "notebooks"
    books.mkdir(parents=True)
    (books / "01_tiny.ipynb").write_text(json.dumps(NOTEBOOK))
    out = tmp_path / "results"
    [written] = report.notebook_sections(out, books, timeout=120)
    folder = written.parent
    assert (folder / "figure_1.png").read_bytes()[:4] == b"\x89PNG"
    rendered = (folder / "index.html").read_text()
    assert '<img src="figure_1.png"' in rendered and "<code>one</code>" in rendered
    assert "<strong>bold</strong>" in rendered and "<li>second</li>" in rendered
    assert "hello" in rendered  # the printed output, executed
    outputs = rendered.split("</code></pre>", 1)[1]  # after the cell's code
    assert "bar 2/2" in outputs and "bar 1/2" not in outputs  # a bar ends as its last state
    page = report.build_report(out, report.collect_sections(out)).read_text()
    assert "Notebook: A tiny tutorial" in page and "notebook_01_tiny/figure_1.png" in page
    assert 'href="notebook_01_tiny/index.html"' in page
    assert 'href="notebook_01_tiny/01_tiny.ipynb"' in page
