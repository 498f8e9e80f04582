"""The ``flows`` command line: ``flows train | sample | eval | experiment``."""

from .commands import main

__all__ = ["main"]
