"""The memory limit of the size checks is the smallest of free memory, the address-space limit
(``ulimit -v``, RLIMIT_AS) and the cgroup limit; array files are sized from their header."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numpy.lib import format as npformat

import _runkit.checks as checks
from _runkit import BadInput
from _runkit.files import check_array_file_size


def test_memory_limit_takes_the_smallest(monkeypatch):
    monkeypatch.setattr(checks, "_meminfo_available", lambda: 64 * 2**30)
    monkeypatch.setattr(checks, "_address_space_left", lambda: 3 * 2**30)
    monkeypatch.setattr(checks, "_cgroup_left", lambda: 8 * 2**30)
    assert checks.memory_limit() == (3 * 2**30, "address-space limit")
    assert checks.available_memory() == 3 * 2**30
    with pytest.raises(BadInput, match=r"about 4.0 GiB .* 2.4 GiB available under the "
                                       r"address-space limit; reduce n"):
        checks.check_memory("n", 4 * 2**30)
    monkeypatch.setattr(checks, "_cgroup_left", lambda: 2**30)
    assert checks.memory_limit() == (2**30, "cgroup memory limit")
    monkeypatch.setattr(checks, "_address_space_left", lambda: None)
    monkeypatch.setattr(checks, "_cgroup_left", lambda: None)
    assert checks.memory_limit() == (64 * 2**30, "available memory")


def test_cgroup_limit_is_read_from_v2_or_v1(monkeypatch):
    files = {"/sys/fs/cgroup/memory.max": "max\n",
             "/sys/fs/cgroup/memory/memory.limit_in_bytes": str(2**30),
             "/sys/fs/cgroup/memory/memory.usage_in_bytes": str(2**28)}
    monkeypatch.setattr(checks, "_read_int", lambda p: int(files[p]) if p in files and
                        files[p].strip().isdigit() else None)
    assert checks._cgroup_left() == 2**30 - 2**28
    files["/sys/fs/cgroup/memory.max"] = str(2**31)
    files["/sys/fs/cgroup/memory.current"] = str(2**30)
    assert checks._cgroup_left() == 2**30


_UNDER_ULIMIT = textwrap.dedent("""
    import json, sys
    from _runkit.checks import memory_limit, check_memory
    from _runkit import BadInput
    nbytes, source = memory_limit()
    try:
        check_memory("n", 3.5e9)
        refused = None
    except BadInput as err:
        refused = str(err)
    print(json.dumps({"nbytes": nbytes, "source": source, "refused": refused}))
""")


def test_rlimit_as_bounds_the_estimate_in_a_subprocess():
    limit = 4_000_000 * 1024  # ulimit -v 4000000 (KiB)

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([sys.executable, "-c", _UNDER_ULIMIT], capture_output=True,
                          text=True, preexec_fn=preexec, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["source"] == "address-space limit"
    assert 0 < found["nbytes"] <= limit
    assert found["refused"] is not None and "address-space limit" in found["refused"]


def _header_only(path, shape, descr="<f8"):
    with open(path, "wb") as fh:
        npformat.write_array_header_1_0(fh, {"descr": descr, "fortran_order": False,
                                             "shape": shape})
        fh.write(b"\0" * 64)


def test_npy_header_is_checked_before_loading(tmp_path):
    _header_only(tmp_path / "huge.npy", (10**12, 32))
    with pytest.raises(BadInput, match=r"init='.*huge.npy' is too large to load \(array size "
                                       r"declared in its header\): .*232.8 TiB"):
        check_array_file_size(tmp_path / "huge.npy", "init")


def test_npz_members_are_summed(tmp_path):
    _header_only(tmp_path / "x.npy", (10**7, 10**6))
    import zipfile
    with zipfile.ZipFile(tmp_path / "h.npz", "w") as z:
        z.write(tmp_path / "x.npy", "pos.npy")
    with pytest.raises(BadInput, match="header"):
        check_array_file_size(tmp_path / "h.npz", "source")


def test_small_and_foreign_files_pass_to_their_reader(tmp_path):
    np.save(tmp_path / "ok.npy", np.zeros((3, 2)))
    assert check_array_file_size(tmp_path / "ok.npy", "x") is None
    assert np.load(tmp_path / "ok.npy").shape == (3, 2)  # the check leaves the file as it was
    (tmp_path / "text.npy").write_text("not an array")  # no header: left to the reader's error
    assert check_array_file_size(tmp_path / "text.npy", "x") is None
    with pytest.raises(ValueError):
        np.load(tmp_path / "text.npy")
