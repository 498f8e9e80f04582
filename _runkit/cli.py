"""The one ``main()`` wrapper of both command lines (:func:`cli_main`), their shared options and
argparse types, and the matplotlib environment of a command.

``cli_main(prog, parser, argv)`` parses ``argv`` with ``parser`` (whose sub-commands set
``func=handler`` through ``set_defaults``), calls ``handler(args)`` and prints for a person what it
did, its few key numbers and where the rest is (:mod:`_runkit.summary`, at most three lines on
stdout); with ``--json`` it prints what the handler returns as one JSON line on stdout instead
(and the line saying what was written on stderr). ``--version`` prints the package's version;
``--config FILE`` reruns a recorded run (:mod:`_runkit.rerun`). Every exception is mapped to one
line on stderr and an exit code:

==========================  ====  =================================================
outcome                     code  stderr
==========================  ====  =================================================
success                     0     nothing
``BadInput`` / usage error  2     ``PROG CMD: error: MESSAGE``
``RunFailed``/``Diverged``  1     ``PROG CMD: failed: MESSAGE``
any other exception         1     ``PROG CMD: failed: unexpected TYPE: MESSAGE ...``
``KeyboardInterrupt``       130   ``PROG CMD: interrupted: MESSAGE`` (what was saved)
stdout closed (``| head``)  141   nothing
==========================  ====  =================================================

Any other exception -- a ``ValueError`` or ``TypeError`` included -- is a bug, not the caller's
fault: the library refuses input only with :class:`~_runkit.errors.BadInput`.

An ``MPLBACKEND`` that matplotlib rejects is bad input (2); when matplotlib's default config
folder is not writable, ``MPLCONFIGDIR`` is pointed at a private temporary folder.

No traceback is printed unless ``--debug`` is given (before or after the sub-command), and then
it precedes the same line and exit code. A handler that saves a checkpoint on Ctrl-C re-raises
``KeyboardInterrupt("checkpoint at step 120 of 1000 saved; rerun to resume")``: its message is
the line's end. The handler runs inside :func:`~_runkit.runtime.catch_interrupts`, so a Ctrl-C
whose ``KeyboardInterrupt`` was dropped in a native callback (numba compiling) is still seen by
:func:`~_runkit.runtime.check_interrupt` and, at the latest, ends the command with 130.

Library code never imports this module: what a library call needs at run time (threads,
Ctrl-C, the progress bar) is in :mod:`_runkit.runtime`, the notebook display of figures in
:mod:`_runkit.notebook`.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser(prog="demo")
>>> sub = p.add_subparsers(dest="command", required=True)
>>> s = sub.add_parser("square")
>>> _ = s.add_argument("--x", type=float, required=True)
>>> def square(a):
...     if a.x < 0:
...         raise BadInput(f"x={a.x} is not allowed; it must be >= 0", param="x")
...     return {"y": a.x ** 2}
>>> s.set_defaults(func=square)
>>> cli_main("demo", p, ["square", "--x", "3"])
demo square: done in ... s
  y 9
  every number: rerun with --json
0
>>> cli_main("demo", p, ["square", "--x", "3", "--json"])
{"y": 9.0}
0
>>> import contextlib, io
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     code = cli_main("demo", p, ["square", "--x", "-1"])
>>> code, err.getvalue()
(2, 'demo square: error: x=-1.0 is not allowed; it must be >= 0\\n')
>>> with contextlib.redirect_stderr(io.StringIO()) as err:
...     code = cli_main("demo", p, ["square", "--x", "abc"])
>>> code, err.getvalue()
(2, "demo square: error: argument --x: invalid float value: 'abc'\\n")
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import select
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import BadInput, RunFailed, exit_code, release_start
from .files import to_jsonable
from .rerun import command_name, expand_config, subparser_action
from .rundir import _ARGV
from .runtime import catch_interrupts, check_interrupt
from .summary import Headline, human_lines

__all__ = ["cli_main", "add_sweep_arguments", "sweep_options",
           "written_summary", "out_path", "worker_count", "HelpFormatter", "EXIT_BROKEN_PIPE"]


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    action = subparser_action(parser)
    if action is not None:
        for sub in dict.fromkeys(action.choices.values()):
            found.extend(_all_parsers(sub))
    return found



def _refuse(message: str) -> None:
    raise BadInput(message)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` of both command lines: ``(default: X)`` appended once, where it informs.

    Not for an option whose help already states its default, a flag (``store_true`` /
    ``store_false``: the flag's presence is the choice, so ``--no-topology`` is not "(default:
    True)"), a required option, or a default of None (the help says what happens without it).
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (action.default is None or action.default is argparse.SUPPRESS
                or isinstance(action.default, bool) or action.nargs == 0 or action.required
                or "default" in text.lower() or action.default == []):
            return action.help
        return super()._get_help_string(action)


def _prepare(parser: argparse.ArgumentParser, prog: str) -> None:
    """Usage errors raise ``BadInput``; ``--debug`` and ``--json`` are accepted everywhere,
    ``--version`` on the program; every parser's help is formatted by :class:`HelpFormatter`
    and its usage names the sub-command as ``COMMAND``; every command with ``--out`` (it
    records its run in a ``config.json``) takes ``--config`` (:func:`expand_config`)."""
    if "--version" not in parser._option_string_actions:
        from .rundir import library_version

        parser.add_argument("--version", action="version", version=f"{prog} {library_version()}",
                            help="print the package's version and exit")
    for i, p in enumerate(_all_parsers(parser)):
        p.error = _refuse  # type: ignore[method-assign]
        p.formatter_class = HelpFormatter
        sub = subparser_action(p)
        if sub is not None and sub.metavar is None:
            sub.metavar = "COMMAND"
        for flag, text in (("--debug", "on an error, print its traceback before the one-line "
                                       "message"),
                           ("--json", "print every number of the result as one JSON line on "
                                      "stdout (the summary goes to stderr)")):
            if flag not in p._option_string_actions:
                p.add_argument(flag, action="store_true",
                               default=False if i == 0 else argparse.SUPPRESS, help=text)
        if "--out" in p._option_string_actions and "--config" not in p._option_string_actions:
            p.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                           help="rerun the run recorded in FILE (its config.json, or the .json "
                                "beside a sample): its command line, then the options given "
                                "here, which override it (give another --out for a new run)")





#: the line's end when Ctrl-C was dropped in native code and noticed only when the work was done
_LATE = ("Ctrl-C arrived while native code ran and took effect only after the command's work; "
         "the outputs it wrote are complete")


def _writable(folder: str) -> bool:
    """Whether ``folder`` exists (or can be made) and is writable."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _matplotlib_environment() -> None:
    """Refuse an ``MPLBACKEND`` matplotlib rejects; give it a writable config folder.

    When the default config or cache folder of matplotlib (under ``$HOME``) is not writable,
    ``MPLCONFIGDIR`` is pointed at a private folder in the temporary directory, kept between
    runs, instead of matplotlib warning about it on every run. Nothing is done once matplotlib
    is imported or when ``MPLCONFIGDIR`` is set.
    """
    if "matplotlib" in sys.modules:
        return
    if not os.environ.get("MPLCONFIGDIR") and sys.platform.startswith(("linux", "freebsd")):
        home = os.path.expanduser("~")
        bases = (os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"),
                 os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"))
        if not all(_writable(os.path.join(b, "matplotlib")) for b in bases):
            folder = os.path.join(tempfile.gettempdir(), f"matplotlib-{os.getuid()}")
            with contextlib.suppress(OSError):
                os.makedirs(folder, mode=0o700, exist_ok=True)
            if _writable(folder) and os.stat(folder).st_uid == os.getuid():
                os.environ["MPLCONFIGDIR"] = folder
    backend = os.environ.get("MPLBACKEND")
    if backend:
        try:
            import matplotlib  # noqa: F401 - it validates MPLBACKEND on import
        except ValueError as err:
            if "backend" not in str(err):
                raise
            raise BadInput(f"environment variable MPLBACKEND={backend!r} is not a matplotlib "
                           "backend; unset it or set it to one such as Agg") from None


def _stdout_broken(err: BaseException) -> bool:
    """Whether ``err`` is a closed standard output (``cmd | head``); if so stdout is pointed
    at the null device, so that the interpreter's final flush stays quiet."""
    if not isinstance(err, BrokenPipeError):
        return False
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    if hasattr(select, "poll"):  # a pipe without reader reports POLLERR on its writing end
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        if not any(ev & select.POLLERR for _, ev in poll.poll(0)):
            return False
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return True


#: exit status when standard output was closed early: 128 + SIGPIPE, what a shell reports
EXIT_BROKEN_PIPE = 141


def _name_too_long(err: BaseException, argv: Sequence[str]) -> BaseException:
    """A file name the file system refuses as too long becomes ``BadInput`` naming the option
    whose value it comes from (``--out``); any other exception is returned as it is."""
    if not (isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG):
        return err
    path = str(err.filename or "")
    for i, token in enumerate(argv):
        option, _, value = token.partition("=")
        if not value and i + 1 < len(argv):
            value = argv[i + 1]
        if option.startswith("--") and value and value in path:
            return BadInput(f"{option}={value!r}: a file name in it is too long for the file "
                            "system (at most 255 bytes per name)")
    return BadInput(f"{path!r}: file name too long for the file system")


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text


def cli_main(prog: str, parser: argparse.ArgumentParser,
             argv: Sequence[str] | None = None,
             headlines: Mapping[str, Headline] | None = None) -> int:
    """Run one command line; return its exit code (see the module docstring).

    Parameters
    ----------
    prog : str
        Program name used at the start of every message (``"flows"``).
    parser : argparse.ArgumentParser
        The parser; each (sub-)command sets ``func`` (``parser.set_defaults(func=...)``), a
        callable taking the parsed namespace and returning a JSON-able result or None.
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).
    headlines : mapping of str to headline, optional
        Each command's key numbers (``"fit"`` or ``"experiment width"`` to ``(label, dotted
        path)`` pairs into its result, :mod:`_runkit.summary`), printed beneath the line
        saying what it wrote.

    Returns
    -------
    int
        0 success, 1 failed run, 2 bad input, 130 interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    _prepare(parser, prog)
    command = command_name(prog, parser, argv)
    token = _ARGV.set(tuple(argv))
    try:
        release_start()
        try:
            argv = expand_config(prog, parser, argv)  # --config FILE: the recorded run's line
            _ARGV.set(tuple(argv))
            command = command_name(prog, parser, argv)
            args = parser.parse_args(argv)
        except SystemExit as stop:  # --help, --version
            return int(stop.code or 0) if not isinstance(stop.code, str) else 2
        func = getattr(args, "func", None)
        if func is None:
            raise BadInput(f"a command is required; see {command} --help")
        _matplotlib_environment()
        start = time.perf_counter()
        with catch_interrupts():
            result = func(args)
            check_interrupt(_LATE)
        _report(command, prog, args, result, time.perf_counter() - start, headlines or {})
    except KeyboardInterrupt as err:
        if debug:
            traceback.print_exc()
        msg = _one_line(err)
        print(f"{command}: interrupted" + (f": {msg}" if msg else ""), file=sys.stderr)
        return exit_code(err)
    except Exception as err:  # noqa: BLE001 - every exception becomes one line and a code
        if _stdout_broken(err):
            return EXIT_BROKEN_PIPE
        err = _name_too_long(err, argv)
        if debug:
            traceback.print_exc()
        msg = _one_line(err) or type(err).__name__
        if isinstance(err, BadInput):
            line = f"error: {msg}"
        elif isinstance(err, RunFailed):
            line = f"failed: {msg}"
        else:
            line = (f"failed: unexpected {type(err).__name__}: {msg}"
                    + ("" if debug else " (rerun with --debug for the traceback)"))
        print(f"{command}: {line}", file=sys.stderr)
        return exit_code(err)
    finally:
        _ARGV.reset(token)
    return 0


def _report(command: str, prog: str, args: argparse.Namespace, result: Any, seconds: float,
            headlines: Mapping[str, Headline]) -> None:
    """Print a successful command's outcome: the JSON line (``--json``) with the written line
    on stderr, or the lines for a person on stdout (:func:`_runkit.summary.human_lines`)."""
    out = getattr(args, "out", None)
    done = written_summary(command, out, seconds)
    if getattr(args, "json", False):
        if result is not None:
            print(json.dumps(to_jsonable(result), sort_keys=True, allow_nan=False), flush=True)
        if done:
            print(done, file=sys.stderr, flush=True)
        return
    headline = headlines.get(command[len(prog):].strip())
    jsonable = to_jsonable(result) if result is not None else None
    for line in human_lines(command, jsonable, done, seconds, out, headline):
        print(line, flush=True)


def written_summary(command: str, out: str | os.PathLike | None, seconds: float) -> str:
    """The human line a command prints on stderr when it succeeds: what it wrote, and where.

    Parameters
    ----------
    command : str
        ``"neurodyn fit"``.
    out : str or path or None
        The command's ``--out`` (a run directory, or a file such as ``flows sample``'s); None
        or a path that does not exist: no line.
    seconds : float
        The command's wall time.

    Returns
    -------
    str
        Empty when there is nothing to say.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("model.pt", "metrics.json", "loss.png", ".lock"):
    ...     _ = (d / name).write_text("")
    >>> written_summary("flows train", d, 3.21).replace(str(d), "RUN")
    'flows train: done in 3.2 s; wrote RUN/: 1 figure (loss.png); metrics.json, model.pt'
    """
    if out is None:
        return ""
    path = Path(out)
    if path.is_file():
        side = path.with_suffix(".json")
        extra = f" and {side.name}" if side.is_file() and side != path else ""
        return f"{command}: done in {seconds:.1f} s; wrote {path}{extra}"
    if not path.is_dir():
        return ""
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir()
                   if not p.name.startswith("."))
    figures = [n for n in names if n.endswith((".png", ".svg", ".gif"))]
    others = [n for n in names if n not in figures]

    def listed(items: list[str]) -> str:
        return ", ".join(items[:6]) + (f" and {len(items) - 6} more" if len(items) > 6 else "")

    parts = []
    if figures:
        parts.append(f"{len(figures)} figure{'s' if len(figures) > 1 else ''} "
                     f"({listed(figures)})")
    if others:
        parts.append(listed(others))
    return f"{command}: done in {seconds:.1f} s; wrote {path}/: " + "; ".join(parts)


MAX_WORKERS = 1024


def out_path(text: str) -> Path:
    """``argparse`` type of ``--out``: a non-empty path (``Path("")`` would be the working
    directory).

    >>> out_path("run")
    PosixPath('run')
    >>> out_path(" ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: ' ' is not allowed; --out must name a directory
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; --out must name a directory")
    return Path(text)


def worker_count(text: str) -> int:
    """``argparse`` type of ``--workers``: an integer in ``[0, MAX_WORKERS]``.

    >>> worker_count("2")
    2
    >>> worker_count("100000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: workers=100000 is not allowed; it must be an integer in [0, 1024]
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"workers={text} is not allowed; it must be an integer "
                                         f"in [0, {MAX_WORKERS}]")
    return value


def add_sweep_arguments(parser: argparse.ArgumentParser,
                        without: str = "a local cluster of one worker process per core") -> None:
    """Add ``--workers`` and ``--scheduler`` to an argparse parser.

    Parameters
    ----------
    parser : the (sub-)command's parser.
    without : what the command does when neither option is given (stated in the help).
    """
    parser.add_argument("--workers", type=worker_count, default=None,
                        help="worker processes of a local Dask cluster; 0 runs the cells in "
                             f"this process (default: {without})")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="address of an existing Dask scheduler, e.g. tcp://host:8786 "
                             "(default: none)")


def sweep_options(args: argparse.Namespace) -> dict:
    """``workers`` and ``scheduler`` from parsed arguments (for :func:`_runkit.sweep.run_sweep`).

    >>> sweep_options(argparse.Namespace(workers=2))
    {'workers': 2, 'scheduler': None}
    """
    return {"workers": getattr(args, "workers", None),
            "scheduler": getattr(args, "scheduler", None)}
