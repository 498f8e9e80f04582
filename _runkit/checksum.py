"""Checksums of the files the library writes: a sha256 recorded at save and verified at load.

Models, checkpoints and ``.npz`` arrays are zip archives (``torch.save`` and ``np.savez`` write
zips). Their sha256 is recorded in the archive's own comment field, which every zip reader,
torch's and numpy's included, ignores::

    neurodyn-flows sha256 <64 hex digits>

It is the sha256 of every byte before the archive's end record (the entries, their headers and
the central directory), so a byte changed anywhere in them is caught. A zip that carries no
checksum (written by an earlier version of the library, or by another program) is checked
against the CRC-32 that each of its entries records instead. A ``.npy`` array has no room for a
comment: its sha256 goes to a file beside it, ``NAME.npy.sha256``, in the format of
``sha256sum`` (so ``sha256sum -c NAME.npy.sha256`` checks it too), and is verified when present.

Either mismatch is refused with :class:`~_runkit.errors.BadInput` naming the file and saying
that it is damaged or was edited.

Examples
--------
>>> import io, tempfile, pathlib, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("a.txt", "hello")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.zip"
>>> _ = path.write_bytes(seal_zip(buf.getvalue()))
>>> check_zip(path, "model")
True
>>> data = bytearray(path.read_bytes()); data[40] ^= 1; _ = path.write_bytes(bytes(data))
>>> check_zip(path, "model")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
_runkit.errors.BadInput: model='...a.zip' does not match the sha256 recorded when it was ...
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
from pathlib import Path

from .errors import BadInput

__all__ = ["seal_zip", "check_zip", "sidecar", "sidecar_text", "check_sidecar", "file_sha256",
           "MARK"]

#: what opens the comment of a zip the library wrote, before the sha256's hex digits
MARK = b"neurodyn-flows sha256 "
_END = b"PK\x05\x06"  # the signature of a zip's end-of-central-directory record
_END_SIZE = 22  # its length without the comment
_CHUNK = 1 << 20


def _end_record(tail: bytes) -> int | None:
    """Offset, within ``tail`` (the last bytes of a file), of the zip end record whose comment
    reaches exactly the end of the file; None when there is none."""
    at = len(tail)
    while True:
        at = tail.rfind(_END, 0, at)
        if at < 0 or at + _END_SIZE > len(tail):
            return None
        (length,) = struct.unpack("<H", tail[at + 20:at + 22])
        if at + _END_SIZE + length == len(tail):
            return at


def seal_zip(data: bytes) -> bytes:
    """The zip archive ``data`` with its sha256 recorded in the archive comment (replacing any
    comment it had).

    Parameters
    ----------
    data : bytes
        A whole zip archive (what ``torch.save`` or ``np.savez`` wrote to a buffer).

    Returns
    -------
    bytes
        The same entries and central directory; only the end record's comment differs.
    """
    skip = max(len(data) - (_END_SIZE + 0xFFFF), 0)
    end = _end_record(data[skip:])
    if end is None:
        raise ValueError("data is not a zip archive (no end-of-central-directory record)")
    end += skip
    comment = MARK + hashlib.sha256(data[:end]).hexdigest().encode()
    return data[:end + 20] + struct.pack("<H", len(comment)) + comment


def file_sha256(path: str | Path, stop: int | None = None) -> str:
    """The sha256 (hex) of a file's bytes, or of its first ``stop`` bytes."""
    h = hashlib.sha256()
    left = stop
    with open(path, "rb") as fh:
        while left is None or left > 0:
            chunk = fh.read(_CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
    return h.hexdigest()


def _damaged(what: str, path: Path, why: str) -> BadInput:
    return BadInput(f"{what}={str(path)!r} {why}; the file is damaged or was edited")


def _recorded(path: Path) -> tuple[int, str] | None:
    """The end record's offset and the sha256 recorded in a zip's comment, or None when the
    file is not a zip or its comment is not the library's."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(max(size - (_END_SIZE + 0xFFFF), 0))
        tail = fh.read()
    end = _end_record(tail)
    if end is None:
        return None
    comment = tail[end + _END_SIZE:]
    if not comment.startswith(MARK):
        return None
    return end + size - len(tail), comment[len(MARK):].decode("ascii", "replace")


def check_zip(path: str | Path, what: str, crc: bool = True) -> bool:
    """Refuse a zip archive (a torch file, an ``.npz``) that is damaged or was edited.

    A zip the library wrote is checked against the sha256 in its comment (:func:`seal_zip`);
    any other one, when ``crc``, against the CRC-32 of each entry (``zipfile.testzip``).

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        The parameter that named it, used in the message.
    crc : bool
        Check the entries' CRC-32 where no sha256 is recorded (pass False where the reader
        checks them itself as it reads, as numpy's does).

    Returns
    -------
    bool
        Whether a sha256 was recorded (and matched).

    Raises
    ------
    BadInput
        The sha256 or a CRC-32 does not match, or the file is not a readable zip.
    """
    path = Path(path)
    found = _recorded(path)
    if found is not None:
        end, recorded = found
        if file_sha256(path, end) != recorded:
            raise _damaged(what, path, "does not match the sha256 recorded when it was written")
        return True
    if crc:
        try:
            with zipfile.ZipFile(path) as zf:
                bad = zf.testzip()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as err:
            raise _damaged(what, path, f"is not a readable zip archive ({err})") from None
        if bad is not None:
            raise _damaged(what, path, f"holds an entry {bad!r} that fails its CRC-32 check")
    return False


def sidecar(path: str | Path) -> Path:
    """The file that records the sha256 of ``path``: ``NAME.sha256`` beside it.

    >>> sidecar("run/states.npy").name
    'states.npy.sha256'
    """
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def sidecar_text(data: bytes, name: str) -> str:
    """The line ``sha256sum`` writes for ``data`` stored under the file name ``name``.

    >>> sidecar_text(b"", "x.npy")[:16], sidecar_text(b"", "x.npy")[-7:]
    ('e3b0c44298fc1c14', ' x.npy\\n')
    """
    return f"{hashlib.sha256(data).hexdigest()}  {name}\n"


def check_sidecar(path: str | Path, what: str) -> bool:
    """Refuse a file whose ``NAME.sha256`` beside it records another sha256.

    Returns
    -------
    bool
        Whether a sha256 was recorded (and matched); False without the file beside it.
    """
    path = Path(path)
    record = sidecar(path)
    if not record.is_file():
        return False
    try:
        recorded = record.read_text(encoding="ascii").split()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        raise _damaged(what, path, f"has an unreadable {record.name} beside it") from None
    if file_sha256(path) != recorded:
        raise _damaged(what, path, f"does not match the sha256 recorded in {record.name} "
                                   "when it was written")
    return True
