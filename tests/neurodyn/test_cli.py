"""The neurodyn command line: file contracts, reproducibility and error messages.

In-process through ``main(argv)``; one real subprocess checks the exit status the shell sees.
"""

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from neurodyn.cli import main

N = 32  # neurons of the module's ring model


def run(*args, check=True):
    """Run ``neurodyn ARGS`` in this process; returns its exit status and stderr."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    proc = SimpleNamespace(returncode=code, stderr=err.getvalue())
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("ring")
    run("fit", "ring", "--out", out, "--n", N, "--steps", 10, "--seed", 1)
    return out


def test_fit_writes_contract_files(model_dir):
    for name in ("model.pt", "config.json", "metrics.json", "jacobian_spectrum.png",
                 "connectivity.png", "bump.png"):
        assert (model_dir / name).exists(), name
    metrics = json.loads((model_dir / "metrics.json").read_text())
    assert metrics["jacobian"]["n_zero"] == 1
    assert json.loads((model_dir / "config.json").read_text())["config"]["n"] == N


def test_simulate_perturbed_contract(model_dir, tmp_path):
    out = tmp_path / "sim"
    run("simulate", "--model", model_dir, "--out", out, "--perturb", "lesion", "--strength",
        0.3, "--count", 5, "--duration", 10, "--dt", 0.1, "--save-every", 10)
    z = np.load(out / "trajectory.npz")
    assert z["t"].shape == (11,)
    assert z["u"].shape == (11, 5, N) and z["r"].shape == (11, 5, N)
    for key in ("energy", "decoded", "distance"):
        assert z[key].shape == (11, 5), key
    assert np.all(np.diff(z["energy"], axis=0) <= 1e-9 * (1 + np.abs(z["energy"][:-1])))
    assert z["distance"][-1].max() < z["distance"][0].min()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["energy"]["ok"]


def test_simulate_is_reproducible_with_seed(model_dir, tmp_path):
    args = ("simulate", "--model", model_dir, "--perturb", "noise", "--count", 3, "--duration",
            2, "--noise", 0.05, "--seed", 3)
    run(*args, "--out", tmp_path / "a")
    run(*args, "--out", tmp_path / "b")
    a, b = np.load(tmp_path / "a/trajectory.npz"), np.load(tmp_path / "b/trajectory.npz")
    assert np.array_equal(a["u"], b["u"])


def test_simulate_init_file_and_velocity_file(model_dir, tmp_path):
    import torch

    from neurodyn.io import load_model

    net, _ = load_model(model_dir)
    u0 = net.manifold.u_star(torch.tensor([[0.0], [1.0]], dtype=torch.float64)).numpy()
    np.save(tmp_path / "u0.npy", u0)
    np.save(tmp_path / "v.npy", np.full((100, 2), 0.2))
    out = tmp_path / "pi"
    run("simulate", "--model", model_dir, "--out", out, "--init", tmp_path / "u0.npy",
        "--velocity-file", tmp_path / "v.npy", "--duration", 10, "--dt", 0.1)
    z = np.load(out / "trajectory.npz")
    moved = (z["decoded"][-1] - z["decoded"][0]) % (2 * np.pi)
    assert np.allclose(moved, 2.0, atol=1e-3)  # positive velocity: increasing angle
    # the driven run is audited by the power balance instead of being skipped
    energy = json.loads((out / "metrics.json").read_text())["energy"]
    assert energy["kind"] == "power" and energy["ok"] and energy["max_increase"] < 1e-6


@pytest.mark.parametrize("args, message", [
    (("--perturb", "squeeze"), "invalid choice"),
    (("--velocity", "spin:1"), "velocity='spin:1'"),
    (("--duration", "ten"), "--duration='ten'"),
    (("--count", 0), "argument --count"),
    (("--method", "rk4", "--noise", 0.1), "noise > 0 needs method='euler'"),
])
def test_simulate_bad_input(model_dir, tmp_path, args, message):
    proc = run("simulate", "--model", model_dir, "--out", tmp_path / "x", *args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_bad_files(model_dir, tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros((3, N - 1)))
    proc = run("simulate", "--model", model_dir, "--out", tmp_path / "x", "--init",
               tmp_path / "bad.npy", check=False)
    assert proc.returncode == 2 and "--init" in proc.stderr and f"(B, {N})" in proc.stderr
    nan = np.zeros((2, N))
    nan[1, 3] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    proc = run("simulate", "--model", model_dir, "--out", tmp_path / "x", "--init",
               tmp_path / "nan.npy", check=False)
    assert proc.returncode == 2 and "non-finite" in proc.stderr
    np.save(tmp_path / "v.npy", np.zeros((10, 3, 2)))
    proc = run("simulate", "--model", model_dir, "--out", tmp_path / "x", "--velocity-file",
               tmp_path / "v.npy", "--duration", 1, check=False)
    assert proc.returncode == 2 and "velocity array" in proc.stderr
    proc = run("simulate", "--model", tmp_path / "nowhere", "--out", tmp_path / "x", check=False)
    assert proc.returncode == 2 and "no model file" in proc.stderr


def test_fit_rejects_small_population(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "neurodyn.cli", "fit", "ring", "--out",
                           str(tmp_path / "x"), "--n", "4"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "at least 8" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = run("fit", "ring", "--out", tmp_path / "x", "--bogus", 1, check=False)
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr
