"""Sizes declared inside files or options are checked against memory before anything is
allocated: a model file declaring 10^9 neurons, a .npy header of 10^12 rows, and grid-cell
runs whose --duration or --bins cannot fit are refused with exit 2 and the estimate.

In-process through ``main(argv)``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from numpy.lib import format as npformat

from neurodyn.cli import main
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import ModelFormatError, load_model, save_model

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("sizes")
    save_model(fit(FitConfig(n=16, steps=2, seed=0)).network, root / "ring" / "model.pt")
    torus = fit(FitConfig(geometry="torus", n=(8, 8), steps=2, seed=0)).network
    save_model(torus, root / "torus" / "model.pt")
    for name, geometry in (("huge", {"kind": "ring", "n": 10**9}),
                           ("hugetorus", {"kind": "torus", "n": [10**5, 10**5], "lattice": "hex"}),
                           ("badn", {"kind": "ring", "n": "many"}),
                           ("mismatch", {"kind": "ring", "n": 100_000}),
                           ("big", {"kind": "ring", "n": 10**8})):
        source = "torus" if name == "hugetorus" else "ring"
        payload = torch.load(root / source / "model.pt", weights_only=True)
        payload["geometry"] = geometry
        (root / name).mkdir()
        torch.save(payload, root / name / "model.pt")
    with open(root / "huge.npy", "wb") as fh:
        npformat.write_array_header_1_0(
            fh, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 32)})
        fh.write(b"\0" * 64)
    return root


def _refused(argv, capsys, word):
    start = time.perf_counter()
    code = main([str(a) for a in argv])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert "unexpected" not in err and "Traceback" not in err, err
    assert word in err, err
    return err, elapsed


@pytest.mark.parametrize("model", ["huge", "hugetorus"])
def test_model_declaring_a_huge_network_is_refused_quickly(files, tmp_path, capsys, model):
    argv = ["simulate", "--model", files / model, "--out", tmp_path / "o", "--duration", "1",
            "--count", "2"]
    err, elapsed = _refused(argv, capsys, "--model")
    assert elapsed < 2.0, elapsed
    assert "declares a network of n=1,000,000,000" in err or "n=10,000,000,000" in err
    assert "memory" in err and "available" in err and "GiB" in err
    assert not (tmp_path / "o").exists()


def test_load_model_refuses_a_declared_size_that_is_not_a_size(files):
    with pytest.raises(ModelFormatError, match="field 'geometry' declares n='many'"):
        load_model(files / "badn")


def test_declared_size_must_match_the_stored_tensors(files, tmp_path, capsys):
    argv = ["simulate", "--model", files / "mismatch", "--out", tmp_path / "o", "--duration",
            "1", "--count", "2"]
    word = "declares n=100,000 neurons but field 'manifold_u0' holds 16"
    err, elapsed = _refused(argv, capsys, word)
    assert elapsed < 2.0 and not (tmp_path / "o").exists()


_SIMULATE = "import sys; from neurodyn.cli import main; sys.exit(main(sys.argv[1:]))"


def test_address_space_limit_bounds_the_estimate(files, tmp_path):
    """``ulimit -v 4000000``: a model declaring 10^8 neurons (about 12 GiB) is refused by the
    address-space limit, which the message names, however much memory the machine has free."""
    limit = 4_000_000 * 1024

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    argv = ["simulate", "--model", str(files / "big"), "--out", str(tmp_path / "o"),
            "--duration", "1", "--count", "2"]
    done = subprocess.run([sys.executable, "-c", _SIMULATE, *argv], capture_output=True,
                          text=True, preexec_fn=preexec, timeout=120)
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert "n=100,000,000" in err and "about 11.9 GiB" in err, err
    from _runkit.checks import memory_limit
    if memory_limit()[0] > limit:  # free memory is not the smaller limit here
        assert "under the address-space limit" in err, err
    assert not (tmp_path / "o").exists()
    assert json.dumps(err)  # one printable line


def test_npy_header_claiming_a_huge_array_is_refused_before_loading(files, tmp_path, capsys):
    argv = ["simulate", "--model", files / "ring", "--out", tmp_path / "o", "--duration", "1",
            "--init", files / "huge.npy"]
    err, _ = _refused(argv, capsys, "--init")
    assert "232.8 TiB" in err and "header" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("option, value", [("--duration", "1e15"), ("--bins", "10000000")])
def test_grid_cells_sizes_beyond_memory_are_refused(files, tmp_path, capsys, option, value):
    argv = ["grid-cells", "--model", files / "torus", "--out", tmp_path / "g", "--cells", "2",
            "--shuffles", "0", *(["--duration", "1"] if option != "--duration" else []),
            option, value]
    err, elapsed = _refused(argv, capsys, option)
    assert "of memory" in err and elapsed < 5.0
    assert not (tmp_path / "g").exists()


def test_grid_cells_positions_file_header_is_checked(files, tmp_path, capsys):
    argv = ["grid-cells", "--model", files / "torus", "--out", tmp_path / "g", "--cells", "2",
            "--trajectory", files / "huge.npy", "--dt", "0.02"]
    err, _ = _refused(argv, capsys, "232.8 TiB")
    assert not (tmp_path / "g").exists()


def test_a_normal_model_still_loads(files):
    net, _ = load_model(files / "torus")
    assert net.geometry.shape == (8, 8)
    assert np.isfinite(net.bias.numpy()).all()


def test_an_nwb_recording_is_sized_before_it_is_read(tmp_path, monkeypatch):
    """read_activity reads an NWB file's series and bins its spikes (bins x units, float64)
    only after the sizes the file declares pass the memory check."""
    pynwb = pytest.importorskip("pynwb")
    from datetime import datetime, timezone

    from _runkit import BadInput, checks
    from neurodyn.inference.recordings import read_activity

    nwb = pynwb.NWBFile("recording", "id", datetime(2020, 1, 1, tzinfo=timezone.utc))
    t = np.arange(200) * 0.02
    position = pynwb.behavior.Position(spatial_series=pynwb.behavior.SpatialSeries(
        name="heading", data=np.mod(t, 2 * np.pi), timestamps=t, reference_frame="arena"))
    nwb.create_processing_module("behavior", "tracking").add(position)
    for i in range(5):
        nwb.add_unit(spike_times=np.sort(np.random.default_rng(i).uniform(0, 4, 50)))
    path = tmp_path / "rec.nwb"
    with pynwb.NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    assert read_activity(path)["counts"].shape == (200, 5)  # the control: it fits
    # (200 samples + 200 x (2 + 5) counts) x 8 bytes = 12.8 kB against a 10 kB limit
    monkeypatch.setattr(checks, "memory_limit", lambda: (12_500, "available memory"))
    with pytest.raises(BadInput, match=r"--data='.*rec.nwb' is too large: the run would need "
                                       r"about 12.5 KiB of memory, more than the 9.8 KiB"):
        read_activity(path)
