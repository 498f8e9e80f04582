"""What the command lines print for a person: a short summary by default, every number with
``--json``, the package's version, and one usage style for both programs."""

import json
from importlib import metadata

import pytest

from _runkit.rundir import library_version
from flows.cli.commands import HEADLINES as FLOWS_HEADLINES
from flows.cli.commands import build_parser as flows_parser
from flows.cli.commands import main as flows_main
from neurodyn.cli import HEADLINES as NEURODYN_HEADLINES
from neurodyn.cli import build_parser as neurodyn_parser
from neurodyn.cli import main as neurodyn_main


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    return tmp_path_factory.mktemp("fit") / "R"


def test_fit_prints_at_most_five_lines_and_json_on_request(ring, capsys):
    assert neurodyn_main(["fit", "ring", "--n", "32", "--steps", "2", "--out", str(ring)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert 2 <= len(lines) <= 5 and err == "", out
    assert lines[0].startswith("neurodyn fit: done in ") and f"wrote {ring}/" in lines[0]
    assert "neutral directions 1" in lines[1] and "slowest decay (1/tau) -1" in lines[1]
    assert lines[-1] == f"  every number: {ring / 'metrics.json'} (or --json)"
    assert max(len(line) for line in lines[1:]) < 200
    metrics = json.loads((ring / "metrics.json").read_text())
    # the control: every number is still there for scripts, and far longer than the summary
    assert neurodyn_main(["simulate", "--model", str(ring), "--count", "2", "--duration", "2",
                          "--out", str(ring / "sim"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 and json.loads(out)["runs"] == 2
    assert err.startswith("neurodyn simulate: done in ")
    assert len(json.dumps(metrics)) > 5 * len("".join(lines))


def test_every_headline_names_a_command():
    for parser, table in ((neurodyn_parser(), NEURODYN_HEADLINES),
                          (flows_parser(), FLOWS_HEADLINES)):
        sub = next(a for a in parser._actions if hasattr(a, "choices") and a.choices)
        for command in table:
            words = command.split()
            assert words[0] in sub.choices, command
            if len(words) > 1:
                kinds = next(a for a in sub.choices[words[0]]._actions
                             if hasattr(a, "choices") and a.choices)
                assert words[1] in kinds.choices, command


@pytest.mark.parametrize("main, prog", [(neurodyn_main, "neurodyn"), (flows_main, "flows")])
def test_version_and_one_usage_style(main, prog, capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"{prog} {library_version()}\n"
    assert library_version() == metadata.version("neurodyn-flows")
    assert main(["--help"]) == 0
    usage = capsys.readouterr().out.split("\n\n")[0]
    assert " COMMAND ..." in usage and "{" not in usage, usage
