"""The command lines in a hostile environment: stdout closed early, an ``MPLBACKEND`` matplotlib
rejects, a home folder that is not writable."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _runkit import cli
from flows.cli import main as flows_main
from neurodyn.cli import main as neurodyn_main

ROOT = Path(__file__).resolve().parents[2]

#: a command line of one sub-command that prints its JSON result
DEMO = textwrap.dedent("""
    import argparse, sys
    from _runkit import cli_main
    p = argparse.ArgumentParser(prog="demo")
    s = p.add_subparsers(dest="command", required=True).add_parser("go")
    s.set_defaults(func=lambda a: {"x": "y" * 100})
    sys.exit(cli_main("demo", p, ["go"]))
""")


def _closed_stdout(argv):
    """Run ``argv`` with a stdout whose reading end is already closed."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(w)
    return proc


def test_closed_stdout_exits_141_without_a_word():
    proc = _closed_stdout([sys.executable, "-c", DEMO])
    assert proc.returncode == cli.EXIT_BROKEN_PIPE and proc.stderr == ""


@pytest.mark.parametrize("argv", [["neurodyn.cli", "--help"], ["flows.cli", "train", "--help"]])
def test_closed_stdout_under_help_is_quiet(argv):
    proc = _closed_stdout([sys.executable, "-m", *argv])
    assert proc.returncode in (0, cli.EXIT_BROKEN_PIPE) and proc.stderr == ""


@pytest.mark.parametrize("main, argv", [
    (neurodyn_main, ["fit", "ring", "--out", "x"]),
    (flows_main, ["train", "--data", "moons", "--out", "x"]),
])
def test_bad_mplbackend_is_one_line_naming_it(main, argv, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "NoSuchBackend")
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    assert main(argv) == 2
    line, = capsys.readouterr().err.splitlines()
    assert "error: " in line and "MPLBACKEND='NoSuchBackend'" in line
    assert not (tmp_path / "x").exists()


def test_unwritable_home_gets_a_private_matplotlib_folder(monkeypatch, tmp_path):
    home = tmp_path / "home"  # a file: nothing can be made under it, even by root
    home.write_text("")
    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    cli._matplotlib_environment()
    folder = os.environ["MPLCONFIGDIR"]
    assert folder == str(tmp_path / f"matplotlib-{os.getuid()}") and os.path.isdir(folder)


def test_writable_home_leaves_matplotlib_alone(monkeypatch, tmp_path):
    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    cli._matplotlib_environment()
    assert "MPLCONFIGDIR" not in os.environ


def test_unwritable_home_run_prints_no_matplotlib_warning(tmp_path):
    home = tmp_path / "home"
    home.write_text("")
    code = ("import sys; from neurodyn.cli import main; main(['fit', '--help']); "
            "from _runkit import cli; cli._matplotlib_environment(); import matplotlib; "
            "matplotlib.get_cachedir()")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "HOME": str(home), "TMPDIR": str(tmp_path),
                               "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0 and "Matplotlib" not in proc.stderr, proc.stderr
