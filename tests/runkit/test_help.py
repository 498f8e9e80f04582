"""Every ``--help`` of both command lines is complete: each option of a command states its
default once (in its words or as ``(default: X)``), flags and None defaults are not shown as
``(default: True)`` / ``(default: None)``, and the sweep command is described."""

import re
import sys

import pytest

from flows.cli import main as flows_main
from neurodyn.cli import main as neurodyn_main

NEURODYN = ["", "fit", "simulate", "restore", "path-integrate", "speed-gain", "diffuse",
            "grid-cells", "manifold", "sweep"]
FLOWS = ["", "train", "sample", "eval", "experiment", "experiment width", "experiment samples",
         "experiment risk", "experiment stopping", "experiment ntk-gap",
         "experiment memorization"]


def _help(main, words: str, capsys) -> str:
    assert main([*words.split(), "--help"]) == 0
    return capsys.readouterr().out


def _entries(text: str) -> list[str]:
    """Each option's entry of the help, on one line."""
    return [" ".join(e.split()) for e in re.split(r"\n  (?=-)", text)[1:]]


@pytest.mark.parametrize(("main", "words"), [(neurodyn_main, w) for w in NEURODYN]
                         + [(flows_main, w) for w in FLOWS])
def test_no_doubled_or_empty_defaults(main, words, capsys):
    for entry in _entries(_help(main, words, capsys)):
        assert not re.search(r"\(default: (True|False|None|\[\])\)", entry), entry
        assert entry.count("(default:") <= 1, entry


def test_sweep_and_the_top_level_are_described(capsys):
    top = " ".join(_help(neurodyn_main, "", capsys).split())
    assert "sweep" in top.split("positional arguments")[0]
    text = " ".join(_help(neurodyn_main, "sweep", capsys).split())
    for words in ("axes kappa and n", "axes noise and n", "axes v and n", "table.csv"):
        assert words in text, words
    out = next(e for e in _entries(_help(neurodyn_main, "sweep", capsys))
               if e.startswith("--out"))
    assert "output directory" in out
    manifold = _entries(_help(neurodyn_main, "manifold", capsys))
    topology = next(e for e in manifold if e.startswith("--no-topology"))
    assert topology == "--no-topology skip persistent homology (ripser)"


def test_a_missing_optional_dependency_is_one_line_before_anything_is_written(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ripser", None)  # as if it were not installed
    out = tmp_path / "m"
    code = neurodyn_main(["manifold", "--model", str(tmp_path / "no-model"), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists() and len(err.splitlines()) == 1, err
    assert "ripser" in err and "neurodyn-flows[topology]" in err and "--no-topology" in err
    code = neurodyn_main(["manifold", "--model", str(tmp_path / "no-model"), "--out", str(out),
                          "--no-topology"])  # the control: without topology, the model is asked
    assert code == 2 and "ripser" not in capsys.readouterr().err


def test_a_successful_command_says_what_it_wrote(tmp_path, capsys):
    import argparse
    import shutil

    from _runkit import cli_main

    p = argparse.ArgumentParser(prog="demo")
    s = p.add_subparsers(dest="command", required=True).add_parser("draw")
    s.add_argument("--out")

    def draw(a):
        if a.out:
            (tmp_path / "run").mkdir()
            for name in ("a.png", "b.png", "metrics.json"):
                (tmp_path / "run" / name).write_text("")
        return {"ok": True}

    s.set_defaults(func=draw)
    assert cli_main("demo", p, ["draw", "--out", str(tmp_path / "run"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert out == '{"ok": true}\n'  # with --json: the JSON line for scripts, the rest on stderr
    assert err.startswith("demo draw: done in ") and err.count("\n") == 1
    assert f"wrote {tmp_path / 'run'}/: 2 figures (a.png, b.png); metrics.json" in err
    assert cli_main("demo", p, ["draw", "--json"]) == 0 and capsys.readouterr().err == ""
    shutil.rmtree(tmp_path / "run")
    assert cli_main("demo", p, ["draw", "--out", str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()  # without: what it wrote, the numbers, where the rest is
    assert err == "" and out.splitlines() == [
        f"demo draw: done in 0.0 s; wrote {tmp_path / 'run'}/: 2 figures (a.png, b.png); "
        "metrics.json", "  ok yes", f"  every number: {tmp_path / 'run' / 'metrics.json'} "
        "(or --json)"]
