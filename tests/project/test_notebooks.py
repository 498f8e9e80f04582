"""The tutorial notebooks run as a reader runs them (nbclient, a fresh kernel each), and their
figures are PNG outputs, each shown once."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_tutorials_are_there():
    assert [p.name for p in NOTEBOOKS] == ["01_ring_attractor.ipynb", "02_grid_cells.ipynb",
                                          "03_flow_matching_ot.ipynb",
                                          "04_real_recording.ipynb"]
    for path in NOTEBOOKS:  # committed without outputs: the test suite produces them
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_shows_its_figures_once(path):
    if path.stem == "04_real_recording" and not (ROOT.parent / "shared" / "data" /
                                                  "adn_hd_wake_sws.npz").is_file():
        pytest.skip("the real recording is not beside the repository")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    pngs = [sum("image/png" in o.get("data", {}) for o in c.outputs)
            for c in nb.cells if c.cell_type == "code"]
    assert sum(pngs) >= 2, pngs              # the figures are PNG outputs in the notebook
    assert max(pngs) == 1, pngs              # none shown twice (ax= given included)
    texts = [o["data"]["text/plain"] for c in nb.cells if c.cell_type == "code"
             for o in c.outputs if "text/plain" in o.get("data", {})]
    assert not any("Parameter containing" in t or "tensor([" in t for t in texts)
