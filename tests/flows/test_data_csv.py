"""CSV data files: a header is a first line without a number; a byte-order mark is ignored."""

from __future__ import annotations

import pytest

from flows.data import load_array
from flows.errors import FlowsError

ROWS = "1,2\n3,4\n5,6\n7,8\n"


@pytest.mark.parametrize("text", [ROWS, "x,y\n" + ROWS, "\ufeffx,y\n" + ROWS, "\ufeff" + ROWS],
                         ids=["plain", "header", "bom-header", "bom-no-header"])
def test_every_data_row_is_read(tmp_path, text):
    p = tmp_path / "d.csv"
    p.write_text(text, encoding="utf-8")
    x = load_array(p)
    assert x.shape == (4, 2)
    assert x[0].tolist() == [1.0, 2.0] and x[-1].tolist() == [7.0, 8.0]


@pytest.mark.parametrize("text, bad", [("1,2x\n" + ROWS, "2x"), ("x,y\n1,2\n3,4o\n", "4o")])
def test_a_mistyped_row_is_refused_not_dropped(tmp_path, text, bad):
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(FlowsError, match=bad):
        load_array(p)
