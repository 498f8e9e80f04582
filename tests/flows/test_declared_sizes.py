"""Sizes declared inside files or options are checked against memory before anything is
allocated: a model declaring width 2e8, a .npy header of 10^12 rows, and --floor-pairs 10^9
are refused with exit 2 and the estimate. In-process through ``main(argv)``."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from numpy.lib import format as npformat

from flows.cli.commands import main

TINY = ["--steps", "20", "--width", "16", "--batch", "32", "--n-train", "200", "--n-eval", "40",
        "--seed", "1"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sizes") / "run"
    assert main(["train", "--data", "moons", "--out", str(out), *TINY]) == 0
    return out


def _refused(capsys, argv, word):
    start = time.perf_counter()
    code = main([str(a) for a in argv])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "unexpected" not in err, err
    assert word in err, err
    return err, elapsed


def test_model_declaring_a_huge_width_is_refused_quickly(run, tmp_path, capsys):
    blob = torch.load(run / "model.pt", weights_only=True)
    blob["spec"]["width"] = 200_000_000_000
    torch.save(blob, tmp_path / "model.pt")
    capsys.readouterr()
    err, elapsed = _refused(capsys, ["sample", "--model", tmp_path / "model.pt", "--n", 10,
                                     "--out", tmp_path / "s.npy"], "width 200,000,000,000")
    assert elapsed < 2.0 and "of memory" in err and "available" in err
    assert not (tmp_path / "s.npy").exists()


def test_model_width_not_matching_its_weights_is_refused(run, tmp_path, capsys):
    blob = torch.load(run / "model.pt", weights_only=True)
    blob["spec"]["width"] = 1000
    torch.save(blob, tmp_path / "model.pt")
    capsys.readouterr()
    _refused(capsys, ["sample", "--model", tmp_path / "model.pt", "--n", 10, "--out",
                      tmp_path / "s.npy"], "weights W have shape (16, ")


def test_npy_header_claiming_a_huge_array_is_refused(tmp_path, capsys):
    with open(tmp_path / "huge.npy", "wb") as fh:
        npformat.write_array_header_1_0(
            fh, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 32)})
        fh.write(b"\0" * 64)
    err, _ = _refused(capsys, ["eval", "--samples", tmp_path / "huge.npy", "--data", "moons"],
                      "232.8 TiB")
    assert "header" in err
    err, _ = _refused(capsys, ["train", "--data", tmp_path / "huge.npy", "--out",
                               tmp_path / "t", *TINY], "232.8 TiB")
    assert not (tmp_path / "t").exists()


def test_floor_pairs_beyond_memory_are_refused(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.zeros((50, 2), dtype=np.float32))
    err, elapsed = _refused(capsys, ["eval", "--samples", tmp_path / "s.npy", "--data", "moons",
                                     "--floor-pairs", 1_000_000_000], "floor_pairs")
    assert "of memory" in err and elapsed < 5.0
