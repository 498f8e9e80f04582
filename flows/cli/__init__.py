"""The ``flows`` command line: ``flows train | sample | eval | experiment`` (:func:`main`).

Building its parser imports no torch; each command imports what it runs.
"""

from .commands import main

__all__ = ["main"]
