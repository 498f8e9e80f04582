"""One error policy for both command lines: the library refuses the caller's input with
``BadInput`` (exit 2, one line); any other exception -- a ``ValueError`` or ``TypeError``
included -- is a bug (exit 1, "unexpected", the traceback under ``--debug``). Which option to
blame is read from ``BadInput.param``, never parsed back from a message."""

import ast
import pickle
from pathlib import Path

import pytest

from _runkit import BadInput, BadType, exit_code
from flows.cli import main as flows_main
from neurodyn.cli import main as neurodyn_main

ROOT = Path(__file__).resolve().parents[2]


def _planted(exc_type: type[Exception]):
    def broken(*args, **kwargs):
        raise exc_type("planted bug: kappa=1.0 is fine")  # a message that looks like bad input

    return broken


@pytest.mark.parametrize("exc_type", [ValueError, TypeError])
def test_a_bug_in_neurodyn_fit_exits_1_unexpected(monkeypatch, tmp_path, capsys, exc_type):
    import neurodyn.fitting.plan as plan

    # valid input; the library function that builds the population raises
    monkeypatch.setattr(plan, "build_geometry", _planted(exc_type))
    out = tmp_path / "run"
    code = neurodyn_main(["fit", "ring", "--out", str(out), "--n", "16", "--steps", "1"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith(f"neurodyn fit: failed: unexpected {exc_type.__name__}: planted bug")
    assert "--debug" in err and "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_a_bug_in_neurodyn_shows_its_traceback_under_debug(monkeypatch, tmp_path, capsys):
    import neurodyn.fitting.plan as plan

    monkeypatch.setattr(plan, "build_geometry", _planted(ValueError))
    code = neurodyn_main(["fit", "ring", "--out", str(tmp_path / "run"), "--n", "16",
                          "--steps", "1", "--debug"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" in err and "in broken" in err
    assert err.rstrip().splitlines()[-1].startswith("neurodyn fit: failed: unexpected ValueError")


def test_a_bug_in_flows_train_exits_1_unexpected(monkeypatch, tmp_path, capsys):
    import flows.runs.run as run

    monkeypatch.setattr(run, "prepare_data", _planted(ValueError))
    code = flows_main(["train", "--data", "moons", "--steps", "2", "--out",
                       str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("flows train: failed: unexpected ValueError: planted bug")
    code = flows_main(["train", "--data", "moons", "--steps", "2", "--out",
                       str(tmp_path / "run2"), "--debug"])
    assert code == 1 and "Traceback" in capsys.readouterr().err


def test_bad_input_still_exits_2_naming_the_option_from_its_param(tmp_path, capsys):
    out = tmp_path / "run"
    code = neurodyn_main(["fit", "ring", "--out", str(out), "--n", "16", "--steps", "1",
                          "--kappa", "1e9"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("neurodyn fit: error: --kappa: kappa=1000000000.0"), err
    assert not out.exists()  # refused before --out is claimed
    # the library's memory refusal names its parameter; the command line names the option
    code = neurodyn_main(["fit", "ring", "--out", str(out), "--n", "100000000", "--steps", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("neurodyn fit: error: --n: n is too large"), err
    assert not out.exists()


def test_bad_input_carries_its_parameter():
    from neurodyn.fitting.config import FitConfig

    with pytest.raises(BadInput) as caught:
        FitConfig(batch=0)
    assert caught.value.param == "batch"
    with pytest.raises(BadInput) as caught:
        FitConfig(lr=float("nan"))
    assert caught.value.param == "lr"
    back = pickle.loads(pickle.dumps(caught.value))
    assert (type(back), back.param, str(back)) == (BadInput, "lr", str(caught.value))


def test_a_wrong_type_is_bad_input_and_still_a_type_error():
    from neurodyn.spatial.agent import generate_trajectory

    with pytest.raises(TypeError) as caught:
        generate_trajectory(10.0, 0.1, box="not a box")
    assert isinstance(caught.value, BadType) and isinstance(caught.value, BadInput)
    assert caught.value.param == "box" and exit_code(caught.value) == 2


def _raises_of(names: set[str]) -> list[str]:
    found = []
    for pkg in ("neurodyn", "flows"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    fn = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                    if isinstance(fn, ast.Name) and fn.id in names:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_libraries_raise_no_bare_value_or_type_error():
    assert len(_raises_of({"BadInput", "FlowsError"})) > 300  # the finder sees raises
    assert _raises_of({"ValueError", "TypeError"}) == []
