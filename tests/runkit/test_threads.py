"""Library calls choose their torch thread count as the command lines do (``--threads 1``), take
``threads=`` to change it, and give the caller's count back."""

import inspect

import pytest
import torch

import flows
import neurodyn as nd
from _runkit import BadInput, with_threads


@pytest.fixture
def four_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(4)
    yield
    torch.set_num_threads(before)


@with_threads
def _seen(inner_threads=None):
    """Threads inside the call, and inside a nested call given ``inner_threads``."""
    return torch.get_num_threads(), _nested(threads=inner_threads)


@with_threads
def _nested():
    return torch.get_num_threads()


def test_default_explicit_nested_and_restored(four_threads):
    assert _seen() == (1, 1)
    assert _seen(threads=3) == (3, 3)          # a nested call without threads keeps the choice
    assert _seen(threads=3, inner_threads=2) == (3, 2)
    assert torch.get_num_threads() == 4


def test_restored_when_the_call_raises(four_threads):
    @with_threads
    def boom():
        assert torch.get_num_threads() == 1
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        boom()
    assert torch.get_num_threads() == 4


@pytest.mark.parametrize("bad", [0, -1, 2000, 1.5, True, "2"])
def test_bad_thread_counts_are_refused_naming_threads(bad, four_threads):
    with pytest.raises(BadInput, match="threads"):
        _nested(threads=bad)
    assert torch.get_num_threads() == 4


@pytest.mark.parametrize("func", [nd.fit, nd.simulate, nd.path_integration, nd.diffusion,
                                  nd.restoration, nd.run_grid_cells, flows.train,
                                  flows.integrate, flows.log_likelihood])
def test_the_api_takes_threads(func):
    param = inspect.signature(func).parameters["threads"]
    assert param.kind is param.KEYWORD_ONLY and param.default is None
    assert "threads" in func.__doc__


def test_fit_and_train_run_on_one_thread_and_restore(four_threads, monkeypatch):
    seen = []
    import neurodyn.fitting.core as core

    solve = core._solve
    monkeypatch.setattr(core, "_solve", lambda *a: (seen.append(torch.get_num_threads()),
                                                    solve(*a))[1])
    nd.fit(nd.FitConfig(n=32, steps=2, batch=4), progress=False)
    first = len(seen)
    nd.fit(nd.FitConfig(n=32, steps=2, batch=4), progress=False, threads=2)
    assert first and set(seen[:first]) == {1} and set(seen[first:]) == {2}
    assert torch.get_num_threads() == 4
    cfg = flows.TrainConfig(data="moons", width=16, steps=3, batch=32, n_train=64, n_eval=8)
    flows.train(cfg, progress=False, threads=2)
    assert torch.get_num_threads() == 4
