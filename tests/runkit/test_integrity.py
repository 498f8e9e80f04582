"""Integrity of what the library writes and reads: sha256 recorded at save and verified at load
(with the zip CRC-32 for files without one), the one reader of array files, file modes that
follow the umask, a full disk as one line, and a run folder that compares, then locks, then
writes."""

import errno
import io
import os
import zipfile

import numpy as np
import pytest
import torch

from _runkit import BadInput, RunDir, RunFailed, atomic_torch_save, safe_torch_load
from _runkit.checksum import MARK, check_zip, sidecar
from _runkit.files import (
    atomic_save_npy,
    atomic_savez,
    atomic_write_bytes,
    file_mode,
    load_arrays,
    write_gif,
)
from _runkit.rundir import out_lock


def _rezipped(path, edit):
    """The zip at ``path`` written again entry by entry (fresh, valid CRC-32s), ``edit(name,
    data)`` changing an entry's bytes, and the archive comment kept."""
    src = zipfile.ZipFile(path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            out.writestr(info, edit(info.filename, src.read(info)))
        out.comment = src.comment
    return buf.getvalue()


def _bump_last_float(name, data):
    if name.endswith("/data/0"):  # the float32 storage of "w": its last value, by one ulp
        return data[:-4] + (np.frombuffer(data[-4:], np.float32) * np.float32(1 + 2**-20)
                            ).tobytes()
    return data


def test_the_sha256_catches_an_edit_that_keeps_every_crc(tmp_path):
    path = tmp_path / "model.pt"
    atomic_torch_save({"w": torch.arange(1.0, 5.0)}, path)
    assert zipfile.ZipFile(path).comment.startswith(MARK)
    assert safe_torch_load(path)["w"].tolist() == [1.0, 2.0, 3.0, 4.0]
    edited = tmp_path / "edited.pt"
    edited.write_bytes(_rezipped(path, _bump_last_float))
    # the controls: the CRCs hold, and torch reads the edited number without a word
    assert zipfile.ZipFile(edited).testzip() is None
    assert torch.load(edited, weights_only=True)["w"][-1] != 4.0
    with pytest.raises(BadInput, match=r"edited.pt' does not match the sha256 recorded when "
                                       r"it was written; the file is damaged or was edited"):
        safe_torch_load(edited, what="model")


def test_the_crc_catches_a_flipped_byte_in_a_file_without_checksum(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"w": torch.arange(1.0, 65.0)}, path)  # as earlier versions wrote them
    data = bytearray(path.read_bytes())
    at = data.find(np.arange(1.0, 65.0, dtype=np.float32).tobytes())
    data[at + 130] ^= 1
    path.write_bytes(bytes(data))
    loaded = torch.load(path, weights_only=True)["w"]  # the control: torch loads it changed
    assert not torch.equal(loaded, torch.arange(1.0, 65.0))
    with pytest.raises(BadInput, match=r"holds an entry '.*data/0' that fails its CRC-32 "
                                       r"check; the file is damaged or was edited"):
        safe_torch_load(path, what="model")


def test_sealed_npz_and_npy_sidecar(tmp_path):
    npz = tmp_path / "a.npz"
    atomic_savez(npz, x=np.arange(5.0))
    assert check_zip(npz, "a") is True
    npz.write_bytes(_rezipped(npz, lambda name, data: data[:-8] + np.float64(7).tobytes()))
    with pytest.raises(BadInput, match="does not match the sha256"):
        load_arrays(npz, "data")
    npy = tmp_path / "s.npy"
    atomic_save_npy(npy, np.arange(4.0))
    assert sidecar(npy).read_text().endswith("  s.npy\n")
    npy.write_bytes(npy.read_bytes()[:-8] + np.float64(9).tobytes())
    with pytest.raises(BadInput, match=r"s.npy' does not match the sha256 recorded in "
                                       r"s.npy.sha256"):
        load_arrays(npy, "samples")
    sidecar(npy).unlink()  # a file without a record (an older one, a user's) is read
    assert load_arrays(npy, "samples")[-1] == 9.0


@pytest.mark.parametrize("make, words", [
    (lambda p: np.savez(p, x=np.array([1 + 2j])), "array 'x' has complex dtype"),
    (lambda p: np.savez(p, x=np.array([{}], dtype=object)), "Object arrays cannot be loaded"),
    (lambda p: p.write_bytes(b"PK\x03\x04 truncated"), "not a readable .npy or .npz file"),
    (lambda p: p.write_bytes(b"\x80\x04K\x01."), "not a readable .npy or .npz file"),
])
def test_the_array_reader_refuses_naming_the_file(tmp_path, make, words):
    path = tmp_path / "x.npz"
    make(path)
    with pytest.raises(BadInput, match=words) as err:
        load_arrays(path, "--data")
    assert str(err.value).startswith(f"--data={str(path)!r}")


def _modes(folder):
    return {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, mask, mode):
    from matplotlib.figure import Figure

    old = os.umask(mask)
    try:
        assert file_mode() == mode
        atomic_write_bytes(b"x", tmp_path / "a.bin")
        atomic_torch_save({"a": 1}, tmp_path / "m.pt")
        atomic_save_npy(tmp_path / "s.npy", np.zeros(2))
        fig = Figure(figsize=(1, 1))
        write_gif(fig, tmp_path / "m.gif", 5.0, lambda i: None, np.arange(2), 10)
        with RunDir(tmp_path / "run", command="c", config={}) as run:
            run.write_json("metrics.json", {})
            assert (tmp_path / "run" / ".lock").stat().st_mode & 0o777 == mode
    finally:
        os.umask(old)
    modes = {**_modes(tmp_path), **_modes(tmp_path / "run")}
    assert set(modes) == {"a.bin", "m.pt", "s.npy", "s.npy.sha256", "m.gif", "config.json",
                          "metrics.json"}
    assert set(modes.values()) == {mode}


def test_a_full_disk_is_one_failure_naming_the_file(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RunFailed, match=r"cannot write '.*m.pt': No space left on device"):
        atomic_torch_save({"a": 1}, tmp_path / "m.pt")
    with pytest.raises(RunFailed, match="No space left"):  # config.json: nothing is left
        RunDir(tmp_path / "run", command="c", config={}).__enter__()
    assert list(tmp_path.iterdir()) == []


def _listing(folder):
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}


def test_a_refused_run_writes_nothing_not_even_the_lock(tmp_path):
    out = tmp_path / "run"

    def refuse():
        raise BadInput("checkpoint of another config")

    with pytest.raises(BadInput, match="another config"):
        RunDir(out, command="c", config={}, check=refuse).__enter__()
    assert not out.exists()  # the check came before the folder was made
    with RunDir(out, command="neurodyn fit", config={"steps": 4}):
        pass
    (out / ".lock").write_text("")  # as an earlier version left it behind
    os.utime(out / ".lock", ns=(10**9, 10**9))
    before = _listing(out)
    for run in (RunDir(out, command="flows train", config={}),
                RunDir(out, command="neurodyn fit", config={"steps": 6}, check=refuse)):
        with pytest.raises(BadInput):
            run.__enter__()
        assert _listing(out) == before


def test_the_lock_beside_a_file_is_removed_and_taken_again(tmp_path):
    lock = tmp_path / ".s.npy.lock"
    with out_lock(lock, "out", tmp_path / "s.npy", remove=True):
        assert lock.read_text().strip() == str(os.getpid())
        with pytest.raises(BadInput, match="in use by another run"):
            out_lock(lock, "out", tmp_path / "s.npy").__enter__()
        assert lock.read_text().strip() == str(os.getpid())  # the refusal left it as it was
    assert not lock.exists()
    with out_lock(lock, "out", tmp_path / "s.npy", remove=True):
        assert lock.exists()
    assert not lock.exists()
