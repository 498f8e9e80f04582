"""Unit tests of the shared run contract (``_runkit``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import _runkit as rk
from _runkit import BadInput, Diverged, RunFailed
from _runkit.checks import available_memory, format_bytes
from _runkit.rundir import current_argv, out_lock

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- errors
def test_exit_codes_and_hierarchy():
    assert issubclass(BadInput, ValueError) and issubclass(RunFailed, RuntimeError)
    assert issubclass(Diverged, RunFailed)
    assert rk.exit_code(BadInput("x")) == 2
    assert rk.exit_code(RunFailed("x")) == 1
    assert rk.exit_code(Diverged("x")) == 1
    assert rk.exit_code(KeyboardInterrupt()) == 130
    assert rk.exit_code(ZeroDivisionError()) == 1
    err = Diverged("loss exploded at step 4; lower lr", step=4, parameter="lr")
    assert (err.step, err.parameter, str(err)) == (4, "lr", "loss exploded at step 4; lower lr")


# ---------------------------------------------------------------- checks
@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), -float("inf"), True, "1",
                                   None, 1j, [1.0]])
def test_check_positive_refuses(value):
    with pytest.raises(BadInput, match=r"^lr=.* is not allowed; it must be a finite number > 0"):
        rk.check_positive("lr", value)


def test_check_positive_accepts_real_numbers():
    assert rk.check_positive("lr", 3) == 3.0 and isinstance(rk.check_positive("lr", 3), float)
    assert rk.check_positive("lr", np.float32(0.5)) == 0.5
    assert rk.check_positive("lr", 1e-300) == 1e-300


@pytest.mark.parametrize("value", [-1e-9, float("nan"), float("inf"), False, "0"])
def test_check_nonnegative_refuses(value):
    with pytest.raises(BadInput, match=r"^noise=.* it must be a finite number >= 0"):
        rk.check_nonnegative("noise", value)


def test_check_nonnegative_accepts_zero():
    assert rk.check_nonnegative("noise", 0) == 0.0
    assert rk.check_nonnegative("noise", np.float64(2.5)) == 2.5


@pytest.mark.parametrize("value", [0, -3, 2.0, 2.5, True, "4", float("nan"), None])
def test_check_positive_int_refuses(value):
    with pytest.raises(BadInput, match=r"^n=.* it must be an integer >= 1$"):
        rk.check_positive_int("n", value)


def test_check_positive_int_accepts():
    assert rk.check_positive_int("n", np.int32(7)) == 7
    assert type(rk.check_positive_int("n", np.int64(7))) is int
    assert rk.check_positive_int("n", 10**30) == 10**30


def test_check_int_bounds():
    assert rk.check_int("k", 0, lo=0, hi=3) == 0
    assert rk.check_int("k", 3, lo=0, hi=3) == 3
    assert rk.check_int("k", -5) == -5
    with pytest.raises(BadInput, match=r"k=4 is not allowed; it must be an integer in \[0, 3\]"):
        rk.check_int("k", 4, lo=0, hi=3)
    with pytest.raises(BadInput, match=r"it must be an integer >= 0"):
        rk.check_int("k", -1, lo=0)
    with pytest.raises(BadInput, match=r"it must be an integer <= 9"):
        rk.check_int("k", 10, hi=9)
    with pytest.raises(BadInput, match=r"k=1.0 is not allowed"):
        rk.check_int("k", 1.0)


def test_check_float_bounds():
    assert rk.check_float("s", 1.0, lo=0.0, hi=1.0) == 1.0
    assert rk.check_float("s", -7) == -7.0
    for bad in (1.5, -0.1, float("nan"), float("inf"), "0.5", 0.5 + 0j):
        with pytest.raises(BadInput, match=r"^s=.* it must be a finite number in \[0.0, 1.0\]"):
            rk.check_float("s", bad, lo=0.0, hi=1.0)


def test_check_choice():
    assert rk.check_choice("path", "linear", ("linear", "vp")) == "linear"
    with pytest.raises(BadInput, match=r"path='lin' is not allowed; choose one of linear, vp"):
        rk.check_choice("path", "lin", ("linear", "vp"))
    with pytest.raises(BadInput, match="choose one of"):
        rk.check_choice("path", ["linear"], ("linear", "vp"))


def test_check_array_accepts_numpy_and_torch():
    a = np.zeros((5, 2))
    assert rk.check_array("x", a, ndim=2, shape=(None, 2)) is a
    t = torch.zeros(3, 2)
    assert rk.check_array("x", t, ndim=(1, 2), shape=(3, 2)) is t
    assert rk.check_array("x", np.array([1, 2], dtype=np.int64)) is not None
    assert rk.check_array("x", np.array([1 + 1j]), real=False) is not None
    assert rk.check_array("x", np.zeros((0, 2)), empty=True).shape == (0, 2)
    assert rk.check_array("x", np.array([np.nan]), finite=False) is not None


@pytest.mark.parametrize(("value", "kwargs", "pattern"), [
    ([[1.0, 2.0]], {}, r"x of type list is not allowed; it must be an array"),
    (np.zeros((2, 3)), {"ndim": 1}, r"x has 2 dimension\(s\) \(shape \(2, 3\)\); it must have 1"),
    (np.zeros((2, 3)), {"ndim": (1, 3)}, r"it must have 1 or 3"),
    (np.zeros((2, 3)), {"shape": (None, 2)}, r"x has shape \(2, 3\); it must have shape "
                                             r"\(any, 2\)"),
    (np.zeros(3), {"shape": (3, 1)}, r"must have shape \(3, 1\)"),
    (np.zeros((0, 2)), {}, r"x is empty \(shape \(0, 2\)\)"),
    (np.array([1 + 2j, 3.0]), {}, r"x has complex dtype complex128; only real arrays"),
    (torch.zeros(2, dtype=torch.complex64), {}, r"x has complex dtype complex64"),
    (np.array(["a", "b"]), {}, r"x has dtype <U1; only numeric arrays"),
    (np.array([None, 1.0], dtype=object), {}, r"x has dtype object"),
    (np.array([[0.0, 1.0], [np.inf, 2.0]]), {}, r"x contains 1 non-finite value\(s\) "
                                                r"\(first at index \(1, 0\)\)"),
    (torch.tensor([0.0, float("nan"), float("nan")]), {}, r"x contains 2 non-finite value\(s\)"
                                                          r" \(first at index \(1,\)\)"),
])
def test_check_array_refuses(value, kwargs, pattern):
    with pytest.raises(BadInput, match=pattern):
        rk.check_array("x", value, **kwargs)


def test_check_memory():
    assert rk.check_memory("n", 1024, limit=2048) == 1024
    with pytest.raises(BadInput, match=r"^n, width is too large: the run would need about "
                                       r"4.0 GiB of memory, more than the 1.0 GiB available; "
                                       r"reduce n, width$"):
        rk.check_memory("n, width", 4 * 2**30, limit=2**30)
    with pytest.raises(BadInput, match="an unbounded amount"):
        rk.check_memory("n", float("inf"))
    # the default limit is what this machine has: an exabyte never fits
    with pytest.raises(BadInput, match="EiB|TiB"):
        rk.check_memory("n", 2**60)
    assert 0 < available_memory() < 2**60
    assert rk.check_memory("n", 1000) == 1000


def test_format_bytes():
    assert format_bytes(1) == "1 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(5 * 2**40) == "5.0 TiB"


# ---------------------------------------------------------------- files
def _tmp_names(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_atomic_writes_roundtrip_and_leave_no_temp(tmp_path):
    rk.atomic_write_text("héllo\n", tmp_path / "a.txt")
    rk.atomic_write_bytes(b"\x00\xff", tmp_path / "sub" / "b.bin")
    rk.atomic_torch_save({"W": torch.arange(3.0), "step": 2, "name": "x"}, tmp_path / "c.pt")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\xff"
    blob = rk.safe_torch_load(tmp_path / "c.pt")
    assert blob["step"] == 2 and blob["name"] == "x" and torch.equal(blob["W"], torch.arange(3.0))
    assert _tmp_names(tmp_path) == [] and _tmp_names(tmp_path / "sub") == []


def test_atomic_write_failure_keeps_the_old_file(tmp_path):
    target = tmp_path / "ck.pt"
    rk.atomic_torch_save({"step": 1}, target)
    before = target.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        rk.atomic_torch_save({"f": lambda: 0}, target)  # a lambda cannot be pickled
    assert target.read_bytes() == before
    assert _tmp_names(tmp_path) == []


def test_atomic_temp_names_are_unique_and_fsynced(tmp_path, monkeypatch):
    seen, synced = [], []
    real_replace, real_fsync = os.replace, os.fsync
    monkeypatch.setattr(os, "replace", lambda a, b: (seen.append(Path(a)), real_replace(a, b)))
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    rk.write_json({"a": 1}, tmp_path / "m.json")
    rk.write_json({"a": 2}, tmp_path / "m.json")
    assert len(seen) == 2 and seen[0] != seen[1]
    assert all(p.parent == tmp_path and p.name != "m.json.tmp" for p in seen)
    assert len(synced) >= 2
    assert rk.read_json(tmp_path / "m.json") == {"a": 2}


def test_write_json_convention(tmp_path):
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        width: int
        lr: float

    obj = {"nan": float("nan"), "inf": np.float32("inf"), "ninf": -float("inf"),
           "t": torch.tensor([1.5, 2.5]), "a": np.arange(2), "cfg": Cfg(8, 0.1),
           "p": tmp_path, "tup": (1, True), "i": np.int64(3), 5: None}
    rk.write_json(obj, tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text()

    def refuse(c):
        raise AssertionError(f"non-strict JSON constant {c}")

    data = json.loads(text, parse_constant=refuse)
    assert data == {"nan": "nan", "inf": "inf", "ninf": "-inf", "t": [1.5, 2.5], "a": [0, 1],
                    "cfg": {"width": 8, "lr": 0.1}, "p": str(tmp_path), "tup": [1, True],
                    "i": 3, "5": None}
    assert float(data["ninf"]) == -np.inf
    assert list(json.loads(text)) == sorted(data)  # keys sorted
    with pytest.raises(TypeError, match="object is not convertible to JSON"):
        rk.write_json({"x": object()}, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def test_read_json_refusals(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        rk.read_json(tmp_path / "none.json")
    with pytest.raises(BadInput, match="is a directory; a file is expected"):
        rk.read_json(tmp_path)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BadInput, match=r"^cfg='.*bad.json' is not valid JSON"):
        rk.read_json(tmp_path / "bad.json", what="cfg")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(BadInput, match="is not valid JSON"):
        rk.read_json(tmp_path / "bin.json")


class _Planted:
    """A pickle whose loading would create a marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_safe_torch_load_refuses_planted_pickles(tmp_path):
    marker = tmp_path / "ran"
    torch.save({"W": torch.ones(2), "x": _Planted(marker)}, tmp_path / "zip.pt")
    (tmp_path / "raw.pt").write_bytes(pickle.dumps(_Planted(marker)))
    with pytest.raises(BadInput, match=r"^model='.*zip.pt' holds objects other than tensors "
                                       r"and plain values \(posix.system\); refused"):
        rk.safe_torch_load(tmp_path / "zip.pt", what="model")
    with pytest.raises(BadInput, match=r"raw.pt' is not a readable torch file"):
        rk.safe_torch_load(tmp_path / "raw.pt", what="model")
    assert not marker.exists()
    # control: the same pickle, loaded without the restriction, does run
    with open(tmp_path / "raw.pt", "rb") as fh:
        pickle.load(fh)
    assert marker.exists()


@dataclasses.dataclass
class _Foreign:
    a: int


def test_safe_torch_load_refuses_damaged_and_foreign_files(tmp_path):
    good = tmp_path / "good.pt"
    torch.save({"W": torch.ones(50)}, good)
    data = good.read_bytes()
    (tmp_path / "trunc.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "text.pt").write_text("hello")

    torch.save({"x": _Foreign(1)}, tmp_path / "foreign.pt")
    cases = {"trunc.pt": "is not a readable torch file", "empty.pt": "is empty",
             "text.pt": "is not a readable torch file", "foreign.pt": "holds objects other than",
             "missing.pt": "does not exist"}
    for name, pattern in cases.items():
        with pytest.raises(BadInput, match=rf"^checkpoint='.*{name}' {pattern}"):
            rk.safe_torch_load(tmp_path / name)
    with pytest.raises(BadInput, match="is a directory"):
        rk.safe_torch_load(tmp_path)
    assert torch.equal(rk.safe_torch_load(good)["W"], torch.ones(50))


# ---------------------------------------------------------------- rundir
def test_rundir_writes_the_one_config_shape(tmp_path):
    out = tmp_path / "a" / "run"
    with rk.RunDir(out, command="flows train", config={"width": 8}, seed=3) as run:
        assert run.path("model.pt") == out / "model.pt"
        run.write_json("metrics.json", {"loss": float("nan")})
    cfg = rk.read_json(out / "config.json")
    assert cfg == {"command": "flows train", "config": {"width": 8}, "seed": 3,
                   "version": rk.rundir.library_version(), "argv": None}
    assert rk.read_json(out / "metrics.json") == {"loss": "nan"}
    with pytest.raises(ValueError, match="relative path inside"):
        run.path("../x")


def test_rundir_lock_refuses_a_second_writer_and_is_released(tmp_path):
    out = tmp_path / "run"
    with rk.RunDir(out, command="c", config={}, seed=0):
        with pytest.raises(BadInput, match=rf"^out='{out}' is in use by another run \(pid "
                                           rf"{os.getpid()}\); wait for it"):
            with rk.RunDir(out, command="c", config={}, seed=0):
                pass
    with rk.RunDir(out, command="c", config={"again": 1}, seed=0):  # released
        pass
    assert rk.read_json(out / "config.json")["config"] == {"again": 1}


def test_rundir_lock_held_by_another_process(tmp_path):
    out, ready = tmp_path / "run", tmp_path / "ready"
    code = ("import sys, time, pathlib, _runkit as rk\n"
            f"with rk.RunDir({str(out)!r}, command='c', config={{}}, seed=0):\n"
            f"    pathlib.Path({str(ready)!r}).touch(); time.sleep(30)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists()
        with pytest.raises(BadInput, match=rf"in use by another run \(pid {proc.pid}\)"):
            with rk.RunDir(out, command="c", config={}, seed=0):
                pass
    finally:
        proc.kill()
        proc.wait()
    with rk.RunDir(out, command="c", config={}, seed=0):  # the dead holder released it
        pass


def test_rundir_refuses_other_runs_and_bad_outs(tmp_path):
    out = tmp_path / "run"
    with rk.RunDir(out, command="flows train", config={}, seed=0):
        pass
    with pytest.raises(BadInput, match=r"holds a 'flows train' run; 'flows eval' does not write"):
        with rk.RunDir(out, command="flows eval", config={}, seed=0):
            pass
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "config.json").write_text('[1, 2]')
    with pytest.raises(BadInput, match=r"holds a JSON list, not a run's config object"):
        rk.RunDir(foreign, command="c", config={}).__enter__()
    (foreign / "config.json").write_text('{"width": 3')
    with pytest.raises(BadInput, match=r"config.json.*; choose another --out"):
        rk.RunDir(foreign, command="c", config={}, fresh=True).__enter__()
    assert (foreign / "config.json").read_text() == '{"width": 3'
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadInput, match="exists and is not a directory"):
        rk.RunDir(tmp_path / "file", command="c", config={}).__enter__()
    with pytest.raises(BadInput, match="cannot be created"):
        rk.RunDir(tmp_path / "file" / "sub", command="c", config={}).__enter__()


def test_rundir_older_config_shape_names_the_keys_and_fresh_replaces_it(tmp_path):
    out = tmp_path / "old"
    out.mkdir()
    older = '{"command": "flows train", "config": {"n": 1}, "seed": 0, "solver": "euler"}'
    (out / "config.json").write_text(older)
    for fresh, fix in ((False, "use --fresh to start over"), (None, "choose another --out")):
        with pytest.raises(BadInput) as info:
            rk.RunDir(out, command="flows train", config={}, fresh=fresh).__enter__()
        msg = str(info.value)
        assert "\n" not in msg and str(out / "config.json") in msg
        assert "missing keys ['argv', 'version']" in msg and "extra keys ['solver']" in msg
        assert fix in msg and ("--fresh" in msg) == (fresh is False)
        assert (out / "config.json").read_text() == older  # refused: left alone
    # a hand-written config without a command: only the keys are named
    (out / "config.json").write_text('{"width": 3}')
    with pytest.raises(BadInput, match=r"missing keys \['argv', 'command', 'config', 'seed', "
                                       r"'version'\]; extra keys \['width'\]"):
        rk.RunDir(out, command="c", config={}, fresh=False).__enter__()
    # another command's run stays refused even with fresh
    (out / "config.json").write_text(older)
    with pytest.raises(BadInput, match="holds a 'flows train' run"):
        rk.RunDir(out, command="flows eval", config={}, fresh=True).__enter__()
    with rk.RunDir(out, command="flows train", config={"n": 2}, seed=1, fresh=True):
        pass
    assert sorted(rk.read_json(out / "config.json")) == sorted(rk.rundir.CONFIG_KEYS)


def test_out_lock_on_a_file_output(tmp_path):
    lock = tmp_path / ".s.npy.lock"
    with out_lock(lock, "out", tmp_path / "s.npy"):
        with pytest.raises(BadInput, match=r"out='.*s.npy' is in use by another run"):
            out_lock(lock, "out", tmp_path / "s.npy").__enter__()
    with out_lock(lock, "out", tmp_path / "s.npy"):
        pass


# ---------------------------------------------------------------- progress
def test_progress_silent_and_tqdm(capsys):
    bar = rk.progress(total=5, initial=1, enabled=False)
    bar.update(2)
    bar.set_postfix_str("x")
    bar.set_postfix(loss=1.0)
    bar.close()
    assert bar.n == 3
    with rk.progress(range(4), enabled=False) as it:
        assert list(it) == [0, 1, 2, 3]
    assert capsys.readouterr().err == ""
    bar = rk.progress(total=3, desc="work", enabled=True)
    bar.update(3)
    bar.close()
    assert "work" in capsys.readouterr().err  # tqdm draws on stderr


# ---------------------------------------------------------------- registry
def test_registry():
    reg = rk.Registry("coupling")

    @reg.register("ot")
    def ot():
        return "ot"

    reg.add("independent", len)
    assert reg.get("ot") is ot and reg.names() == ["ot", "independent"]
    assert "ot" in reg and "sinkhorn" not in reg and len(reg) == 2 and list(reg) == reg.names()
    with pytest.raises(BadInput, match=r"^coupling='sinkhorn' is not allowed; choose one of "
                                       r"ot, independent$"):
        reg.get("sinkhorn")
    with pytest.raises(BadInput, match="choose one of"):
        reg.get(["ot"])
    with pytest.raises(BadInput, match="already registered"):
        reg.add("ot", len)
    reg.add("ot", len, replace=True)
    assert reg.get("ot") is len
    with pytest.raises(BadInput, match="non-empty string"):
        reg.add("", len)


# ---------------------------------------------------------------- results
def test_result_to_dict_and_frozen():
    @dataclasses.dataclass(frozen=True)
    class Inner(rk.Result):
        a: float

    @dataclasses.dataclass(frozen=True)
    class Outer(rk.Result):
        inner: Inner
        loss: float
        samples: np.ndarray = rk.artifact(default=None)

    r = Outer(Inner(float("inf")), 0.5, samples=np.zeros(3))
    assert r.to_dict() == {"inner": {"a": "inf"}, "loss": 0.5}
    assert "samples" not in repr(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.loss = 1.0
    assert r == Outer(Inner(float("inf")), 0.5, samples=np.ones(3))  # artifacts not compared


# ---------------------------------------------------------------- cli_main
def _parser(handler):
    p = argparse.ArgumentParser(prog="tool")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("go")
    s.add_argument("--x", type=int, default=1)
    s.set_defaults(func=handler)
    return p


@pytest.mark.parametrize(("exc", "code", "line"), [
    (BadInput("x=0 is not allowed"), 2, "tool go: error: x=0 is not allowed"),
    (RunFailed("no result"), 1, "tool go: failed: no result"),
    (Diverged("loss exploded at step 3;\nlower lr"), 1,
     "tool go: failed: loss exploded at step 3; lower lr"),
    (ZeroDivisionError("division by zero"), 1, "tool go: failed: unexpected ZeroDivisionError: "
                                               "division by zero (rerun with --debug for the "
                                               "traceback)"),
    (KeyboardInterrupt("checkpoint at step 5 saved"), 130,
     "tool go: interrupted: checkpoint at step 5 saved"),
    (KeyboardInterrupt(), 130, "tool go: interrupted"),
])
def test_cli_main_maps_exceptions_to_one_line(capsys, exc, code, line):
    def handler(args):
        raise exc

    assert rk.cli_main("tool", _parser(handler), ["go"]) == code
    out, err = capsys.readouterr()
    assert out == "" and err == line + "\n"


def test_cli_main_success_usage_errors_help_and_debug(capsys):
    def handler(args):
        return {"x": args.x, "w2": float("nan")}

    assert rk.cli_main("tool", _parser(handler), ["go", "--x", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"x": 4, "w2": "nan"}
    assert rk.cli_main("tool", _parser(handler), ["go", "--x", "4"]) == 0
    assert capsys.readouterr().out.splitlines() == ["tool go: done in 0.0 s", "  x 4, w2 nan",
                                                    "  every number: rerun with --json"]
    assert rk.cli_main("tool", _parser(handler), ["go", "--x", "abc"]) == 2
    assert capsys.readouterr().err == "tool go: error: argument --x: invalid int value: 'abc'\n"
    assert rk.cli_main("tool", _parser(handler), ["go", "--y"]) == 2
    assert capsys.readouterr().err == "tool go: error: unrecognized arguments: --y\n"
    assert rk.cli_main("tool", _parser(handler), []) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert rk.cli_main("tool", _parser(handler), ["go", "--help"]) == 0
    assert "--debug" in capsys.readouterr().out

    def broken(args):
        raise BadInput("n=-1 is not allowed")

    for argv in (["go", "--debug"], ["--debug", "go"]):
        assert rk.cli_main("tool", _parser(broken), argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback") and err.endswith("tool go: error: n=-1 is not allowed\n")


def test_cli_main_records_argv_in_config(tmp_path, capsys):
    out = tmp_path / "run"

    def handler(args):
        with rk.RunDir(out, command="tool go", config={"x": args.x}, seed=None):
            return None

    argv = ["go", "--x", "2"]
    assert rk.cli_main("tool", _parser(handler), argv) == 0
    assert rk.read_json(out / "config.json")["argv"] == argv
    assert current_argv() is None  # reset after the call
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- interrupts
_DROPPED_CTRL_C = """
import ctypes, os, signal, sys
from pathlib import Path
import _runkit as rk

def dropped_ctrl_c():
    # SIGINT handled inside a ctypes callback: its KeyboardInterrupt is dropped by ctypes
    ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), signal.SIGINT))()

def go(args):
    ckpt = Path(args.out)
    for step in range(5):
        ckpt.write_text(str(step + 1))
        if step == 2:
            dropped_ctrl_c()
        if args.check:
            try:
                rk.check_interrupt()
            except KeyboardInterrupt:
                raise KeyboardInterrupt(f"checkpoint at step {step + 1} saved") from None
    return {"steps": 5}

import argparse
p = argparse.ArgumentParser(prog="tool")
s = p.add_subparsers(dest="command", required=True).add_parser("go")
s.add_argument("--out")
s.add_argument("--check", action="store_true")
s.set_defaults(func=go)
sys.exit(rk.cli_main("tool", p))
"""


@pytest.mark.parametrize(("check", "saved", "end"), [
    (True, "3", "checkpoint at step 3 saved"),
    (False, "5", "Ctrl-C arrived while native code ran and took effect only after the "
                 "command's work; the outputs it wrote are complete"),
])
def test_ctrl_c_dropped_in_a_ctypes_callback_still_exits_130(tmp_path, check, saved, end):
    ckpt = tmp_path / "ckpt"
    argv = ["go", "--out", str(ckpt)] + (["--check"] if check else [])
    p = subprocess.run([sys.executable, "-c", _DROPPED_CTRL_C, *argv], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 130, p.stderr
    assert p.stdout == "" and p.stderr == f"tool go: interrupted: {end}\n"
    assert ckpt.read_text() == saved


def test_cli_main_restores_the_sigint_handler_and_unraisable_hook(capsys):
    import signal

    seen = {}

    def handler(args):
        seen["handler"] = signal.getsignal(signal.SIGINT)
        return None

    hook = sys.unraisablehook
    assert rk.cli_main("tool", _parser(handler), ["go"]) == 0
    assert seen["handler"] is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert sys.unraisablehook is hook
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # an ignored SIGINT (a background job) stays ignored
        assert rk.cli_main("tool", _parser(handler), ["go"]) == 0
        assert seen["handler"] is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


# ---------------------------------------------------------------- docstring examples
@pytest.mark.parametrize("name", ["__init__", "checks", "cli", "errors", "files", "kernels",
                                  "results", "rundir", "seeds"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    module = importlib.import_module("_runkit" if name == "__init__" else f"_runkit.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
