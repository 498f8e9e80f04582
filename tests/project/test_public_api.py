"""The public API of neurodyn: a curated top level, every name of it and of each subpackage
resolves to its one home, lazily, and functions are not hidden by modules."""

import importlib
import inspect
import subprocess
import sys

import pytest

import neurodyn as nd

SUBPACKAGES = ("analysis", "dynamics", "energies", "experiments", "fitting", "geometry",
               "spatial", "spatial.gridcells", "inference", "datasets")


def test_top_level_is_a_short_list_of_what_a_study_uses():
    names = [n for n in nd.__all__ if n != "__version__"]
    assert 20 <= len(names) <= 32, len(names)
    for name in ("Ring", "Torus", "FitConfig", "fit", "fit_activity", "simulate",
                 "perturbed_states",
                 "HopfieldNetwork", "path_integration", "diffusion", "energy_audit",
                 "save_model", "load_model", "run_grid_cells"):
        assert name in names, name
    assert "diffusion_coefficient" not in names and "Transport" not in names


def test_every_top_level_name_resolves_to_its_module():
    for module, names in nd._MODULES.items():
        home = importlib.import_module(f"neurodyn.{module}")
        for name in names:
            assert getattr(nd, name) is getattr(home, name), name


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_subpackage_name_resolves_to_the_module_defining_it(package):
    pkg = importlib.import_module(f"neurodyn.{package}")
    assert pkg.__doc__ and len(pkg.__all__) == len(set(pkg.__all__))
    for name in pkg.__all__:
        value = getattr(pkg, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith(f"neurodyn.{package}."), (name, value.__module__)


def test_subpackages_and_modules_are_attributes():
    assert inspect.ismodule(nd.analysis.drift) and inspect.ismodule(nd.spatial.ratemaps)
    assert nd.analysis.diffusion_estimate is nd.analysis.drift.diffusion_estimate
    assert inspect.ismodule(nd.io) and inspect.ismodule(nd.plotting)


def test_functions_are_not_shadowed_by_modules():
    import neurodyn.dynamics.simulation
    import neurodyn.fitting.core

    assert inspect.isfunction(nd.fit) and inspect.isfunction(nd.simulate)
    assert inspect.ismodule(neurodyn.fitting.core)
    assert inspect.ismodule(neurodyn.dynamics.simulation)


@pytest.mark.parametrize("code", [
    "import neurodyn",
    "import neurodyn.analysis, neurodyn.spatial, neurodyn.dynamics, neurodyn.energies",
    "import neurodyn.fitting.config",
])
def test_import_is_lazy(code):
    probe = f"import sys; {code}; print('torch' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_one_submodule_does_not_import_its_siblings():
    probe = ("import sys; import neurodyn.analysis.drift; "
             "print(sorted(m for m in sys.modules if m.startswith('neurodyn.analysis.')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "['neurodyn.analysis.drift']"


def test_unknown_attribute_is_an_attribute_error():
    for owner in (nd, nd.analysis):
        with pytest.raises(AttributeError, match="no_such_thing"):
            owner.no_such_thing  # noqa: B018


def test_diffusion_has_one_estimator_and_one_theory():
    from neurodyn.analysis import bump_motion, diagnostics, drift

    assert not hasattr(diagnostics, "diffusion_coefficient")
    assert not hasattr(diagnostics, "diffusion_theory")
    assert bump_motion.diffusion_estimate is drift.diffusion_estimate
    assert bump_motion.diffusion_tensor_theory is drift.diffusion_tensor_theory


def test_experiment_results_are_typed_results():
    from _runkit import Result
    from neurodyn.analysis import bump_motion, recovery

    for cls in (recovery.NetworkReport, recovery.RestorationStats, recovery.RestorationResult,
                bump_motion.PathIntegrationResult, bump_motion.DiffusionResult):
        assert issubclass(cls, Result), cls
        assert cls.__dataclass_params__.frozen, cls
