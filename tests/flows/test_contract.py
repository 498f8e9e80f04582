"""flows on the run contract: bad inputs, planted pickles, locks, determinism, divergence.

Most cases run in-process through ``flows.cli.commands.main(argv)``; a few real subprocesses check
the exit codes and signals of the installed entry point.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from flows.cli._parsing import Formatter
from flows.cli.commands import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--steps", "30", "--width", "16", "--batch", "32", "--n-train", "200", "--n-eval",
        "40", "--seed", "1"]


def run(capsys, *args):
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


class Planted:
    """A pickle whose loading would create ``marker``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A trained tiny model and a set of good, bad and hostile input files."""
    d = tmp_path_factory.mktemp("files")
    assert main(["train", "--data", "moons", "--out", str(d / "run"), *TINY]) == 0
    marker = d / "pwned"
    good = np.random.default_rng(0).normal(size=(30, 2))
    np.save(d / "ok.npy", good)
    np.save(d / "d3.npy", np.ones((10, 3)))
    nan = good.copy()
    nan[3, 1] = np.nan
    np.save(d / "nan.npy", nan)
    inf = good.copy()
    inf[0, 0] = np.inf
    np.save(d / "inf.npy", inf)
    np.save(d / "complex.npy", good + 1j)
    np.save(d / "flat.npy", np.ones(10))
    np.save(d / "cube.npy", np.ones((2, 3, 4)))
    np.save(d / "norows.npy", np.ones((0, 2)))
    np.save(d / "strings.npy", np.array([["a", "b"]]))
    np.save(d / "objects.npy", np.array([Planted(marker), 1.0], dtype=object),
            allow_pickle=True)
    np.save(d / "huge.npy", np.zeros((1_000_000, 1), dtype=np.float32))
    (d / "empty.npy").write_bytes(b"")
    (d / "empty.csv").write_text("")
    (d / "garbage.csv").write_text("a,b\nc,d\n1+2j,x\n")
    (d / "data.txt").write_text("1,2\n")
    (d / "typo.csv").write_text("1,2x\n3,4\n5,6\n7,8\n")  # a mistyped row, not a header
    (d / "adir.npy").mkdir()
    (d / "afile").write_text("x")
    model = (d / "run" / "model.pt").read_bytes()
    (d / "trunc.pt").write_bytes(model[: len(model) // 2])
    (d / "text.pt").write_text("not a model")
    (d / "empty.pt").write_bytes(b"")
    torch.save({"W": torch.ones(2), "payload": Planted(marker)}, d / "planted.pt")
    (d / "planted_raw.pt").write_bytes(pickle.dumps(Planted(marker)))
    torch.save({"format": "other-model", "W": torch.ones(2)}, d / "foreign.pt")
    torch.save(torch.ones(3), d / "tensor.pt")
    blob = torch.load(d / "run" / "model.pt", weights_only=True)
    blob["state_dict"]["W"] = torch.ones(3, 3)
    torch.save(blob, d / "damaged.pt")
    (d / "nomodel").mkdir()
    for name, src in (("ck_trunc", "trunc.pt"), ("ck_tensor", "tensor.pt"),
                      ("ck_model", "run/model.pt")):
        (d / name).mkdir()
        shutil.copy(d / src, d / name / "checkpoint.pt")
    return d


def _bad_cases(d: Path) -> list[tuple[str, list, str]]:
    """(id, argv, the parameter the one line must name)."""
    m, out = d / "run", d / "never"
    tr = ["train", "--data", "moons", "--out", out]
    sa = ["sample", "--model", m, "--n", "10", "--out", d / "never.npy"]
    ev = ["eval", "--samples", d / "ok.npy"]
    xw = ["experiment", "width", "--out", out, "--widths", "8,16", "--n", "8", "--k", "1",
          "--steps", "2"]
    xs = ["experiment", "samples", "--out", out, "--ns", "8,16", "--width", "8", "--k", "1",
          "--steps", "2"]
    xr = ["experiment", "risk", "--out", out, "--ns", "8,16", "--seeds", "1,2", "--width", "8",
          "--k", "1", "--steps", "2"]
    xm = ["experiment", "memorization", "--out", out, "--ns", "8,16", "--width", "8",
          "--steps", "2"]
    xst = ["experiment", "stopping", "--out", out, "--ns", "8,16", "--seeds", "1,2",
           "--width", "8", "--k", "1", "--steps", "2"]
    xg = ["experiment", "ntk-gap", "--out", out, "--widths", "8,16", "--seeds", "1,2", "--n",
          "4", "--k", "1", "--steps", "2"]
    huge = str(10**13)
    cases = [
        # train: numbers
        ("width-zero", tr + ["--width", "0"], "width=0"),
        ("width-negative", tr + ["--width", "-3"], "width=-3"),
        ("width-text", tr + ["--width", "abc"], "--width"),
        ("width-float", tr + ["--width", "1.5"], "--width"),
        ("width-huge", tr + ["--width", huge], "width is too large"),
        ("steps-zero", tr + ["--steps", "0"], "steps=0"),
        ("steps-negative", tr + ["--steps", "-1"], "steps=-1"),
        ("steps-huge", tr + ["--steps", str(10**15)], "steps is too large"),
        ("batch-zero", tr + ["--batch", "0"], "batch=0"),
        ("batch-huge-ot", tr + ["--batch", str(10**9), "--coupling", "ot"], "batch is too large"),
        ("lr-zero", tr + ["--lr", "0"], "lr=0"),
        ("lr-negative", tr + ["--lr", "-1"], "lr=-1"),
        ("lr-nan", tr + ["--lr", "nan"], "lr=nan"),
        ("lr-inf", tr + ["--lr", "inf"], "lr=inf"),
        ("lr-text", tr + ["--lr", "fast"], "--lr"),
        ("seed-negative", tr + ["--seed", "-1"], "seed=-1"),
        ("seed-huge", tr + ["--seed", str(2**64)], "seed="),
        ("seed-float", tr + ["--seed", "1.5"], "--seed"),
        ("sigma-nan", tr + ["--sigma-min", "nan"], "sigma_min"),
        ("sigma-negative", tr + ["--sigma-min", "-0.1"], "sigma_min"),
        ("sigma-one", tr + ["--sigma-min", "1.0"], "sigma_min"),
        ("sigma-inf", tr + ["--sigma-min", "inf"], "sigma_min"),
        ("n-train-zero", tr + ["--n-train", "0"], "n_train=0"),
        ("n-train-huge", tr + ["--n-train", huge], "n_train is too large"),
        ("k-draws-zero", tr + ["--regime", "theory", "--k-draws", "0"], "k_draws=0"),
        ("n-eval-zero", tr + ["--n-eval", "0"], "n_eval=0"),
        ("n-eval-huge", tr + ["--n-eval", str(10**7)], "n_eval is too large"),
        ("fourier-negative", tr + ["--fourier", "-1"], "fourier=-1"),
        ("fourier-huge", tr + ["--fourier", huge], "fourier is too large"),
        ("checkpoint-every-zero", tr + ["--checkpoint-every", "0"], "checkpoint_every=0"),
        ("train-sample-steps-zero", tr + ["--sample-steps", "0"], "sample_steps=0"),
        ("train-sample-steps-huge", tr + ["--sample-steps", huge], "sample_steps is too large"),
        ("workers-negative", tr + ["--workers", "-1"], "workers=-1"),
        ("workers-huge", tr + ["--workers", "100000"], "workers=100000"),
        ("model-class-forward", tr + ["--model-class", "torch.nn:Linear", "--model-args",
                                      '{"in_features": 2, "out_features": 2}'], "forward(x, t)"),
        ("n-eval-one", tr + ["--n-eval", "1"], "n_eval=1"),
        ("data-csv-typo-first-row", ["train", "--data", d / "typo.csv", "--out", out], "'2x'"),
        ("experiment-out-empty", ["experiment", "risk", "--out", ""], "--out"),
        ("threads-zero", ["--threads", "0"] + tr, "threads=0"),
        ("threads-text", ["--threads", "x"] + tr, "--threads"),
        # train: choices and combinations
        ("solver-unknown", tr + ["--solver", "rk5"], "--solver"),
        ("regime-unknown", tr + ["--regime", "wild"], "--regime"),
        ("coupling-unknown", tr + ["--coupling", "hungarian"], "--coupling"),
        ("path-unknown", tr + ["--path", "curvy"], "--path"),
        ("theory-with-ot", tr + ["--regime", "theory", "--coupling", "ot"], "coupling='ot'"),
        ("target-path-source", tr + ["--path", "target", "--source", "circles"],
         "path='target'"),
        ("unknown-option", tr + ["--colour", "red"], "--colour"),
        ("missing-data", ["train", "--out", out], "--data"),
        # train: data and source files
        ("data-unknown", ["train", "--data", "blobs", "--out", out], "data='blobs'"),
        ("data-gmm0", ["train", "--data", "gmm0", "--out", out], "data='gmm0'"),
        ("data-gmm-huge-dim", ["train", "--data", "gmm10000000000", "--out", out],
         "data is too large"),
        ("data-missing", ["train", "--data", d / "missing.npy", "--out", out], "data="),
        ("data-directory", ["train", "--data", d / "adir.npy", "--out", out], "data="),
        ("data-empty-npy", ["train", "--data", d / "empty.npy", "--out", out], "data="),
        ("data-nan", ["train", "--data", d / "nan.npy", "--out", out], "non-finite"),
        ("data-inf", ["train", "--data", d / "inf.npy", "--out", out], "non-finite"),
        ("data-complex", ["train", "--data", d / "complex.npy", "--out", out], "complex128"),
        ("data-1d", ["train", "--data", d / "flat.npy", "--out", out], "data="),
        ("data-3d", ["train", "--data", d / "cube.npy", "--out", out], "data="),
        ("data-no-rows", ["train", "--data", d / "norows.npy", "--out", out], "data="),
        ("data-strings", ["train", "--data", d / "strings.npy", "--out", out], "data="),
        ("data-objects", ["train", "--data", d / "objects.npy", "--out", out], "data="),
        ("data-empty-csv", ["train", "--data", d / "empty.csv", "--out", out], "data="),
        ("data-garbage-csv", ["train", "--data", d / "garbage.csv", "--out", out], "data="),
        ("data-wrong-suffix", ["train", "--data", d / "data.txt", "--out", out], "data="),
        ("source-dimension", tr + ["--source", d / "d3.npy"], "has dimension 3"),
        ("source-unknown", tr + ["--source", "blobs"], "source='blobs'"),
        # train: --out
        ("out-is-file", ["train", "--data", "moons", "--out", d / "afile"], "out="),
        ("out-under-file", ["train", "--data", "moons", "--out", d / "afile" / "sub"], "out="),
        ("checkpoint-truncated", ["train", "--data", "moons", "--out", d / "ck_trunc", *TINY],
         "checkpoint="),
        ("checkpoint-a-tensor", ["train", "--data", "moons", "--out", d / "ck_tensor", *TINY],
         "checkpoint="),
        ("checkpoint-foreign", ["train", "--data", "moons", "--out", d / "ck_model", *TINY],
         "checkpoint="),
        # sample
        ("sample-n-zero", ["sample", "--model", m, "--n", "0", "--out", d / "s.npy"], "n=0"),
        ("sample-n-negative", ["sample", "--model", m, "--n", "-5", "--out", d / "s.npy"],
         "n=-5"),
        ("sample-n-text", ["sample", "--model", m, "--n", "ten", "--out", d / "s.npy"], "--n"),
        ("sample-n-huge", ["sample", "--model", m, "--n", huge, "--out", d / "s.npy"],
         "n is too large"),
        ("sample-steps-zero", sa + ["--steps", "0"], "steps=0"),
        ("sample-steps-huge", sa + ["--steps", str(10**14)], "steps is too large"),
        ("sample-seed-negative", sa + ["--seed", "-1"], "seed=-1"),
        ("sample-solver", sa + ["--solver", "leapfrog"], "--solver"),
        ("model-missing", ["sample", "--model", d / "none.pt", "--n", "3", "--out",
                           d / "s.npy"], "model="),
        ("model-dir-without-model", ["sample", "--model", d / "nomodel", "--n", "3", "--out",
                                     d / "s.npy"], "model="),
        ("model-empty", ["sample", "--model", d / "empty.pt", "--n", "3", "--out",
                         d / "s.npy"], "model="),
        ("model-truncated", ["sample", "--model", d / "trunc.pt", "--n", "3", "--out",
                             d / "s.npy"], "model="),
        ("model-text", ["sample", "--model", d / "text.pt", "--n", "3", "--out", d / "s.npy"],
         "model="),
        ("model-planted", ["sample", "--model", d / "planted.pt", "--n", "3", "--out",
                           d / "s.npy"], "model="),
        ("model-planted-raw", ["sample", "--model", d / "planted_raw.pt", "--n", "3", "--out",
                               d / "s.npy"], "model="),
        ("model-foreign", ["sample", "--model", d / "foreign.pt", "--n", "3", "--out",
                           d / "s.npy"], "model="),
        ("model-a-tensor", ["sample", "--model", d / "tensor.pt", "--n", "3", "--out",
                            d / "s.npy"], "model="),
        ("model-damaged", ["sample", "--model", d / "damaged.pt", "--n", "3", "--out",
                           d / "s.npy"], "model="),
        ("sample-out-suffix", ["sample", "--model", m, "--n", "3", "--out", d / "s.txt"],
         "out="),
        ("sample-out-directory", ["sample", "--model", m, "--n", "3", "--out", d / "adir.npy"],
         "out="),
        ("sample-out-under-file", ["sample", "--model", m, "--n", "3", "--out",
                                   d / "afile" / "s.npy"], "out="),
        ("sample-over-run-metrics", ["sample", "--model", m, "--n", "3", "--out",
                                     m / "metrics.npy"], "out="),
        ("sample-over-user-file", ["sample", "--model", m, "--n", "3", "--out", d / "ok.npy"],
         "out="),
        # eval
        ("eval-samples-missing", ["eval", "--samples", d / "no.npy", "--data", "moons"],
         "samples="),
        ("eval-samples-empty", ["eval", "--samples", d / "empty.npy", "--data", "moons"],
         "samples="),
        ("eval-samples-nan", ["eval", "--samples", d / "nan.npy", "--data", "moons"],
         "non-finite"),
        ("eval-samples-complex", ["eval", "--samples", d / "complex.npy", "--data", "moons"],
         "complex128"),
        ("eval-samples-1d", ["eval", "--samples", d / "flat.npy", "--data", "moons"],
         "samples="),
        ("eval-samples-directory", ["eval", "--samples", d / "adir.npy", "--data", "moons"],
         "samples="),
        ("eval-samples-objects", ["eval", "--samples", d / "objects.npy", "--data", "moons"],
         "samples="),
        ("eval-dimension-data", ["eval", "--samples", d / "d3.npy", "--data", "moons"],
         "dimension"),
        ("eval-dimension-reference", ev + ["--reference", d / "d3.npy"], "dimension"),
        ("eval-reference-missing", ev + ["--reference", d / "no.npy"], "reference="),
        ("eval-reference-nan", ev + ["--reference", d / "nan.npy"], "non-finite"),
        ("eval-metric-unknown", ev + ["--data", "moons", "--metric", "kl"], "--metric"),
        ("eval-seed-negative", ev + ["--data", "moons", "--seed", "-1"], "seed=-1"),
        ("eval-data-unknown", ev + ["--data", "blobs"], "data='blobs'"),
        ("eval-no-reference", ev, "--reference"),
        ("eval-both-references", ev + ["--data", "moons", "--reference", d / "ok.npy"],
         "--reference"),
        ("eval-huge", ["eval", "--samples", d / "huge.npy", "--reference", d / "huge.npy"],
         "samples is too large"),
        ("eval-out-is-file", ev + ["--data", "moons", "--out", d / "afile"], "out="),
        # experiment
        ("width-widths-zero", xw[:5] + ["0,16"] + xw[6:], "widths=0"),
        ("width-widths-empty", xw[:5] + [","] + xw[6:], "widths=[]"),
        ("width-widths-text", xw[:5] + ["a,b"] + xw[6:], "--widths"),
        ("width-widths-huge", xw[:5] + [huge] + xw[6:], "width is too large"),
        ("width-n-zero", xw + ["--n", "0"], "n=0"),
        ("width-n-huge", xw + ["--n", str(10**6)], "n is too large"),
        ("width-k-zero", xw + ["--k", "0"], "k=0"),
        ("width-steps-zero", xw + ["--steps", "0"], "steps=0"),
        ("width-lr-negative", xw + ["--lr", "-1"], "lr=-1"),
        ("width-lr-nan", xw + ["--lr", "nan"], "lr=nan"),
        ("width-seed-negative", xw + ["--seed", "-2"], "seed=-2"),
        ("width-data-unknown", xw + ["--data", "blobs"], "data='blobs'"),
        ("width-data-nan", xw + ["--data", d / "nan.npy"], "non-finite"),
        ("width-out-is-file", xw[:3] + [d / "afile"] + xw[4:], "out="),
        ("samples-ns-zero", xs[:5] + ["0"] + xs[6:], "ns=0"),
        ("samples-width-zero", xs + ["--width", "0"], "width=0"),
        ("samples-ns-huge", xs[:5] + [str(10**12)] + xs[6:], "n is too large"),
        ("experiment-kind", ["experiment", "depth", "--out", out], "KIND"),
        ("risk-ns-zero", xr[:5] + ["0,16"] + xr[6:], "ns=0"),
        ("risk-ns-repeated", xr[:5] + ["16,16"] + xr[6:], "repeats"),
        ("risk-seeds-negative", xr + ["--seeds=-1,2"], "seeds=-1"),
        ("risk-seeds-text", xr + ["--seeds", "a"], "--seeds"),
        ("risk-data-finite", xr + ["--data", "digits"], "data='digits'"),
        ("risk-data-unknown", xr + ["--data", "blobs"], "data='blobs'"),
        ("risk-n-test-zero", xr + ["--n-test", "0"], "n_test=0"),
        ("risk-n-samples-negative", xr + ["--n-samples=-1"], "n_samples=-1"),
        ("risk-width-huge", xr + ["--width", huge], "width is too large"),
        ("risk-lr-nan", xr + ["--lr", "nan"], "lr=nan"),
        ("risk-steps-zero", xr + ["--steps", "0"], "steps=0"),
        ("risk-out-is-file", xr[:3] + [d / "afile"] + xr[4:], "out="),
        ("memorization-ns-two", xm[:5] + ["2,16"] + xm[6:], "ns=2"),
        ("memorization-steps-zero", xm + ["--steps", "0"], "steps=0"),
        ("memorization-width-zero", xm + ["--width", "0"], "width=0"),
        ("memorization-seed-negative", xm + ["--seed=-1"], "seed=-1"),
        ("memorization-data-unknown", xm + ["--data", "blobs"], "data='blobs'"),
        ("memorization-ns-above-rows", xm[:5] + ["5000"] + xm[6:] + ["--data", "digits"],
         "1797 rows"),
        ("memorization-n-samples-huge", xm + ["--n-samples", huge], "n_samples is too large"),
        # experiment: the sweep options, refused before the run directory is made
        *[(f"{x[1]}-workers-negative", x + ["--workers", "-1"], "workers=-1")
          for x in (xw, xs, xr, xm, xst, xg)],
        *[(f"{x[1]}-workers-text", x + ["--workers", "two"], "--workers")
          for x in (xr, xm, xst, xg)],
        *[(f"{x[1]}-workers-huge", x + ["--workers", "5000"], "workers=5000") for x in (xr, xg)],
        # the command line itself
        ("no-command", [], "COMMAND"),
        ("unknown-command", ["fit"], "fit"),
    ]
    return cases


CASE_IDS = [c[0] for c in _bad_cases(Path("/x"))]


@pytest.mark.parametrize("case", CASE_IDS)
def test_bad_input_exits_2_with_one_line(files, capsys, case):
    (args, needle), = [(a, n) for i, a, n in _bad_cases(files) if i == case]
    metrics_before = (files / "run" / "metrics.json").read_bytes()
    code, out, err = run(capsys, *args)
    assert code == 2, (case, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flows"), err
    assert needle in lines[0], (needle, err)
    assert "Traceback" not in err
    assert not (files / "pwned").exists()  # nothing planted ran
    assert not (files / "never").exists()  # refused before anything was written
    assert (files / "run" / "metrics.json").read_bytes() == metrics_before


def test_bad_input_suite_is_large():
    assert len(set(CASE_IDS)) == len(CASE_IDS) >= 80


def test_planted_pickles_never_run(files, tmp_path, capsys):
    marker = files / "pwned"
    # the checkpoint of a resumed training
    for name in ("planted.pt", "planted_raw.pt"):
        out = tmp_path / name
        out.mkdir()
        shutil.copy(files / name, out / "checkpoint.pt")
        code, _, err = run(capsys, "train", "--data", "moons", "--out", out, *TINY)
        assert code == 2 and "checkpoint=" in err and "--fresh" in err
        assert not (out / "config.json").exists()
    # the model of flows sample, and an object .npy as data, source, samples and reference
    assert run(capsys, "sample", "--model", files / "planted.pt", "--n", 2, "--out",
               tmp_path / "s.npy")[0] == 2
    for args in (["train", "--data", files / "objects.npy", "--out", tmp_path / "a"],
                 ["train", "--data", "moons", "--source", files / "objects.npy", "--out",
                  tmp_path / "b"],
                 ["eval", "--samples", files / "objects.npy", "--data", "moons"],
                 ["eval", "--samples", files / "ok.npy", "--reference", files / "objects.npy"]):
        assert run(capsys, *args)[0] == 2
    assert not marker.exists()
    # control: the same bytes, unpickled without restriction, do run
    with open(files / "planted_raw.pt", "rb") as fh:
        pickle.load(fh)
    assert marker.exists()
    marker.unlink()


def test_planted_files_at_the_other_load_sites_run_nothing(files, tmp_path, capsys):
    """The labels file of a class-conditional training, the training set of the memorization
    metric, and a model file whose recorded user-module target names a function that runs a
    command: each is refused (exit 2) and nothing runs."""
    marker = files / "pwned"
    code, _, err = run(capsys, "train", "--data", "moons", "--labels", files / "objects.npy",
                       "--out", tmp_path / "lab", *TINY)
    assert code == 2 and "labels=" in err and not (tmp_path / "lab").exists()
    code, _, err = run(capsys, "eval", "--samples", files / "ok.npy", "--metric",
                       "memorization", "--train", files / "objects.npy")
    assert code == 2 and "train=" in err
    blob = torch.load(files / "run" / "model.pt", weights_only=True)
    evil = {"format": blob["format"], "kind": "module", "state_dict": {}, "config": {},
            "spec": {"target": "subprocess:run", "args": {"args": ["touch", str(marker)]},
                     "classes": 0, "dim": 2}}
    torch.save(evil, tmp_path / "evil.pt")
    code, _, err = run(capsys, "sample", "--model", tmp_path / "evil.pt", "--n", 2, "--out",
                       tmp_path / "s.npy")
    assert code == 2 and "subprocess:run" in err and "not a torch.nn.Module" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not marker.exists() and not (tmp_path / "s.npy").exists()


def test_checkpoint_of_another_config_is_refused_and_fresh_starts_over(files, tmp_path,
                                                                       capsys):
    out = tmp_path / "run"
    shutil.copytree(files / "run", out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    wider = [*TINY[:2], "--width", "17", *TINY[4:]]
    code, _, err = run(capsys, "train", "--data", "moons", "--out", out, *wider)
    assert code == 2 and "different config (differs in ['width'])" in err
    assert "--fresh" in err and len(err.splitlines()) == 1
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before  # nothing of the existing run was touched
    code, _, _ = run(capsys, "train", "--data", "moons", "--out", out, *wider, "--fresh")
    assert code == 0
    assert json.loads((out / "config.json").read_text())["config"]["width"] == 17


def test_config_json_of_an_older_shape_is_refused_naming_its_keys(tmp_path, capsys):
    out = tmp_path / "old"
    out.mkdir()
    older = json.dumps({"command": "flows train", "config": {"width": 16}, "seed": 1})
    (out / "config.json").write_text(older)
    code, stdout, err = run(capsys, "train", "--data", "moons", "--out", out, *TINY)
    assert code == 2 and stdout == "" and "Traceback" not in err
    line, = err.splitlines()
    assert str(out / "config.json") in line and "older shape" in line
    assert "missing keys ['argv', 'version']" in line and "--fresh" in line
    assert (out / "config.json").read_text() == older  # left as it was
    # a command without --fresh names the keys and suggests another --out
    ev = tmp_path / "ev"
    ev.mkdir()
    (ev / "config.json").write_text(json.dumps({"command": "flows eval", "metric": "w2"}))
    code, _, err = run(capsys, "eval", "--samples", tmp_path / "none.npy", "--data", "moons",
                       "--out", ev)
    assert code == 2  # the missing samples file is refused first
    np.save(tmp_path / "s.npy", np.zeros((5, 2)))
    code, _, err = run(capsys, "eval", "--samples", tmp_path / "s.npy", "--data", "moons",
                       "--out", ev)
    line, = err.splitlines()
    assert code == 2 and "extra keys ['metric']" in line and "choose another --out" in line


@pytest.mark.slow
def test_fresh_training_replaces_a_config_json_of_an_older_shape(tmp_path, capsys):
    out = tmp_path / "old"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"command": "flows train", "seed": 1}))
    assert run(capsys, "train", "--data", "moons", "--out", out, *TINY, "--fresh")[0] == 0
    assert sorted(json.loads((out / "config.json").read_text())) == [
        "argv", "command", "config", "seed", "version"]


def test_config_json_shape_and_same_seed_same_files(files, tmp_path, capsys):
    a = files / "run"
    b = tmp_path / "again"
    assert run(capsys, "train", "--data", "moons", "--out", b, *TINY)[0] == 0
    ca, cb = (json.loads((d / "config.json").read_text()) for d in (a, b))
    assert sorted(ca) == ["argv", "command", "config", "seed", "version"]
    assert ca["command"] == "flows train" and ca["seed"] == 1
    assert ca["argv"][:3] == ["train", "--data", "moons"]
    assert ca["config"] == cb["config"] and ca["version"] == cb["version"]
    assert (a / "metrics.json").read_bytes() == (b / "metrics.json").read_bytes()
    ma, mb = (torch.load(d / "model.pt", weights_only=True) for d in (a, b))
    sa, sb = ma["state_dict"], mb["state_dict"]
    assert torch.equal(sa["W"], sb["W"]) and torch.equal(sa["A"], sb["A"])
    for d in (a, b):
        assert run(capsys, "sample", "--model", d, "--n", 25, "--out", tmp_path / f"{d.name}.npy",
                   "--seed", 4)[0] == 0
    assert np.array_equal(np.load(tmp_path / "run.npy"), np.load(tmp_path / "again.npy"))
    for name in ("e1", "e2"):
        assert run(capsys, "eval", "--samples", tmp_path / "run.npy", "--data", "moons",
                   "--out", tmp_path / name)[0] == 0
    assert (tmp_path / "e1" / "metrics.json").read_bytes() == \
        (tmp_path / "e2" / "metrics.json").read_bytes()


def test_sample_sidecar_rule(files, tmp_path, capsys):
    out = tmp_path / "s.npy"
    assert run(capsys, "sample", "--model", files / "run", "--n", 5, "--out", out)[0] == 0
    side = json.loads((tmp_path / "s.json").read_text())
    assert side["command"] == "flows sample" and side["config"]["out"] == "s.npy"
    assert side["nfe"] == 40 and side["dim"] == 2
    # an earlier flows sample of the same file is replaced
    assert run(capsys, "sample", "--model", files / "run", "--n", 7, "--out", out)[0] == 0
    assert np.load(out).shape == (7, 2)
    # a sidecar name that flows sample did not write is refused and left alone
    (tmp_path / "t.json").write_text('{"mine": 1}')
    code, _, err = run(capsys, "sample", "--model", files / "run", "--n", 5, "--out",
                       tmp_path / "t.npy")
    assert code == 2 and "t.json" in err and not (tmp_path / "t.npy").exists()
    assert (tmp_path / "t.json").read_text() == '{"mine": 1}'


def test_diverging_training_exits_1_naming_lr_without_a_model(tmp_path, capsys):
    for regime in ("practice", "theory"):
        out = tmp_path / regime
        code, stdout, err = run(capsys, "train", "--data", "moons", "--out", out, *TINY,
                                "--regime", regime, "--lr", "1e6", "--n-train", "32")
        assert code == 1 and stdout == ""
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert "diverged at step" in err and "lower lr (now 1e+06)" in err
        assert (out / "config.json").exists()
        assert not (out / "model.pt").exists() and not (out / "metrics.json").exists()
        assert not (out / "checkpoint.pt").exists()


def test_help_states_every_default(capsys):
    parser = build_parser()
    subs = [a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)]
    fmt = Formatter("flows")
    checked = 0
    parsers = []
    for name, sub in subs[0].choices.items():  # the commands, and the kinds of experiment
        nested = [a for a in sub._actions if isinstance(getattr(a, "choices", None), dict)]
        parsers += [(f"{name} {k}", p) for a in nested for k, p in a.choices.items()]
        parsers.append((name, sub))
    assert {"experiment risk", "experiment memorization"} <= {n for n, _ in parsers}
    for name, sub in parsers:
        for action in sub._actions:
            if action.required or action.dest in ("help", "fresh", "debug", "kind"):
                continue
            if any(action in g._group_actions and g.required
                   for g in sub._mutually_exclusive_groups):
                continue  # one of them is required: no default
            text = fmt._get_help_string(action) or ""
            assert "default" in text, (name, action.dest, text)
            checked += 1
    assert checked >= 30
    assert main(["train", "--help"]) == 0
    assert "(default: 256)" in capsys.readouterr().out


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def test_ctrl_c_exits_130_and_resume_equals_uninterrupted(tmp_path, capsys):
    """A real ``flows train`` process: a second writer is refused while it holds the lock;
    SIGINT ends it with 130 and one line; the resumed run equals an uninterrupted one."""
    args = ["--data", "moons", "--steps", "4000", "--width", "16", "--batch", "32",
            "--n-train", "200", "--n-eval", "40", "--seed", "2", "--checkpoint-every", "50"]
    out = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "train", "--out", str(out),
                             *args], env=_env(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not (out / "checkpoint.pt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    # a second writer while the first trains is refused
    code, _, err = run(capsys, "train", "--out", out, *args)
    assert code == 2 and f"in use by another run (pid {proc.pid})" in err
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    line, = stderr.splitlines()
    assert line.startswith("flows train: interrupted: ") and "holds step" in line
    step = int(line.split("holds step ")[1].split()[0])
    assert 0 < step < 4000 and not (out / "model.pt").exists()
    assert run(capsys, "train", "--out", out, *args)[0] == 0
    assert run(capsys, "train", "--out", tmp_path / "whole", *args)[0] == 0
    assert (out / "metrics.json").read_bytes() == (tmp_path / "whole" / "metrics.json").read_bytes()
    a, b = (torch.load(d / "model.pt", weights_only=True) for d in (out, tmp_path / "whole"))
    a, b = a["state_dict"], b["state_dict"]
    assert torch.equal(a["W"], b["W"]) and torch.equal(a["A"], b["A"])


def _scaled_model(files: Path, name: str, factor: float) -> Path:
    """The trained model with W and A multiplied by ``factor`` (finite, but explosive)."""
    blob = torch.load(files / "run" / "model.pt", weights_only=True)
    for k in ("W", "A"):
        blob["state_dict"][k] = blob["state_dict"][k] * factor
    torch.save(blob, files / name)
    return files / name


def test_sampling_that_diverges_exits_1_naming_time_and_steps(files, tmp_path, capsys):
    model = _scaled_model(files, "explosive.pt", 3e3)
    out = tmp_path / "s.npy"
    code, stdout, err = run(capsys, "sample", "--model", model, "--n", 50, "--out", out,
                            "--solver", "euler", "--steps", 20)
    assert code == 1 and stdout == "" and "Traceback" not in err
    line, = err.splitlines()
    assert line.startswith("flows sample: ") and "became non-finite at t=" in line
    assert "raise steps (now 20)" in line and "method than 'euler'" in line
    step = int(line.split("(step ")[1].split()[0])
    assert 1 < step <= 20
    assert not out.exists() and not out.with_suffix(".json").exists()
    # a field that is non-finite at the source points already names the model
    broken = _scaled_model(files, "broken.pt", 1e30)
    code, _, err = run(capsys, "sample", "--model", broken, "--n", 5, "--out", out)
    line, = err.splitlines()
    assert code == 1 and "first evaluation" in line and "retrain the model" in line
    # the control: the trained model itself samples fine with the same options
    assert run(capsys, "sample", "--model", files / "run", "--n", 50, "--out", out,
               "--solver", "euler", "--steps", 20)[0] == 0
