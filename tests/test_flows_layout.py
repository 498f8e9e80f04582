"""The flat ``flows`` API does not hide its modules."""

import types

import flows


def test_modules_reachable_beside_flat_functions():
    assert isinstance(flows.training, types.ModuleType)
    assert isinstance(flows.evaluation, types.ModuleType)
    assert flows.train is flows.training.train
    assert flows.evaluate is flows.evaluation.evaluate
    assert callable(flows.train) and callable(flows.evaluate)
