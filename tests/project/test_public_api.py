"""The public API of neurodyn: every listed name resolves, functions are not hidden by modules."""

import importlib
import inspect
import subprocess
import sys

import neurodyn as nd


def test_every_public_name_resolves_to_its_module():
    for name in nd.__all__:
        if name == "__version__":
            continue
        value = getattr(nd, name)
        module = importlib.import_module(f"neurodyn.{nd._NAMES[name]}")
        assert getattr(module, name) is value, name


def test_functions_are_not_shadowed_by_modules():
    import neurodyn.dynamics.simulation
    import neurodyn.fitting.core

    assert inspect.isfunction(nd.fit) and inspect.isfunction(nd.simulate)
    assert inspect.ismodule(neurodyn.fitting.core) and inspect.ismodule(neurodyn.dynamics.simulation)


def test_import_is_lazy():
    code = "import sys, neurodyn; print('torch' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_unknown_attribute_is_an_attribute_error():
    try:
        nd.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_split_modules_keep_their_names_importable():
    import neurodyn.analysis.bump_motion as motion
    import neurodyn.analysis.report as experiments
    import neurodyn.geometry.base as base
    import neurodyn.geometry.populations as geometry

    for name in ("path_integration", "PathIntegrationResult", "diffusion", "DiffusionResult"):
        assert getattr(experiments, name) is getattr(motion, name) is getattr(nd, name), name
    for name in ("Geometry", "wrap_angle", "MIN_NEURONS"):
        assert getattr(geometry, name) is getattr(base, name), name
    assert nd.Geometry is base.Geometry and issubclass(nd.Ring, nd.Geometry)


def test_experiment_results_are_typed_results():
    from _runkit import Result
    from neurodyn.analysis import bump_motion
    from neurodyn.analysis import report as experiments

    for cls in (experiments.NetworkReport, experiments.RestorationStats,
                experiments.RestorationResult, bump_motion.PathIntegrationResult,
                bump_motion.DiffusionResult):
        assert issubclass(cls, Result), cls
        assert cls.__dataclass_params__.frozen, cls
