"""``--config FILE`` reruns a recorded run, and every command's ``config.json`` holds its
defaults resolved: no ``null`` except where it means "not given" (no --init file, no user
model, no reference), and the grid-cell command's ``arguments`` (its command line as typed,
the resolved values beside them).

Every command runs at a tiny size, then again with ``--config OUT/config.json`` into another
directory: the rerun's ``metrics.json`` equals the first (wall times left out), and an option
given beside ``--config`` overrides the recorded one. The default suite runs a few commands;
the others are ``slow``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flows.cli import main as flows_main
from neurodyn.cli import main as neurodyn_main

#: keys whose null means "not given"; any other null is an unresolved default
ABSENT = {"init", "velocity", "velocity_file", "labels", "model", "model_args", "reference",
          "scheduler", "boundary_cue", "landmark_cue", "heading",
          "spacing", "orientation"}  # fit-activity's torus options, estimated from the data
#: wall-clock entries of metrics.json (the rest is determined by the seed)
TIMES = {"wall_time_s", "seconds", "realtime_factor", "resumed_from_step", "fit_seconds"}


def nulls(obj, path=""):
    """The paths of the nulls in ``obj`` that are not "not given"."""
    if obj is None:
        yield path
    elif isinstance(obj, dict):
        for key, value in obj.items():
            if key not in ABSENT and not (path == "" and key == "arguments"):
                yield from nulls(value, f"{path}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from nulls(value, f"{path}[{i}]")


def strip(obj, keys=TIMES):
    """``obj`` without the entries named in ``keys``, at any depth."""
    if isinstance(obj, dict):
        return {k: strip(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [strip(v, keys) for v in obj]
    return obj


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    assert neurodyn_main(["fit", "ring", "--out", str(root / "ring"), "--n", "32",
                          "--steps", "2"]) == 0
    return root


def ring(models):
    return str(models / "ring")


def torus(models):
    if not (models / "torus" / "model.pt").exists():
        assert neurodyn_main(["fit", "torus", "--out", str(models / "torus"), "--n", "12", "12",
                              "--steps", "2"]) == 0
    return str(models / "torus")


def flows_model(models):
    if not (models / "flow" / "model.pt").exists():
        assert flows_main(["train", "--data", "moons", "--out", str(models / "flow"),
                           "--steps", "10", "--width", "16", "--n-eval", "200"]) == 0
    return str(models / "flow")


def activity(models):
    from neurodyn.datasets import rat_trajectory, ring_activity

    path = models / "activity.npz"
    if not path.exists():
        tr = rat_trajectory(dt=0.02, duration=150.0, synthetic=True, seed=0)
        ring_activity(cells=60, recorded=40, trajectory=tr, seed=0,
                      fluctuation=0.08).save(path)
    return str(path)


def samples(models):
    path = models / "samples.npy"
    if not path.exists():
        np.save(path, np.random.default_rng(0).normal(size=(200, 2)))
    return str(path)


EXP = ["--duration", "1", "--dt", "0.5"]
# name: (main, command words, options (given the models folder), an override to check)
COMMANDS = {
    "fit": (neurodyn_main, ["fit", "ring"], lambda m: ["--n", "32", "--steps", "2"],
            ["--steps", "1"]),
    "simulate": (neurodyn_main, ["simulate"], lambda m: [
        "--model", ring(m), "--perturb", "noise", "--strength", "0.2", "--count", "2",
        "--duration", "2", "--seed", "0"], ["--seed", "1"]),
    "width": (flows_main, ["experiment", "width"], lambda m: [
        "--widths", "16,32", "--n", "16", "--steps", "5"], ["--steps", "4"]),
    "eval": (flows_main, ["eval"], lambda m: ["--samples", samples(m), "--data", "moons"],
             ["--floor-pairs", "3"]),
    "restore": (neurodyn_main, ["restore"], lambda m: ["--model", ring(m), *EXP], None),
    "path-integrate": (neurodyn_main, ["path-integrate"], lambda m: ["--model", ring(m), *EXP],
                       None),
    "speed-gain": (neurodyn_main, ["speed-gain"], lambda m: ["--model", ring(m), *EXP], None),
    "diffuse": (neurodyn_main, ["diffuse"], lambda m: [
        "--model", ring(m), "--duration", "4", "--dt", "0.5", "--runs", "4"], None),
    "grid-cells": (neurodyn_main, ["grid-cells"], lambda m: [
        "--model", torus(m), "--duration", "20", "--seed", "0", "--shuffles", "2"], None),
    "manifold": (neurodyn_main, ["manifold"], lambda m: ["--model", ring(m), "--no-topology"],
                 None),
    "sweep": (neurodyn_main, ["sweep", "kappa"], lambda m: [
        "--grid", "kappa=1", "--fit-steps", "1", "--workers", "0"], None),
    "fit-activity": (neurodyn_main, ["fit-activity", "ring"], lambda m: [
        "--data", activity(m)], None),
    "generate": (neurodyn_main, ["generate"], lambda m: [
        "--model", ring(m), "--count", "60", "--held", "20", "--train-steps", "5"], None),
    "train": (flows_main, ["train"], lambda m: [
        "--data", "moons", "--steps", "10", "--width", "16", "--n-eval", "200"], None),
    "samples": (flows_main, ["experiment", "samples"], lambda m: [
        "--ns", "8,16", "--width", "8", "--k", "1", "--steps", "3"], None),
    "ntk-gap": (flows_main, ["experiment", "ntk-gap"], lambda m: [
        "--widths", "8,64", "--n", "4", "--k", "1", "--steps", "5", "--seeds", "1,2"], None),
}
DEFAULT = ["fit", "simulate", "eval"]


def _run(main, argv) -> None:
    code = main([str(a) for a in argv])
    # fit-activity's verdict on this small recording may be "no attractor" (exit 1, with its
    # config.json and metrics.json written and no model)
    assert code == 0 or (code == 1 and argv[0] == "fit-activity"), argv


def _metrics(out: Path) -> dict:
    """metrics.json without wall times, the run's own folder written as OUT."""
    return strip(json.loads((out / "metrics.json").read_text().replace(str(out), "OUT")))


@pytest.mark.parametrize("name", [n if n in DEFAULT else pytest.param(n, marks=pytest.mark.slow)
                                  for n in COMMANDS])
def test_config_is_resolved_and_reruns(name, models, tmp_path):
    main, words, options, override = COMMANDS[name]
    first = tmp_path / "first"
    _run(main, [*words, *options(models), "--out", first])
    record = json.loads((first / "config.json").read_text())
    assert list(nulls(record["config"])) == [], "unresolved defaults in config.json"
    again = tmp_path / "again"
    _run(main, [*words[:1], "--config", first / "config.json", "--out", again])
    assert _metrics(again) == _metrics(first)
    rerun = json.loads((again / "config.json").read_text())
    assert strip(rerun["config"], {"out"}) == strip(record["config"], {"out"})
    if override is not None:  # an option given beside --config wins, and changes the run
        other = tmp_path / "other"
        _run(main, [*words[:1], "--config", again / "config.json", *override, "--out", other])
        changed = json.loads((other / "config.json").read_text())
        assert changed["argv"][-3:-1] == override or changed["argv"][-4:-2] == override
        assert changed["config"] != rerun["config"]


@pytest.mark.slow
def test_flows_sample_reruns_from_its_sidecar(models, tmp_path):
    model = flows_model(models)
    _run(flows_main, ["sample", "--model", model, "--n", "40", "--out", tmp_path / "a.npy"])
    record = json.loads((tmp_path / "a.json").read_text())
    assert list(nulls(record["config"])) == []
    _run(flows_main, ["sample", "--config", tmp_path / "a.json", "--out", tmp_path / "b.npy"])
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))


def test_config_of_another_command_or_from_python_is_refused(models, tmp_path, capsys):
    fitted = Path(ring(models)) / "config.json"
    code = neurodyn_main(["simulate", "--config", str(fitted), "--out", str(tmp_path / "s")])
    assert code == 2 and "records a 'neurodyn fit' run" in capsys.readouterr().err
    record = json.loads(fitted.read_text()) | {"argv": None}
    (tmp_path / "py.json").write_text(json.dumps(record))
    code = neurodyn_main(["fit", "--config", str(tmp_path / "py.json")])
    assert code == 2 and "records no command line" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
