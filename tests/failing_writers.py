"""Writers that fail mid-way, for the tests of atomic artifacts (imported by plain name)."""

from pathlib import Path

#: what a failing writer leaves in its file before it raises
PARTIAL = b"PK\x03\x04 partial"


def broken_writer(target, *args, **kwargs):
    """A writer that writes a few bytes to its file (object or name), then fails."""
    if hasattr(target, "write"):
        target.write(PARTIAL)
    else:
        Path(target).write_bytes(PARTIAL)
    raise OSError("disk full")


def broken_method(self, target, *args, **kwargs):
    """:func:`broken_writer` as a method (``Figure.savefig``)."""
    broken_writer(target)
