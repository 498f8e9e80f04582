"""The command-line reference, rendered from the argparse parsers themselves.

For each command (``neurodyn``, ``flows``) the parser tree is built (``build_parser()``) and
walked; each (sub)command's text is what ``<command> ... --help`` prints, obtained by running
the command's own ``main([..., "--help"])`` with its output captured, at a fixed width of
:data:`COLUMNS` columns. Nothing is retyped, so the reference cannot drift from ``--help``;
``tests/project/test_docs.py`` checks it.

In a page::

    ```{cli-reference} neurodyn
    ```
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

#: the width ``--help`` is rendered at: ``COLUMNS=80 neurodyn fit --help`` prints the same text,
#: and so does ``neurodyn fit --help > FILE`` where ``COLUMNS`` is not set
COLUMNS = 80

#: command -> the module holding its ``build_parser`` and ``main``
COMMANDS = {"neurodyn": "neurodyn.cli", "flows": "flows.cli.commands"}


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> list[tuple[str, ...]]:
    """Every command path of ``parser``'s tree, the root ``()`` first, in ``--help``'s order."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += subcommands(sub, (*path, name))
    return found


def help_text(command: str, path: tuple[str, ...]) -> str:
    """What ``command *path --help`` prints (standard output), at :data:`COLUMNS` columns."""
    module = importlib.import_module(COMMANDS[command])
    out = io.StringIO()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(COLUMNS)
    try:
        with contextlib.redirect_stdout(out):
            code = module.main([*path, "--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    if code != 0:
        raise RuntimeError(f"{command} {' '.join(path)} --help exited {code}")
    return out.getvalue()


def reference(command: str) -> list[tuple[tuple[str, ...], str]]:
    """``(path, --help text)`` of every (sub)command of ``command``."""
    parser = importlib.import_module(COMMANDS[command]).build_parser()
    return [(path, help_text(command, path)) for path in subcommands(parser)]


class CliReference(SphinxDirective):
    """One section per (sub)command, titled by its command line, holding its ``--help``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        command = self.arguments[0]
        out = []
        for path, text in reference(command):
            title = " ".join((command, *path))
            section = nodes.section(ids=[nodes.make_id("cli " + title)], names=[title])
            section += nodes.title(text=title)
            block = nodes.literal_block(text, text, classes=["cli-help"])
            block["language"] = "text"
            section += block
            out.append(section)
        return out


def setup(app):
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
