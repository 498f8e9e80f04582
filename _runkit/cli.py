"""The one ``main()`` wrapper of both command lines, its Ctrl-C handling, the progress bar and the
thread count of library calls.

``cli_main(prog, parser, argv)`` parses ``argv`` with ``parser`` (whose sub-commands set
``func=handler`` through ``set_defaults``), calls ``handler(args)`` and prints for a person what it
did, its few key numbers and where the rest is (:mod:`_runkit.summary`, at most three lines on
stdout); with ``--json`` it prints what the handler returns as one JSON line on stdout instead
(and the line saying what was written on stderr). ``--version`` prints the package's version.
Every exception is mapped to one line on stderr and an exit code:

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

An ``MPLBACKEND`` that matplotlib rejects is bad input (2); when matplotlib's default config
folder is not writable, ``MPLCONFIGDIR`` is pointed at a private temporary folder.

No traceback is printed unless ``--debug`` is given (before or after the sub-command), and then
it precedes the same line and exit code. A handler that saves a checkpoint on Ctrl-C re-raises
``KeyboardInterrupt("checkpoint at step 120 of 1000 saved; rerun to resume")``: its message is
the line's end. The handler runs inside :func:`catch_interrupts`, so a Ctrl-C whose
``KeyboardInterrupt`` was dropped in a native callback (numba compiling) is still seen by
:func:`check_interrupt` and, at the latest, ends the command with 130.

Ctrl-C that is not lost in native code
--------------------------------------
SIGINT is recorded in a flag as well as raised. Python runs a signal handler at the next
bytecode of the main thread. When SIGINT arrives while native code runs (numba compiling through
llvmlite, a C library), that next bytecode can be a ``ctypes`` callback, and a
``KeyboardInterrupt`` raised there is printed as "Exception ignored on calling ctypes callback"
and dropped: the run goes on and would end with exit 0.

Inside ``with catch_interrupts():`` (entered by :func:`cli_main`) the SIGINT handler first sets
a flag, then raises ``KeyboardInterrupt`` as usual; the dropped exception's report on stderr is
left out (the run's one line says what happened). Long work calls :func:`check_interrupt` after
each unit of work (a fit step, the evaluation after a loop), which raises ``KeyboardInterrupt``
again if the flag is set, so a dropped interrupt still ends the run with its checkpoint saved;
``cli_main`` checks the flag once more before returning 0.

Outside the block, outside the main thread, or when SIGINT is ignored (``SIG_IGN``) or handled
by someone else, nothing changes and :func:`check_interrupt` never raises.

The progress bar
----------------
:func:`progress` is the one progress bar of long loops (fits, trainings, sweeps): tqdm on stderr
when it is a terminal (and the ``progress`` extra is installed), a silent stand-in with the
same methods otherwise; in a Jupyter kernel it is ``tqdm.auto``'s bar (a widget when ipywidgets is
installed), on by default and kept when finished.

Threads of library calls
------------------------
:func:`with_threads` gives a library function (``neurodyn.fit``, ``flows.train``, ...) a keyword
``threads``: the call runs with that many torch CPU threads and puts the caller's count back
afterwards. The default, :data:`DEFAULT_THREADS` (1, the command lines' ``--threads`` default),
is the fastest at the sizes these libraries work at; inside another such call the enclosing
call's choice is kept.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser(prog="demo")
>>> sub = p.add_subparsers(dest="command", required=True)
>>> s = sub.add_parser("square")
>>> _ = s.add_argument("--x", type=float, required=True)
>>> def square(a):
...     if a.x < 0:
...         raise BadInput(f"x={a.x} is not allowed; it must be >= 0")
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
>>> with catch_interrupts():
...     interrupted()
False
>>> check_interrupt("nothing pending")  # no SIGINT arrived: returns None
>>> bar = progress(total=10, initial=2, desc="train", enabled=False)
>>> bar.update(3); bar.set_postfix_str("loss 0.1"); bar.close()
>>> bar.n
5
>>> [x for x in progress(range(3), enabled=False)]
[0, 1, 2]
>>> import torch
>>> @with_threads
... def count():
...     return torch.get_num_threads()
>>> before = torch.get_num_threads()
>>> count(), count(threads=2), torch.get_num_threads() == before
(1, 2, True)
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import inspect
import json
import os
import select
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import BadInput, RunFailed, exit_code, release_start
from .files import to_jsonable
from .rundir import _ARGV
from .summary import Headline, human_lines

__all__ = ["cli_main", "add_sweep_arguments", "sweep_options", "sweep_workers", "catch_interrupts",
           "interrupted", "check_interrupt", "progress", "in_notebook", "notebook_figure",
           "with_threads", "written_summary", "expand_config", "DEFAULT_THREADS"]

#: torch CPU threads of a library call that names none (the command lines' ``--threads`` default)
DEFAULT_THREADS = 1
_threads_chosen = threading.local()

_state = {"hit": False}


def _on_sigint(signum, frame):
    _state["hit"] = True
    raise KeyboardInterrupt


def _quiet_unraisable(previous):
    """A ``sys.unraisablehook`` that drops the recorded interrupt (its report would be a
    traceback besides the one line) and passes everything else to ``previous``."""

    def hook(unraisable):
        if _state["hit"] and issubclass(unraisable.exc_type, KeyboardInterrupt):
            return
        previous(unraisable)

    return hook


@contextlib.contextmanager
def catch_interrupts() -> Iterator[None]:
    """Within the block SIGINT sets the flag read by :func:`interrupted` and raises.

    The flag is cleared on entry and the previous handler restored on exit. Nested blocks
    leave the outer one in charge.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    _state["hit"] = False
    previous_hook = sys.unraisablehook
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_unraisable(previous_hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = previous_hook


def interrupted() -> bool:
    """Whether SIGINT arrived inside the current :func:`catch_interrupts` block."""
    return _state["hit"] and signal.getsignal(signal.SIGINT) is _on_sigint


def check_interrupt(message: str = "") -> None:
    """Raise ``KeyboardInterrupt(message)`` if SIGINT arrived (see :func:`interrupted`).

    Call it after a unit of work whose own ``KeyboardInterrupt`` may have been dropped in a
    native callback; the caller's usual interrupt handling (save the checkpoint, say what it
    holds) then runs.
    """
    if interrupted():
        raise KeyboardInterrupt(message)


class _Silent:
    """Same calls as a tqdm bar; counts but shows nothing."""

    def __init__(self, iterable: Iterable | None, total: int | None, initial: int):
        self._it = iterable
        self.total = total
        self.n = initial

    def __iter__(self) -> Iterator:
        for item in self._it if self._it is not None else ():
            yield item
            self.n += 1

    def update(self, n: int = 1) -> None:
        """Advance the count by ``n``."""
        self.n += n

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Ignore the status text."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Ignore the status values."""

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        """Ignore the label."""

    def refresh(self) -> None:
        """Nothing to draw."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False


def progress(iterable: Iterable | None = None, *, total: int | None = None, initial: int = 0,
             desc: str = "", enabled: bool | None = None):
    """A progress bar on stderr, or a silent stand-in with the same methods.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate; None for a bar driven by ``update(n)``.
    total : int, optional
        Number of items (steps) in all.
    initial : int
        Count already done (a resumed run).
    desc : str
        Label.
    enabled : bool, optional
        Force on or off; by default on when stderr is a terminal or the call runs in a Jupyter
        kernel, and tqdm is installed.

    Returns
    -------
    tqdm or stand-in
        Supports ``update``, ``set_postfix_str``, ``set_postfix``, ``close``, iteration and
        ``with``. In a Jupyter kernel the bar is ``tqdm.auto``'s and stays when finished.
    """
    notebook = in_notebook()
    if enabled is None:
        enabled = notebook or sys.stderr.isatty()
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:  # the optional "progress" extra is not installed
            return _Silent(iterable, total, initial)
        if notebook:
            return _notebook_bar(tqdm)(iterable, total=total, initial=initial, desc=desc,
                                       leave=True)
        return tqdm(iterable, total=total, initial=initial, desc=desc, file=sys.stderr,
                    leave=False, dynamic_ncols=True)
    return _Silent(iterable, total, initial)


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython ``ZMQInteractiveShell``).

    Returns
    -------
    bool
    """
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    try:
        name = type(get()).__name__ if get is not None else ""
    except Exception:  # noqa: BLE001 - IPython half imported: not a kernel
        return False
    return name == "ZMQInteractiveShell"


def notebook_figure(fig, created: bool = True):
    """``fig``, made to display exactly once in a Jupyter notebook; returns it.

    A figure the library created (stand-alone, unknown to pyplot, so no backend shows it) gets
    a ``_repr_png_``: returned as a cell's value it shows as a PNG, with or without ``%matplotlib
    inline``. A figure of axes the caller passed (``created=False``) is the caller's: where it
    is pyplot's (``plt.subplots``), pyplot shows it when the cell ends, and returned as the
    cell's value it would show a second time; in a Jupyter kernel the PNG display of figures
    then closes a pyplot figure once it has shown it, so it shows once either way.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure a plotting function returns.
    created : bool
        Whether the plotting function created it (``ax=None``).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig`` itself.
    """
    if created:
        fig._repr_png_ = functools.partial(_figure_png, fig)
    elif getattr(fig.canvas, "manager", None) is not None and in_notebook():
        _show_pyplot_figures_once()
    return fig


def _figure_png(fig) -> bytes:
    """The figure as PNG bytes (tight bounding box, as notebooks show figures)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _show_pyplot_figures_once() -> None:
    """Make the kernel's PNG display of figures close a pyplot figure it has shown, so the
    inline backend does not show it again when the cell ends."""
    from IPython import get_ipython
    from matplotlib.figure import Figure

    def show(fig):
        data = _figure_png(fig)
        if getattr(fig.canvas, "manager", None) is not None:
            import matplotlib.pyplot as plt

            plt.close(fig)
        return data

    get_ipython().display_formatter.formatters["image/png"].for_type(Figure, show)


def _notebook_bar(text_bar):
    """``tqdm.auto``'s bar class where ipywidgets is installed (a widget), else ``text_bar``
    (text on the cell's stderr) instead of tqdm.auto's warning about missing widgets."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
    except ImportError:
        return text_bar
    return tqdm


def with_threads(func):
    """``func`` with a keyword-only argument ``threads`` (torch CPU threads during the call).

    ``threads=None`` means :data:`DEFAULT_THREADS`, or the count an enclosing call of such a
    function chose; the caller's ``torch.get_num_threads()`` is restored when the call returns
    or raises. A count that is not an integer in [1, 1024] raises
    :class:`~_runkit.errors.BadInput` naming ``threads``.

    Parameters
    ----------
    func : callable
        The library function.

    Returns
    -------
    callable
        The wrapped function (same name, docstring and module; its signature shows
        ``threads``).
    """

    @functools.wraps(func)
    def wrapper(*args, threads: int | None = None, **kwargs):
        import torch

        outer = getattr(_threads_chosen, "depth", 0)
        if threads is None and outer:
            return func(*args, **kwargs)
        if threads is None:
            threads = DEFAULT_THREADS
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
            raise BadInput(f"threads={threads!r} is not allowed; it must be an integer in "
                           "[1, 1024]")
        before = torch.get_num_threads()
        _threads_chosen.depth = outer + 1
        try:
            if threads != before:
                torch.set_num_threads(threads)
            return func(*args, **kwargs)
        finally:
            _threads_chosen.depth = outer
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)

    sig = inspect.signature(func)
    extra = inspect.Parameter("threads", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="int | None")
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    wrapper.__signature__ = sig.replace(parameters=[*params[:at], extra, *params[at:]])
    return wrapper


def _subparser_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    action = _subparser_action(parser)
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
        sub = _subparser_action(p)
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


def _command_path(parser: argparse.ArgumentParser, argv: Sequence[str]
                  ) -> tuple[list[str], list[str], list[str], argparse.ArgumentParser]:
    """Split ``argv`` into the options before the sub-commands, the sub-command names, the
    tokens after them, and the innermost sub-command's parser."""
    action, leaf, at, end = _subparser_action(parser), parser, [], 0
    for i, token in enumerate(argv):
        if action is None:
            break
        if token in action.choices:
            at.append(i)
            leaf = action.choices[token]
            action, end = _subparser_action(leaf), i + 1
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
    runs = _command(prog, parser, recorded)
    rest = record["command"][len(runs):].split()  # positional words: "neurodyn sweep kappa"
    if not (record["command"] == runs or (record["command"].startswith(runs + " ")
                                          and all(word in recorded for word in rest))):
        raise BadInput(f"--config={file!r}: its 'argv' runs {runs!r} but its 'command' says "
                       f"{record['command']!r}; the file was edited; rerun from an unedited "
                       "config.json")
    return recorded


def _command(prog: str, parser: argparse.ArgumentParser, argv: Sequence[str]) -> str:
    """``prog`` followed by the sub-command names found in ``argv``."""
    words = [prog]
    action = _subparser_action(parser)
    for token in argv:
        if action is None:
            break
        if token in action.choices:
            words.append(token)
            action = _subparser_action(action.choices[token])
    return " ".join(words)


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
    command = _command(prog, parser, argv)
    token = _ARGV.set(tuple(argv))
    try:
        release_start()
        try:
            argv = expand_config(prog, parser, argv)  # --config FILE: the recorded run's line
            _ARGV.set(tuple(argv))
            command = _command(prog, parser, argv)
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


def sweep_workers(args: argparse.Namespace) -> int | None:
    """The worker processes a sweep runs on, as its ``config.json`` records them: ``--workers``;
    without it one per core (a local Dask cluster), or 0 (cells in this process) without the
    ``cluster`` extra; None with ``--scheduler`` (that scheduler's workers).

    >>> sweep_workers(argparse.Namespace(workers=2, scheduler=None))
    2
    >>> sweep_workers(argparse.Namespace(workers=None, scheduler="tcp://h:8786")) is None
    True
    """
    import importlib.util

    workers, scheduler = getattr(args, "workers", None), getattr(args, "scheduler", None)
    if workers is not None or scheduler is not None:
        return workers
    return (os.cpu_count() or 1) if importlib.util.find_spec("distributed") else 0
