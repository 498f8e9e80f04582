"""Run directories: an exclusive lock on ``--out`` and one ``config.json`` shape.

Every command that writes ``--out DIR`` does so inside ``with RunDir(DIR, ...) as run:``, after
it has checked its inputs and its memory estimate. Entering it compares, then locks, then
writes, so that a refused command writes nothing under ``DIR``, not even the lock:

1. refuses, reading only, a file in place of ``DIR``, a directory whose ``config.json`` was
   written by another command (a run never writes into another run's directory) or has another
   shape than the one below (written by an earlier version, or by hand: the message names the
   file and its missing and extra keys; a command with ``--fresh`` (``fresh=True``) starts over
   in it instead), and whatever the command's own ``check`` refuses (``check()``: a checkpoint
   in ``DIR`` written under another config, which ``--fresh`` would discard);
2. creates ``DIR`` (a directory that cannot be created or written is refused with
   :class:`~_runkit.errors.BadInput`) and takes an exclusive ``fcntl.flock`` on ``DIR/.lock``
   without waiting: while one run holds it a second writer is refused (exit 2) naming the
   holder's pid, and the holder's lock file is left as it is; the lock is released, and its
   file removed, when the block ends (or the process dies: the kernel releases it, and the
   file left behind holds no lock);
3. repeats the checks of 1 under the lock (another run may have written in between);
4. writes ``config.json`` atomically in the one shape (a failure here, a full disk, removes
   the lock and the directory it created)::

       {"command": "flows train", "config": {...as run...}, "seed": 0,
        "version": "0.1.0", "argv": ["train", "--data", "moons", ...] or null}

   ``argv`` is the command line when the run was started by a CLI (through
   :func:`_runkit.cli.cli_main`) and ``null`` when started from Python.

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> with RunDir(out, command="demo", config={"n": 3}, seed=0) as run:
...     _ = run.write_json("metrics.json", {"loss": 0.25})
...     try:
...         RunDir(out, command="demo", config={}, seed=0).__enter__()
...     except BadInput as err:
...         print(str(err).split(";")[0].endswith(f"in use by another run (pid {os.getpid()})"))
True
>>> sorted(read_json(out / "config.json"))
['argv', 'command', 'config', 'seed', 'version']
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import io
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import BadInput
from .files import SVG_ENV, atomic_write_bytes, read_json, to_jsonable, write_json

__all__ = ["RunDir", "out_lock", "run_record", "library_version", "git_commit", "CONFIG_KEYS",
           "current_argv"]

CONFIG_KEYS = ("command", "config", "seed", "version", "argv")
LOCK_NAME = ".lock"

_ARGV: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "runkit_argv", default=None)


def current_argv() -> list[str] | None:
    """The command line of the CLI call in progress (set by ``cli_main``), or None.

    >>> current_argv() is None
    True
    """
    argv = _ARGV.get()
    return None if argv is None else list(argv)


def git_commit() -> str | None:
    """The commit of the checkout the library runs from (an editable install), or None.

    Read from the ``.git`` folder beside the packages (no ``git`` process): ``HEAD``, then the
    branch's ref or ``packed-refs``. An installed wheel has no checkout: None.

    >>> git_commit() is None or len(git_commit()) == 40
    True
    """
    git = Path(__file__).resolve().parents[1] / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head if len(head) == 40 else None
        ref = head.split(":", 1)[1].strip()
        common = git / "commondir"
        roots = [git] + ([git / common.read_text().strip()] if common.is_file() else [])
        for root in roots:
            if (root / ref).is_file():
                return (root / ref).read_text().strip()
            packed = root / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0]
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def library_version() -> str:
    """The installed version of the library (``neurodyn-flows``), or ``"unknown"``.

    >>> isinstance(library_version(), str)
    True
    """
    from importlib import metadata

    try:
        return metadata.version("neurodyn-flows")
    except metadata.PackageNotFoundError:
        return "unknown"


def run_record(command: str, config: Any, seed: int | None = None,
               argv: Sequence[str] | None = None, version: str | None = None) -> dict:
    """The one ``config.json`` shape: command, config as run, seed, library version, argv.

    ``argv`` defaults to the command line ``cli_main`` is running (None from Python),
    ``version`` to :func:`library_version`.

    >>> r = run_record("flows sample", {"n": 10}, seed=0)
    >>> [r[k] for k in CONFIG_KEYS if k != "version"]
    ['flows sample', {'n': 10}, 0, None]
    """
    return {"command": command, "config": to_jsonable(config), "seed": seed,
            "version": version if version is not None else library_version(),
            "argv": list(argv) if argv is not None else current_argv()}


class out_lock:  # noqa: N801 - used like a function: ``with out_lock(path):``
    """Exclusive, non-waiting lock on ``lock_file`` (``fcntl.flock``), refused with ``BadInput``.

    Parameters
    ----------
    lock_file : str or Path
        The lock file (created if missing; never deleted).
    name : str
        The parameter the locked output came from, used in the message (``"out"``).
    target : str or Path, optional
        The output named in the message (default: the lock file's directory).
    remove : bool
        Remove the lock file when the lock is released (a lock beside a file output, which
        would otherwise stay in the user's folder); a lock file removed by its holder while a
        second writer waited on it is noticed (its inode differs) and taken afresh.
    """

    def __init__(self, lock_file: str | Path, name: str = "out", target: str | Path | None = None,
                 remove: bool = False):
        self.lock_file = Path(lock_file)
        self.name = name
        self.target = Path(target) if target is not None else self.lock_file.parent
        self.remove = remove
        self._fd: int | None = None

    def __enter__(self) -> out_lock:
        while True:
            fd = self._locked_fd()
            try:  # the holder may have removed the file between our open and our lock
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_file))
            except FileNotFoundError:
                same = False
            if same:
                break
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def _locked_fd(self) -> int:
        """The lock file, opened (created if missing) and locked; refused when another run
        holds it, which is left as it is."""
        try:
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as err:
            raise BadInput(f"{self.name}={str(self.target)!r} cannot be locked for writing: "
                           f"{err.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise BadInput(f"{self.name}={str(self.target)!r} is in use by another run (pid "
                           f"{holder}); wait for it to finish or choose another --{self.name}"
                           ) from None
        return fd

    def __exit__(self, *exc: object) -> bool:
        if self._fd is not None:
            try:
                if self.remove:  # while still holding it: a waiting writer retries
                    self.lock_file.unlink(missing_ok=True)
                else:
                    os.ftruncate(self._fd, 0)
            except OSError:
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        return False


class RunDir:
    """The directory a run writes (``--out``): created, locked, and given its ``config.json``.

    Parameters
    ----------
    out : str or Path
        The directory.
    command : str
        The command that runs (``"flows train"``, ``"neurodyn fit"``); recorded, and compared
        with an existing ``config.json`` so that a run never writes into another's directory.
    config : dict or dataclass
        The configuration as run (after defaults and resume are resolved).
    seed : int or None
        The run's seed.
    argv : sequence of str, optional
        The command line; by default the one ``cli_main`` is running, or None from Python.
    version : str, optional
        Library version recorded; by default :func:`library_version`.
    fresh : bool or None
        What to do with a ``config.json`` of another shape: ``True`` replaces it (the command's
        ``--fresh``: start over), ``False`` refuses it suggesting ``--fresh``, ``None`` (a
        command without ``--fresh``) refuses it suggesting another ``--out``. A config.json of
        another command is refused in every case.
    check : callable, optional
        ``check()`` refuses (raises :class:`~_runkit.errors.BadInput`) what the directory holds
        that this run cannot continue, reading only: e.g. a checkpoint written under another
        config. Called before anything is written, and again under the lock.

    Attributes
    ----------
    out : Path
        The directory.
    """

    def __init__(self, out: str | Path, *, command: str, config: Any, seed: int | None = None,
                 argv: Sequence[str] | None = None, version: str | None = None,
                 fresh: bool | None = None, check: Callable[[], object] | None = None):
        if isinstance(out, str) and not out.strip():  # Path("") is the working directory
            raise BadInput(f"out={out!r} is not allowed; --out must name a directory")
        self.out = Path(out)
        self.fresh = fresh
        self.command = command
        self.config = config
        self.seed = seed
        self.argv = list(argv) if argv is not None else current_argv()
        self.version = version if version is not None else library_version()
        self.check = check
        self._lock: out_lock | None = None

    def record(self) -> dict:
        """The ``config.json`` content of this run."""
        return run_record(self.command, self.config, self.seed, self.argv, self.version)

    def _refusals(self) -> None:
        """Everything that refuses this run in ``out``, reading only (step 1 of the module)."""
        out = self.out
        if out.exists() and not out.is_dir():
            raise BadInput(f"out={str(out)!r} exists and is not a directory; --out must be a "
                           "directory")
        self._check_owner()
        if self.check is not None:
            self.check()

    def _prepare(self) -> None:
        out = self.out
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise BadInput(f"out={str(out)!r} cannot be created: {err.strerror}") from None
        if not os.access(out, os.W_OK | os.X_OK):
            raise BadInput(f"out={str(out)!r} is not writable (permission denied)")

    def _check_owner(self) -> None:
        cfg = self.out / "config.json"
        if not cfg.exists():
            return
        try:
            old = read_json(cfg, what="config")
        except BadInput as err:
            raise BadInput(f"out={str(self.out)!r}: {err}; choose another --out") from None
        if not isinstance(old, dict):
            raise BadInput(f"out={str(self.out)!r}: {str(cfg)!r} holds a JSON "
                           f"{type(old).__name__}, not a run's config object; this library did "
                           "not write it; choose another --out")
        command = old.get("command")
        if command is not None and command != self.command:
            raise BadInput(f"out={str(self.out)!r} holds a {command!r} run; "
                           f"{self.command!r} does not write into it; choose another --out")
        if set(old) != set(CONFIG_KEYS) and not self.fresh:
            raise BadInput(self._shape_message(cfg, old))

    def _shape_message(self, cfg: Path, old: dict) -> str:
        missing = sorted(set(CONFIG_KEYS) - set(old))
        extra = sorted(set(old) - set(CONFIG_KEYS))
        parts = [f"missing keys {missing}" if missing else "",
                 f"extra keys {extra}" if extra else ""]
        what = "; ".join(p for p in parts if p)
        fix = ("use --fresh to start over in it (its run files are replaced) or choose another "
               "--out" if self.fresh is False else
               f"choose another --out (or remove {cfg.name} to reuse the directory)")
        return (f"out={str(self.out)!r}: {str(cfg)!r} has an older shape than this library "
                f"writes ({what}; expected exactly {sorted(CONFIG_KEYS)}); {fix}")

    def __enter__(self) -> RunDir:
        self._refusals()  # compare, then lock, then write
        created = not self.out.exists()
        self._prepare()
        lock = out_lock(self.out / LOCK_NAME, "out", self.out, remove=True)
        try:
            lock.__enter__()
            try:
                self._refusals()
                write_json(self.record(), self.out / "config.json")
            except BaseException:
                lock.__exit__(None, None, None)
                raise
        except BaseException:
            if created:  # nothing of this run is left: not the lock, not the directory
                with contextlib.suppress(OSError):
                    self.out.rmdir()
            raise
        self._lock = lock
        return self

    def __exit__(self, *exc: object) -> bool:
        if self._lock is not None:
            self._lock.__exit__(*exc)
            self._lock = None
        return False

    def path(self, name: str) -> Path:
        """``out / name`` for a file of this run (a plain relative name; no ``..``).

        >>> RunDir("/tmp/r", command="c", config={}).path("metrics.json").name
        'metrics.json'
        """
        p = Path(name)
        if p.is_absolute() or ".." in p.parts or not p.parts:
            raise ValueError(f"name={name!r} must be a relative path inside the run directory")
        return self.out / p

    def write_json(self, name: str, obj: Any) -> Path:
        """Write ``obj`` with :func:`~_runkit.files.write_json` to ``out / name``; return it."""
        path = self.path(name)
        write_json(obj, path)
        return path

    def write_figures(self, figures: Mapping[str, Any], dpi: int = 120) -> list[str]:
        """Write each ``{name: matplotlib Figure}`` as PNG to ``out / name`` (atomically; also
        as SVG beside it when the environment sets ``RUNKIT_SVG=1``).

        Returns
        -------
        list of str
            The names written, in order.
        """
        for name, fig in figures.items():
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=dpi)
            atomic_write_bytes(buf.getvalue(), self.path(name))
            if os.environ.get(SVG_ENV) == "1":  # and as SVG beside it (for the results page)
                buf = io.BytesIO()
                fig.savefig(buf, format="svg")
                atomic_write_bytes(buf.getvalue(), self.path(name).with_suffix(".svg"))
        return list(figures)
