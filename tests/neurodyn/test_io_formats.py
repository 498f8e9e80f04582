"""Model files written by earlier versions of neurodyn load, compute the field they computed
when written, and simulate.

Each ``tests/formats/neurodyn-<commit>-<ring|torus>.pt`` was written by the library as it was at
that commit (its own ``fit`` and ``save_model``, see ``tests/formats/README.md``), and the
``.json`` beside it holds the field ``du/dt`` and the energy that code computed at a fixed
state. The commits are those where what a model file holds changed:

- 072abe6: the first ``learned`` family (per-mode polynomials in the power);
- 84a204d: ``learned`` with bounded per-mode functions (same fields, other meaning);
- 44960ac: the ``seal`` family, whose config has no ``variable`` yet (the power);
- de25906: ``seal`` with ``variable="amplitude"`` and the activation in the energy's config;
- 727e242: tensors on the CPU and the provenance (library version, commit, fit config) in extra.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

import neurodyn as nd
from neurodyn.io import ModelFormatError, load_model

FORMATS = Path(__file__).resolve().parents[1] / "formats"
# files that load with today's meaning of their fields
SAME = ["84a204d", "44960ac", "de25906", "727e242"]


def probe_state(path: Path) -> torch.Tensor:
    """The state the writer's code evaluated: the stored bump plus a fixed wave and offset."""
    u0 = torch.load(path, weights_only=True)["manifold_u0"].to(torch.float64)
    n = u0.numel()
    i = torch.arange(n, dtype=torch.float64)
    wave = 0.1 * torch.cos(2 * math.pi * 3 * i / n) + 0.05
    return (u0.reshape(-1) + wave).reshape(u0.shape)[None]


@pytest.mark.parametrize("geometry", ["ring", "torus"])
@pytest.mark.parametrize("commit", SAME)
def test_old_model_computes_what_it_computed_when_written(commit, geometry):
    path = FORMATS / f"neurodyn-{commit}-{geometry}.pt"
    want = json.loads(path.with_suffix(".json").read_text())
    net, extra = load_model(path)
    u = probe_state(path)
    with torch.no_grad():
        field = net.field(u).reshape(-1)
    expected = torch.tensor(want["field"], dtype=torch.float64)
    assert torch.allclose(field, expected, rtol=1e-9, atol=1e-12), (field - expected).abs().max()
    assert float(net.energy(u).detach().reshape(-1)[0]) == pytest.approx(want["energy"], rel=1e-9)
    assert extra["written_by"] == commit
    # control: a state off by a small wave gives another field (the comparison can fail)
    with torch.no_grad():
        other = net.field(u + 0.01 * torch.roll(u, 1, dims=-1)).reshape(-1)
    assert not torch.allclose(other, expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("commit", SAME + ["072abe6"])
def test_old_model_simulates_back_to_its_bump(commit):
    net, _ = load_model(FORMATS / f"neurodyn-{commit}-ring.pt")
    u = probe_state(FORMATS / f"neurodyn-{commit}-ring.pt")
    res = nd.simulate(net, u, duration=4.0, dt=0.1, save_every=5, progress=False)
    energy, distance = res.energy[:, 0], res.distance[:, 0]  # (time, batch)
    assert torch.isfinite(res.u).all()
    assert (energy[1:] <= energy[:-1] + 1e-9).all()  # the energy never rises
    assert distance[-1] < 0.1 * distance[0]  # the perturbed bump returns to the ring


def test_first_learned_family_loads_with_the_bounded_functions():
    """072abe6's ``learned`` files hold the same fields as every later ``learned`` file, so
    they cannot be told apart: they load with the bounded per-mode functions (the meaning for
    all but the first hour of the family). The target bump stays a fixed point (both
    formulations anchor it exactly); the field away from it differs, which this pins."""
    path = FORMATS / "neurodyn-072abe6-ring.pt"
    net, _ = load_model(path)
    want = torch.tensor(json.loads(path.with_suffix(".json").read_text())["field"],
                        dtype=torch.float64)
    with torch.no_grad():
        got = net.field(probe_state(path)).reshape(-1)
        bump = torch.load(path, weights_only=True)["manifold_u0"].to(torch.float64)[None]
        assert net.field(bump).abs().max() < 1e-6
    assert not torch.allclose(got, want, atol=1e-3)


def test_unknown_format_names_the_file(tmp_path):
    blob = torch.load(FORMATS / "neurodyn-727e242-ring.pt", weights_only=True)
    blob["format"] = "neurodyn.model/99"
    torch.save(blob, tmp_path / "model.pt")
    with pytest.raises(ModelFormatError, match="neurodyn.model/1"):
        load_model(tmp_path)
