"""Model files written by earlier versions of flows load (converted where their format is an
older one), give the velocities they gave when written, and sample.

``tests/formats/flows-<commit>.pt`` was written by the library at that commit (its own
``train`` and ``save_model``, see ``tests/formats/README.md``); the ``.json`` beside it holds
the velocity that code computed at fixed points and times:

- 3f71f9e: ``flows-model-1``, the first field (no Fourier time features in its spec default);
- 4a5d189: ``flows-model-1`` through the run contract (weights-only file, Fourier time);
- 4e43770: ``flows-model-2`` (``kind``, ``state_dict``, ``classes``), today's format.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from _runkit import BadInput
from flows.field.module import LEGACY_MODEL_FORMATS, MODEL_FORMAT
from flows.runs.sampling import run_sample
from flows.training.checkpoint import load_model

FORMATS = Path(__file__).resolve().parents[1] / "formats"
FILES = {"3f71f9e": "flows-model-1", "4a5d189": "flows-model-1", "4e43770": "flows-model-2"}


def test_every_earlier_format_has_a_file():
    assert set(FILES.values()) == {MODEL_FORMAT, *LEGACY_MODEL_FORMATS}


@pytest.mark.parametrize("commit", sorted(FILES))
def test_old_model_gives_the_velocity_it_gave_when_written(commit):
    path = FORMATS / f"flows-{commit}.pt"
    assert torch.load(path, weights_only=True)["format"] == FILES[commit]
    want = json.loads(path.with_suffix(".json").read_text())
    field, config = load_model(path)
    assert field.spec.to_dict() == {"classes": 0, **want["spec"]}
    assert config["data"] == "moons" and config["width"] == 16
    x, t = torch.tensor(want["x"]), torch.tensor(want["t"])
    with torch.no_grad():
        v = field(x, t)
    assert torch.allclose(v, torch.tensor(want["v"]), rtol=1e-6, atol=1e-6)
    with torch.no_grad():  # control: other times give other velocities
        assert not torch.allclose(field(x, t.flip(0)), torch.tensor(want["v"]), atol=1e-3)


@pytest.mark.parametrize("commit", sorted(FILES))
def test_old_model_samples(commit, tmp_path):
    run = run_sample(FORMATS / f"flows-{commit}.pt", n=64, out=tmp_path / "x.npy", steps=4)
    x = np.load(run.out if hasattr(run, "out") else tmp_path / "x.npy")
    assert x.shape == (64, 2) and np.isfinite(x).all()


def test_foreign_format_lists_the_readable_ones(tmp_path):
    torch.save({"format": "flows-model-0", "W": torch.zeros(2)}, tmp_path / "model.pt")
    with pytest.raises(BadInput, match="flows-model-1"):
        load_model(tmp_path)
