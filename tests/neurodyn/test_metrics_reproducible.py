"""``metrics.json`` holds only what the seed determines: two runs of one command with one seed
write byte-identical files; the wall times are in ``timing.json`` (README, "The run contract")."""

from __future__ import annotations

import json

import pytest

from neurodyn.cli import main


def _twice(tmp_path, argv):
    for name in ("a", "b"):
        assert main([*argv, "--out", str(tmp_path / name)]) == 0
    a, b = (tmp_path / name / "metrics.json" for name in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    return json.loads(a.read_text()), json.loads((tmp_path / "a" / "timing.json").read_text())


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    assert main(["fit", "ring", "--n", "32", "--steps", "2", "--out", str(root / "ring")]) == 0
    assert main(["fit", "torus", "--n", "12", "12", "--steps", "2",
                 "--out", str(root / "torus")]) == 0
    return root


def test_fit_records_wall_time_and_resume_step_in_timing(models):
    metrics = json.loads((models / "ring" / "metrics.json").read_text())
    timing = json.loads((models / "ring" / "timing.json").read_text())
    assert "resumed_from_step" not in metrics
    assert timing["resumed_from_step"] == 0 and timing["fit_seconds"] > 0


def test_simulate_same_seed_same_metrics(tmp_path, models, capsys):
    metrics, timing = _twice(tmp_path, ["simulate", "--model", str(models / "ring"),
                                        "--count", "2", "--duration", "5", "--seed", "0",
                                        "--json"])
    assert "seconds" not in metrics and timing["seconds"] > 0
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert printed["seconds"] > 0  # the command's line still reports it


def test_grid_cells_same_seed_same_metrics(tmp_path, models):
    metrics, timing = _twice(tmp_path, ["grid-cells", "--model", str(models / "torus"),
                                        "--duration", "20", "--seed", "0", "--shuffles", "2"])
    assert not {"wall_time_s", "realtime_factor"} & set(metrics)
    assert timing["wall_time_s"] > 0 and timing["realtime_factor"] > 0


def test_manifold_same_seed_same_metrics(tmp_path, models):
    metrics, timing = _twice(tmp_path, ["manifold", "--model", str(models / "ring"),
                                        "--samples", "40", "--no-topology", "--seed", "0"])
    assert "seconds" not in metrics and timing["seconds"]["total"] > 0


def test_perturbed_states_do_not_depend_on_memory_layout():
    """The initial states of ``simulate`` are bit-identical however the heap lies: the tangent
    projection used BLAS/LAPACK kernels whose rounding follows the arrays' alignment, and about
    one draw in 20 differed in the last bit within one process."""
    import numpy as np
    import torch

    from neurodyn.activation import Logistic
    from neurodyn.dynamics.perturbations import perturbed_states
    from neurodyn.geometry.populations import Ring, Torus
    from neurodyn.manifold import TargetManifold

    for geometry in (Ring(32), Torus(10, 12)):
        manifold = TargetManifold.bump(geometry, Logistic())
        ref = perturbed_states(manifold, 3, "noise", 0.3, seed=0)
        sizes = np.random.default_rng(0).integers(1, 64, size=100)
        held = []
        for size in sizes:  # shift the heap between draws
            held.append(torch.empty(int(size), dtype=torch.float64))
            assert torch.equal(perturbed_states(manifold, 3, "noise", 0.3, seed=0), ref)


def test_split_and_projection_against_least_squares():
    """The closed-form tangent projection agrees with least squares on a ring and a torus."""
    import torch

    from neurodyn.activation import Logistic
    from neurodyn.geometry.populations import Ring, Torus
    from neurodyn.manifold import TargetManifold, oblique_projection

    gen = torch.Generator().manual_seed(1)
    for geometry in (Ring(32), Torus(10, 12)):
        manifold = TargetManifold.bump(geometry, Logistic())
        psi = geometry.random_phase(4, gen)
        t = manifold.tangents(psi).flatten(1, -2)
        delta = torch.randn(t.shape[:-1], generator=gen, dtype=torch.float64)
        coef = torch.linalg.lstsq(t, delta.unsqueeze(-1)).solution
        expected = delta - (t @ coef).squeeze(-1)
        assert torch.allclose(oblique_projection(delta, t, t), expected, atol=1e-12)
        u = manifold.u_star(psi) + delta.reshape((4, *geometry.shape))
        along, normal = manifold.split(u, psi)
        assert torch.allclose(normal, expected.norm(dim=-1) / manifold.norm, atol=1e-12)
        assert torch.allclose(along, (t @ coef).squeeze(-1).norm(dim=-1) / manifold.norm,
                              atol=1e-12)
