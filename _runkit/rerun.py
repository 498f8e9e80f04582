"""``--config FILE``: rerun a recorded run (its ``config.json``) through the command line it
recorded, with the options given now overriding it (:func:`expand_config`), and the names of the
sub-commands a command line runs (:func:`command_name`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .errors import BadInput

__all__ = ["expand_config", "command_name", "subparser_action"]


def subparser_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _command_path(parser: argparse.ArgumentParser, argv: Sequence[str]
                  ) -> tuple[list[str], list[str], list[str], argparse.ArgumentParser]:
    """Split ``argv`` into the options before the sub-commands, the sub-command names, the
    tokens after them, and the innermost sub-command's parser."""
    action, leaf, at, end = subparser_action(parser), parser, [], 0
    for i, token in enumerate(argv):
        if action is None:
            break
        if token in action.choices:
            at.append(i)
            leaf = action.choices[token]
            action, end = subparser_action(leaf), i + 1
    path = [argv[i] for i in at]
    before = [t for i, t in enumerate(argv[:end]) if i not in at]
    return before, path, list(argv[end:]), leaf


def _split_tokens(leaf: argparse.ArgumentParser, tokens: Sequence[str]
                  ) -> tuple[list[str], list[str]]:
    """The positional tokens and the option tokens (with their values) among a sub-command's
    arguments."""
    positional, options = [], []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, _ = token.partition("=")
        action = leaf._option_string_actions.get(name) if token.startswith("-") else None
        if action is None:
            (options if token.startswith("-") else positional).append(token)
            i += 1
            continue
        if eq or action.nargs == 0:
            taken = [token]
        elif action.nargs in (None, "?") or isinstance(action.nargs, int):
            count = 1 if action.nargs in (None, "?") else action.nargs
            taken = tokens[i:i + 1 + count]
            if action.nargs == "?" and len(taken) > 1 and taken[1].startswith("-"):
                taken = taken[:1]
        else:  # "*" or "+": values up to the next option
            j = i + 1
            while j < len(tokens) and not tokens[j].startswith("-"):
                j += 1
            taken = tokens[i:j]
        options.extend(taken)
        i += len(taken)
    return positional, options


def _take_config(argv: list[str]) -> str | None:
    """Remove ``--config FILE`` (or ``--config=FILE``) from ``argv``; return FILE."""
    for i, token in enumerate(argv):
        if token.startswith("--config="):
            del argv[i]
            return token.partition("=")[2]
        if token == "--config":
            if i + 1 == len(argv) or argv[i + 1].startswith("-"):
                raise BadInput("--config needs a FILE: a run's config.json")
            value = argv[i + 1]
            del argv[i:i + 2]
            return value
    return None


def expand_config(prog: str, parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """The command line that ``--config FILE`` stands for: the run's recorded one, then ours.

    ``FILE`` is a run's ``config.json`` (or a sample's ``.json``), whose ``argv`` is the command
    line it ran. The result is that command line's options before the sub-command, ours, the
    recorded sub-command (ours may stop short of it: ``flows experiment --config FILE``), our
    positional arguments (or else the recorded ones), the recorded options, and ours last, so
    that an option given here overrides the recorded one. The expanded line is what the rerun
    records, so its ``config.json`` reruns in turn. Without ``--config``, ``argv`` is returned
    as it is.

    Raises
    ------
    BadInput
        ``FILE`` is missing or not a run record, was written by another command, by a run
        started from Python (no command line recorded), or its command line runs another
        command than the one it records (an edited file).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = argparse.ArgumentParser(prog="demo")
    >>> sub = p.add_subparsers(dest="command")
    >>> run = sub.add_parser("run")
    >>> _ = run.add_argument("--out"); _ = run.add_argument("--n", type=int, default=1)
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "config.json"
    >>> _ = f.write_text(json.dumps({"command": "demo run", "argv": ["run", "--n", "5",
    ...                                                            "--out", "a"]}))
    >>> expand_config("demo", p, ["run", "--config", str(f), "--out", "b"])
    ['run', '--n', '5', '--out', 'a', '--out', 'b']
    """
    argv = list(argv)
    file = _take_config(argv)
    if file is None:
        return argv
    globals_, path, rest, _ = _command_path(parser, argv)
    recorded = _recorded_argv(file, " ".join([prog, *path]), prog, parser)
    rec_globals, rec_path, rec_rest, leaf = _command_path(parser, recorded)
    positional, options = _split_tokens(leaf, rest)
    rec_positional, rec_options = _split_tokens(leaf, rec_rest)
    return [*rec_globals, *globals_, *rec_path, *(positional or rec_positional), *rec_options,
            *options]


def _recorded_argv(file: str, command: str, prog: str, parser: argparse.ArgumentParser
                   ) -> list[str]:
    """The command line recorded in a run's ``config.json``, checked to be ``command``'s: the
    recorded command must be the one being run (or one of its sub-commands) and the recorded
    command line must run that recorded command (a file whose ``argv`` was edited to run
    another is refused)."""
    from .files import read_json

    record = read_json(file, what="--config")
    if not isinstance(record, dict) or not isinstance(record.get("command"), str):
        raise BadInput(f"--config={file!r} is not a run's config.json (it has no command)")
    if not (record["command"] == command or record["command"].startswith(command + " ")):
        raise BadInput(f"--config={file!r} records a {record['command']!r} run; rerun it with "
                       f"{record['command']} --config {file}")
    recorded = record.get("argv")
    if not (isinstance(recorded, list) and all(isinstance(t, str) for t in recorded)):
        raise BadInput(f"--config={file!r} records no command line (a run started from Python "
                       f"records argv null); rerun it from Python with its 'config'")
    runs = command_name(prog, parser, recorded)
    rest = record["command"][len(runs):].split()  # positional words: "neurodyn sweep kappa"
    if not (record["command"] == runs or (record["command"].startswith(runs + " ")
                                          and all(word in recorded for word in rest))):
        raise BadInput(f"--config={file!r}: its 'argv' runs {runs!r} but its 'command' says "
                       f"{record['command']!r}; the file was edited; rerun from an unedited "
                       "config.json")
    return recorded


def command_name(prog: str, parser: argparse.ArgumentParser, argv: Sequence[str]) -> str:
    """``prog`` followed by the sub-command names found in ``argv``."""
    words = [prog]
    action = subparser_action(parser)
    for token in argv:
        if action is None:
            break
        if token in action.choices:
            words.append(token)
            action = subparser_action(action.choices[token])
    return " ".join(words)
