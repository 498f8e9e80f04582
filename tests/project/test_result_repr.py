"""Every public result type prints as one line of at most 200 characters, whatever it holds
(the details are in ``to_dict()``, ``to_pandas()`` and ``_repr_html_``), because the rule
lives in the shared base class :class:`_runkit.results.Result`."""

import dataclasses
import importlib
import inspect
import pkgutil

import numpy as np
import pytest
import torch

import flows
import neurodyn
from _runkit.results import REPR_LIMIT, Result

#: public dataclasses that are inputs or settings, not results (their repr is their arguments)
NOT_RESULTS = {"FieldSpec", "TrainConfig", "Box", "FitConfig", "Constant", "Heterogeneity",
               "OrnsteinUhlenbeck", "Plan", "Sine", "Steps", "SweepKind", "Landmark",
               "FitPlan", "GridCellsConfig", "GridCellsPlan", "GridCellsRunConfig",
               "FitActivityConfig", "DecodeConfig", "GenerateConfig", "SimulateConfig",
               "ManifoldConfig", "RestoreConfig", "PathIntegrateConfig", "SpeedGainConfig",
               "DiffuseConfig", "SweepConfig"}
#: public result types of modules (their ``__all__``) not yet on Result, found when the scan took
#: in the modules behind each subpackage's short list
NOT_YET = {"JointTrack", "TrackingReport"}


def _public_classes() -> dict[str, type]:
    found: dict[type, str] = {}
    packages = ["neurodyn"] + [f"neurodyn.{m.name}" for m in pkgutil.iter_modules(
        neurodyn.__path__) if m.ispkg and m.name != "cli"] + ["neurodyn.spatial.gridcells",
                                                               "neurodyn.inference.verdict"]
    packages += ["flows"] + [f"flows.{m.name}" for m in pkgutil.iter_modules(flows.__path__)
                             if m.ispkg and m.name != "cli"]
    for name in packages:
        pkg = importlib.import_module(name)
        for attr in getattr(pkg, "__all__", ()):
            value = getattr(pkg, attr)
            if inspect.isclass(value) and value.__module__.split(".")[0] in ("neurodyn",
                                                                              "flows"):
                found.setdefault(value, f"{name}.{attr}")
        # a subpackage lists what a user calls; the types its functions return are public in
        # their modules (their ``__all__``)
        for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            if info.ispkg or info.name.startswith("_") or "." not in name:
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            for attr in getattr(module, "__all__", ()):
                value = getattr(module, attr)
                if inspect.isclass(value) and value.__module__ == module.__name__:
                    found.setdefault(value, f"{module.__name__}.{attr}")
    return {where: cls for cls, where in found.items()}


PUBLIC = _public_classes()
RESULT_TYPES = {w: c for w, c in PUBLIC.items()
                if dataclasses.is_dataclass(c) and c.__name__ not in NOT_RESULTS}


def _param(where):
    cls = RESULT_TYPES[where]
    marks = [pytest.mark.xfail(strict=True, reason="a module's result type not on Result")] \
        if cls.__name__ in NOT_YET else []
    return pytest.param(where, marks=marks, id=where)


def test_the_scan_finds_the_result_types():
    names = {c.__name__ for c in RESULT_TYPES.values()}
    assert {"FitResult", "TrainResult", "RestorationResult", "LikelihoodResult", "RateMaps",
            "GridCellsResult", "MetricResult", "SampleResult"} <= names
    assert len(RESULT_TYPES) > 80


def _inference_reprs() -> dict:
    """The fit of recorded activity and its verdict's types, crowded: long statistics and
    reasons, many tests."""
    from neurodyn.inference.core import _untuned
    from neurodyn.inference.verdict.rule import Evidence, combine
    from neurodyn.inference.verdict.sleep import SleepDecoding

    many = [Evidence(f"test {i}", "specific", "pass", list(range(5000)), np.ones((64, 64)),
                     p_value=1e-9, reason="line\n" * 400) for i in range(40)]
    verdict = combine(many)
    sleep = SleepDecoding(0.05, 18.0, 36.0, 8700.0, many, [np.ones(10_000)], np.ones(10_000))
    fit = _untuned("torus", 0.01, np.ones(5000, bool), "reason " * 300, 1.0)
    return {type(r).__name__: repr(r) for r in (many[0], verdict, sleep, fit)}


@pytest.mark.parametrize("where", [_param(w) for w in sorted(RESULT_TYPES)])
def test_every_public_result_type_derives_from_result(where):
    assert issubclass(RESULT_TYPES[where], Result), where


def _crowded(cls: type):
    """An instance of ``cls`` whose every field holds something long: a big tensor, a long
    list, a mapping of many nested entries, a string of many lines, a nested result."""
    inner = {f"key {i}": {"value": i / 7, "list": list(range(50))} for i in range(40)}
    values = [inner, torch.arange(120_000, dtype=torch.float64).reshape(400, 300),
              list(range(5000)), "line\n" * 400, np.ones((64, 64, 3)), (1 / 3,) * 900]
    obj = object.__new__(cls)
    for i, f in enumerate(dataclasses.fields(cls)):
        object.__setattr__(obj, f.name, values[i % len(values)])
    return obj


CUSTOM = {"FitResult", "TrainResult", "TorusFlow", "PopulationStates", "SheetRun", "ActivityFit",
          "Evidence", "Verdict", "SleepDecoding"}


@pytest.mark.parametrize("where", sorted(w for w, c in RESULT_TYPES.items()
                                         if issubclass(c, Result) and c.__name__ not in CUSTOM))
def test_the_repr_of_a_crowded_result_is_one_short_line(where):
    cls = RESULT_TYPES[where]
    assert cls.__repr__ is Result.__repr__, f"{where} writes its own __repr__: list it in CUSTOM"
    text = repr(_crowded(cls))
    assert "\n" not in text and len(text) <= REPR_LIMIT, (len(text), text)
    assert text.startswith(f"{cls.__name__}(")
    html = _crowded(cls)._repr_html_()
    assert html.count("<tr>") >= 2 and len(html) > len(text)  # the details


def test_the_control_a_dataclass_repr_is_long():
    @dataclasses.dataclass
    class Plain:
        x: torch.Tensor
        values: list

    @dataclasses.dataclass
    class Ours(Result):
        x: torch.Tensor
        values: list

    big, many = torch.arange(5000.0).reshape(50, 100), list(range(5000))
    assert len(repr(Plain(big, many))) > 10 * REPR_LIMIT
    assert repr(Ours(big, many)) == ("Ours(x=Tensor(shape=(50, 100)), "
                                     "values=[0, 1, 2, 3, 4, 5, ... (5000 items)])")


def test_results_with_their_own_repr_keep_to_the_limit():
    res = neurodyn.fit(neurodyn.FitConfig(n=16, steps=2, batch=2), progress=False)
    train = flows.train(flows.TrainConfig(data="moons", width=8, steps=2, batch=16, n_train=32,
                                          n_eval=8), progress=False)
    shown = {type(r).__name__: repr(r) for r in (res, train)}
    from types import SimpleNamespace

    from flows.riemannian.flow import TorusFlow
    from neurodyn.generative.states import PopulationStates

    states = PopulationStates(torch.zeros(300, 16), torch.zeros(300, 1), torch.zeros(300),
                              0.1)
    shown["PopulationStates"] = repr(states)
    flow = TorusFlow(SimpleNamespace(dim=2), np.ones(5000), "independent")
    shown["TorusFlow"] = repr(flow)
    from neurodyn.sheet.relaxation import SheetRun

    sheet = SheetRun(torch.zeros(512, 512), torch.linspace(-1e6, -2e6, 10_001), 1.234e-17,
                     1e-12, 10_000, 0.01, 1234.5, 2345.6)
    shown["SheetRun"] = repr(sheet)
    shown.update(_inference_reprs())
    assert set(shown) == CUSTOM
    for name, text in shown.items():
        assert "\n" not in text and len(text) <= REPR_LIMIT, (name, text)
