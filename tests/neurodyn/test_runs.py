"""The run layer (:mod:`neurodyn.runs`): a run checks its whole input before it claims its
directory, and what it checked is what it runs on -- each piece built once."""

from __future__ import annotations

import pytest

from _runkit import BadInput
from neurodyn.fitting import core, plan
from neurodyn.fitting.core import FitConfig
from neurodyn.fitting.plan import prepare
from neurodyn.fitting.streamed import DENSE_DESIGN_MAX_NEURONS
from neurodyn.runs.fit import fit_run


def _counting(monkeypatch, module, names: tuple[str, ...]) -> dict[str, int]:
    """Wrap ``module``'s functions ``names`` so that each call is counted."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        original = getattr(module, name)

        def wrapper(*args, _name=name, _original=original, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)
    return calls


def test_a_fit_run_builds_its_geometry_and_manifold_once(tmp_path, monkeypatch):
    calls = _counting(monkeypatch, plan, ("build_geometry", "fittable_manifold",
                                          "template_harmonics"))
    metrics = fit_run(FitConfig(n=16, steps=1, batch=2, check_kappa=False), tmp_path / "fit")
    assert (tmp_path / "fit" / "model.pt").exists() and "final_loss" in metrics
    # the plan's geometry and manifold serve the check, config.json, the fit and the model
    assert calls == {"build_geometry": 1, "fittable_manifold": 1, "template_harmonics": 0}


def test_a_template_fit_builds_its_harmonics_once(monkeypatch):
    calls = _counting(monkeypatch, plan, ("build_geometry", "template_harmonics"))
    result = core.fit(FitConfig(n=16, steps=1, batch=2, family="template"))
    assert result.network.fit_config["bandwidth"] == result.network.energy_fn.harmonics
    assert calls == {"build_geometry": 1, "template_harmonics": 1}


def test_a_fit_too_large_for_memory_is_refused_before_its_directory_exists(tmp_path):
    out = tmp_path / "fit"
    with pytest.raises(BadInput, match=r"n/batch is too large.*reduce n/batch"):
        fit_run(FitConfig(n=10**6, batch=10**6), out)
    assert not out.exists()


def test_the_plan_decides_the_design_once():
    side = int(DENSE_DESIGN_MAX_NEURONS ** 0.5) + 1  # just above the dense design's limit
    assert prepare(FitConfig(geometry="torus", n=(side, side))).streamed
    assert not prepare(FitConfig(geometry="torus", n=(side, side)), design="dense").streamed
    assert not prepare(FitConfig(geometry="torus", n=(side, side), family="spectral")).streamed
    assert not prepare(FitConfig(n=64)).streamed


def test_a_grid_cell_run_takes_the_network_step_it_checked(tmp_path, monkeypatch):
    """The network's step (its Jacobian spectrum) is computed once: by the check before
    ``--out`` is claimed, and the simulation runs on it."""
    from neurodyn.cli import main
    from neurodyn.spatial.gridcells import run

    assert main(["fit", "torus", "--n", "12", "12", "--steps", "2", "--out",
                 str(tmp_path / "model")]) == 0
    calls = _counting(monkeypatch, run, ("network_step",))
    assert main(["grid-cells", "--model", str(tmp_path / "model"), "--out",
                 str(tmp_path / "grid"), "--duration", "2", "--cells", "4",
                 "--shuffles", "0"]) == 0
    assert calls["network_step"] == 1
    assert (tmp_path / "grid" / "metrics.json").exists()
