"""NWB exports follow NWB's best practices: nwbinspector finds nothing critical, no
best-practice violation and no suggestion the library can act on (experimenter and institution
are the user's to give; given, nothing is left). ``--nwb`` on simulate and grid-cells writes
the file beside the run; an older file's module name still reads."""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.cli import main
from neurodyn.interop import read_nwb, write_nwb

pytest.importorskip("pynwb")
inspector = pytest.importorskip("nwbinspector")

#: what only the user can fill in (write_nwb's experimenter= and institution=)
USERS = {"check_experimenter_exists", "check_institution"}


def findings(path) -> list[tuple[str, str]]:
    levels = {"CRITICAL", "BEST_PRACTICE_VIOLATION", "BEST_PRACTICE_SUGGESTION"}
    return [(m.importance.name, m.check_function_name)
            for m in inspector.inspect_nwbfile(nwbfile_path=str(path))
            if m.importance.name in levels]


def test_write_nwb_has_no_findings(tmp_path):
    t = np.arange(100) * 0.02
    pos = np.c_[0.5 + 0.3 * np.cos(t), 0.5 + 0.3 * np.sin(t)]
    rates = np.random.default_rng(0).uniform(size=(100, 4))
    path = write_nwb(tmp_path / "a.nwb", t, pos, rates, np.ones((4, 3, 3)), np.linspace(0, 1, 4),
                     experimenter="Doe, Jane", institution="A university")
    assert findings(path) == []
    back = read_nwb(path)  # a regular clock is stored as a rate; the times read back exactly
    assert np.array_equal(back["t"], t) and np.array_equal(back["rates"], rates)
    # control: irregular times stay timestamps, and the inspector's checks do fire
    jitter = t + np.where(np.arange(100) >= 50, 0.005, 0.0)  # one late step
    odd = write_nwb(tmp_path / "b.nwb", jitter, pos, rates, subject={"subject_id": "x"})
    assert np.array_equal(read_nwb(odd)["t"], jitter)
    assert ("BEST_PRACTICE_VIOLATION", "check_subject_species_exists") in findings(odd)


@pytest.mark.slow
def test_cli_exports_leave_only_what_the_user_must_give(tmp_path):
    assert main(["fit", "torus", "--out", str(tmp_path / "torus"), "--n", "12", "12",
                 "--steps", "2"]) == 0
    assert main(["grid-cells", "--model", str(tmp_path / "torus"), "--out",
                 str(tmp_path / "grid"), "--duration", "10", "--shuffles", "0", "--nwb"]) == 0
    assert main(["simulate", "--model", str(tmp_path / "torus"), "--out", str(tmp_path / "sim"),
                 "--count", "2", "--duration", "20", "--save-every", "1", "--nwb"]) == 0
    for run in ("grid", "sim"):
        path = tmp_path / run / "activity.nwb"
        assert {name for _, name in findings(path)} <= USERS, run
    grid = read_nwb(tmp_path / "grid" / "activity.nwb")
    with np.load(tmp_path / "grid" / "track.npz") as track:
        assert np.allclose(grid["t"], track["t"]) and np.array_equal(grid["position"],
                                                                     track["position"])
    sim = read_nwb(tmp_path / "sim" / "activity.nwb")
    assert sim["rates"].shape == (201, 2, 144) and "position" not in sim
    assert np.allclose(sim["t"], np.arange(201) * 0.1 * 0.01)  # tau = 0.01 s
