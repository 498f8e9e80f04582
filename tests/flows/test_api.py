"""The public surface of flows: one vocabulary, a curated top level, and a cheap start.

The start-up checks run fresh interpreters and read ``sys.modules``: ``import flows`` must not
load torch, POT, scikit-learn or numba, and building the command line's parser must not load
torch.
"""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import types

import pytest
import torch

import flows
from flows.coupling import COUPLINGS, OT_SOLVERS, ot_permutation
from flows.data import load_dataset
from flows.evaluation.distances import METRICS, path_energy
from flows.evaluation.nearest import NULL_RATE
from flows.field import REGIMES
from flows.path import PATHS
from flows.runs.measure import sample_field
from flows.sampling.ode import METHODS

HEAVY = ("torch", "ot", "sklearn", "numba", "scipy.stats")


def _loaded_after(code: str) -> set[str]:
    """Top-level packages (and scipy.stats) in sys.modules after ``code`` in a fresh process."""
    probe = (f"{code}\nimport json, sys\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules}"
             " | ({'scipy.stats'} & set(sys.modules)))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_flows_loads_no_heavy_dependency():
    assert _loaded_after("import flows") & set(HEAVY) == set()


def test_the_probe_sees_a_heavy_import():
    assert "ot" in _loaded_after("import flows.evaluation.distances")


def test_training_loads_pot_only_where_it_solves():
    code = "import flows\nflows.TrainConfig(coupling='ot')\nimport flows.training.loop"
    assert _loaded_after(code) & {"ot", "sklearn", "numba"} == set()


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["sample", "--help"],
                                  ["eval", "--help"], ["experiment", "risk", "--help"],
                                  ["experiment", "stopping", "--help"]])
def test_command_line_help_does_not_import_torch(argv):
    code = ("import contextlib, io\nfrom flows.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({argv!r}) == 0")
    assert _loaded_after(code) & set(HEAVY) == set()


def test_top_level_is_a_short_list_of_nouns_and_verbs():
    assert 20 <= len(flows.__all__) <= 30
    assert len(set(flows.__all__)) == len(flows.__all__)
    for name in flows.__all__:
        value = getattr(flows, name)
        assert not isinstance(value, types.ModuleType), name
    assert flows.memorization is flows.evaluation.nearest.memorization
    with pytest.raises(AttributeError):
        flows.no_such_name  # noqa: B018


def test_every_subpackage_lists_names_that_exist():
    for info in pkgutil.iter_modules(flows.__path__):
        if not info.ispkg:
            continue
        pkg = importlib.import_module(f"flows.{info.name}")
        assert pkg.__doc__ and pkg.__all__, info.name
        for name in pkg.__all__:
            assert not isinstance(getattr(pkg, name), types.ModuleType), (info.name, name)


def _old_name(p: inspect.Parameter) -> bool:
    # a seed is seed= (numpy_rng's generator= is a generator object, not a seed)
    return p.name in ("solver", "progress_bar") or \
        (p.name == "generator" and "int" in str(p.annotation))


def test_no_public_function_takes_the_old_names():
    found = []
    for info in pkgutil.walk_packages(flows.__path__, "flows."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            funcs = [obj] if inspect.isfunction(obj) else \
                [f for k, f in vars(obj).items() if inspect.isfunction(f) and not k.startswith("_")
                 ] if inspect.isclass(obj) else []
            found += [f"{info.name}.{f.__qualname__}({p.name})" for f in funcs
                      for p in inspect.signature(f).parameters.values() if _old_name(p)]
    assert found == []


def test_old_keywords_are_refused():
    x = torch.zeros(4, 2)
    with pytest.raises(TypeError, match="solver"):
        path_energy(lambda x, t: x, x, solver="euler")
    with pytest.raises(TypeError, match="solver"):
        sample_field(lambda x, t: x, load_dataset("moons"), 4, 0, solver="euler")
    with pytest.raises(TypeError, match="solver"):
        ot_permutation(x, x, solver="emd")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("flows.progress")
    assert not hasattr(importlib.import_module("flows.sampling.ode"), "parameter_names")


class _Counting:
    def __init__(self):
        self.calls = 0

    def __call__(self, x, t):
        self.calls += 1
        return -x


@pytest.mark.parametrize("method,per_step", [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_method_reaches_the_integrator(method, per_step):
    field = _Counting()
    res = sample_field(field, load_dataset("moons"), 8, 0, method=method, steps=3)
    assert res.nfe == field.calls == 3 * per_step
    field = _Counting()
    path_energy(field, torch.ones(5, 2), method=method, steps=3)
    assert field.calls == 3 * per_step


def test_ot_solver_reaches_the_assignment():
    x0, x1 = torch.randn(16, 2, generator=torch.Generator().manual_seed(0)), \
        torch.randn(16, 2, generator=torch.Generator().manual_seed(1))
    assert torch.equal(ot_permutation(x0, x1, ot_solver="lsa"),
                       ot_permutation(x0, x1, ot_solver="emd"))
    with pytest.raises(ValueError, match="ot_solver='simplex'"):
        ot_permutation(x0, x1, ot_solver="simplex")


def test_command_line_choices_are_the_library_names():
    from flows.cli import _parsing as cli
    from flows.runs import sweeps as theory

    assert cli.REGIMES == tuple(REGIMES)
    assert cli.COUPLINGS == tuple(COUPLINGS)
    assert cli.OT_SOLVERS == tuple(OT_SOLVERS)
    assert cli.PATHS == tuple(PATHS)
    assert cli.METHODS == tuple(METHODS)
    assert cli.METRICS == tuple(METRICS)
    from flows.evaluation import report
    assert (cli.EVAL_METRICS, cli.TRAIN_METRICS) == (report.EVAL_METRICS, report.TRAIN_METRICS)
    from flows.evaluation import verdict
    assert (cli.VERDICT_ALPHA, cli.VERDICT_PERMUTATIONS) == (verdict.ALPHA, verdict.PERMUTATIONS)
    assert cli.NULL_RATE == NULL_RATE
    assert (cli.RISK_NS, cli.RISK_SEEDS, cli.MEMORIZATION_NS) == \
        (theory.RISK_NS, theory.RISK_SEEDS, theory.MEMORIZATION_NS)
