"""Every exception class of the library survives pickling (the Dask workers of a sweep send
exceptions between processes): same type, message, ``args`` and attributes."""

import importlib
import inspect
import pickle
import pkgutil

import pytest

PACKAGES = ("_runkit", "neurodyn", "flows")

#: constructor arguments of each class that defines its own ``__init__``; a new one must be
#: added here (the test below fails for it until it is)
CUSTOM_INIT = {
    "_runkit.errors.BadInput": (("kappa=-1.0 is not allowed; it must be > 0",), {"param": "kappa"}),
    "_runkit.errors.Diverged": (("loss 1e+20 at step 3; lower lr",), {"step": 3,
                                                                       "parameter": "lr"}),
    "neurodyn.dynamics.simulation.NonFiniteStateError": ((12.5, 125, 3.0e7, 1.0e6, 0.1, "euler"),
                                                         {}),
    "flows.sampling.ode.SamplingDiverged": ((0.45, 10, "midpoint", 20, 1e-5, "velocity"),
                                      {"names": {"steps": "sample_steps"}}),
}


def _exception_classes() -> list[type]:
    found = {}
    for pkg in PACKAGES:
        root = importlib.import_module(pkg)
        names = [pkg] + [m.name for m in pkgutil.walk_packages(root.__path__, pkg + ".")]
        for name in names:
            if name.endswith("__main__"):  # runs the command line when imported
                continue
            for _, obj in inspect.getmembers(importlib.import_module(name), inspect.isclass):
                if issubclass(obj, BaseException) and obj.__module__.split(".")[0] == pkg:
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _exception_classes()


def _instance(cls: type) -> BaseException:
    owner = next(k for k in cls.__mro__ if "__init__" in k.__dict__)
    if owner.__module__ == "builtins":
        return cls(f"{cls.__name__}: x=-1 is not allowed")
    key = f"{owner.__module__}.{owner.__qualname__}"
    assert key in CUSTOM_INIT, f"{key} defines __init__: add its arguments to CUSTOM_INIT"
    args, kwargs = CUSTOM_INIT[key]
    return cls(*args, **kwargs)


def test_the_search_finds_the_known_exceptions():
    names = {c.__name__ for c in CLASSES}
    assert {"BadInput", "RunFailed", "Diverged", "NonFiniteStateError", "FitFailed",
            "FitInterrupted", "ModelFormatError", "SamplingDiverged", "BudgetExceeded"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_exception_round_trips_through_pickle(cls):
    err = _instance(cls)
    err.add_note("raised in a sweep cell")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert str(back) == str(err) and back.args == err.args
    assert vars(back) == vars(err)
    with pytest.raises(cls):  # still raisable as itself
        raise back
