"""Refused commands claim nothing: every argument is checked before ``--out`` is created or
locked, so a command refused with exit 2 names the option in its one line and leaves no
directory behind (README, "The run contract")."""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.cli import main


def _refused(capsys, argv, out, option):
    capsys.readouterr()
    code = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and option in err, err
    assert not out.exists(), sorted(p.name for p in out.iterdir())


@pytest.mark.parametrize("argv, option", [
    (["fit", "ring", "--n", "4"], "--n"),
    (["fit", "torus", "--n", "2", "2"], "--n"),
    (["fit", "ring", "--a", "nan"], "--a"),
    (["fit", "ring", "--a", "inf", "--n", "16"], "--a"),
])
def test_fit_refuses_before_claiming_out(tmp_path, capsys, argv, option):
    _refused(capsys, [*argv, "--steps", "2"], tmp_path / "run", option)


@pytest.fixture(scope="module")
def ring_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "ring"
    assert main(["fit", "ring", "--n", "32", "--steps", "2", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("extra, option", [
    (["--noise", "0.1", "--method", "rk4"], "--method"),
    (["--velocity", "ou:0.2:0"], "--velocity"),
    (["--velocity", "steps:0.1,-0.1:0"], "--velocity"),
    (["--velocity", "constant:0.1,0.2,0.3"], "--velocity"),
    (["--velocity-file", "SHORT"], "--velocity-file"),
    (["--velocity-file", "WIDE"], "--velocity-file"),
])
def test_simulate_refuses_before_claiming_out(tmp_path, capsys, ring_model, extra, option):
    np.save(tmp_path / "short.npy", np.zeros(3))            # 0.3 tau of a 1 tau run
    np.save(tmp_path / "wide.npy", np.zeros((20, 2, 3)))    # a ring takes one axis
    extra = [str(tmp_path / f"{x.lower()}.npy") if x in ("SHORT", "WIDE") else x for x in extra]
    _refused(capsys, ["simulate", "--model", str(ring_model), "--duration", "1", "--count",
                      "2", *extra], tmp_path / "run", option)


def test_simulate_with_a_checked_velocity_still_runs(tmp_path, capsys, ring_model):
    np.save(tmp_path / "v.npy", np.full(20, 0.05))
    for i, extra in enumerate([["--velocity", "ou:0.2:1"], ["--velocity-file",
                                                            str(tmp_path / "v.npy")]]):
        out = tmp_path / f"run{i}"
        code = main(["simulate", "--model", str(ring_model), "--duration", "1", "--count", "2",
                     "--out", str(out), *extra])
        assert code == 0, capsys.readouterr().err
        assert (out / "metrics.json").exists()


@pytest.mark.parametrize("grid", ["noise=0,0.1", "noise=0.1,nan", "n=4,64"])
def test_sweep_refuses_a_grid_value_before_any_cell_runs(tmp_path, capsys, grid):
    _refused(capsys, ["sweep", "diffusion", "--grid", grid, "--fit-steps", "2",
                      "--workers", "0"], tmp_path / "run", "--grid")


def test_grid_cells_refuses_a_bad_out_before_simulating(tmp_path, capsys):
    import time

    model = tmp_path / "torus"
    assert main(["fit", "torus", "--n", "12", "12", "--steps", "2", "--out", str(model)]) == 0
    (tmp_path / "file").write_text("not a directory")
    capsys.readouterr()
    start = time.perf_counter()
    # the default 600 s trajectory takes far longer than this to simulate
    code = main(["grid-cells", "--model", str(model), "--out", str(tmp_path / "file")])
    err = capsys.readouterr().err
    assert code == 2 and "out=" in err and len(err.strip().splitlines()) == 1, err
    assert time.perf_counter() - start < 20.0


def test_an_empty_out_is_refused_not_read_as_the_working_directory(tmp_path, capsys,
                                                                    ring_model, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["simulate", "--model", str(ring_model), "--duration", "1", "--out", ""])
    err = capsys.readouterr().err
    assert code == 2 and "out=''" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seed", [1.5, "0", 2.0])
def test_energies_refuse_a_seed_that_is_not_an_integer(seed):
    from neurodyn.activation import make_activation
    from neurodyn.energies.neural import MLPEnergy
    from neurodyn.energies.seal import SealEnergy
    from neurodyn.geometry.populations import Ring

    g = Ring(16)
    with pytest.raises(ValueError, match="seed="):
        SealEnergy(g, make_activation(), seed=seed)
    with pytest.raises(ValueError, match="seed="):
        MLPEnergy(g, (4,), seed=seed)
