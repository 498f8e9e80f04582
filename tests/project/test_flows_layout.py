"""The flat ``flows`` API does not hide its modules."""

import types

import flows


def test_modules_reachable_beside_flat_functions():
    assert isinstance(flows.training.loop, types.ModuleType)
    assert isinstance(flows.evaluation.distances, types.ModuleType)
    assert flows.train is flows.training.loop.train
    assert flows.evaluate is flows.evaluation.distances.evaluate
    assert callable(flows.train) and callable(flows.evaluate)


def test_run_names_importable_from_flows_run_after_the_split():
    import flows.runs.experiments
    import flows.runs.run
    import flows.runs.sampling

    for name in ("run_sample", "run_eval", "SampleRun"):
        assert getattr(flows.runs.run, name) is getattr(flows.runs.sampling, name), name
    for name in ("run_width_experiment", "run_samples_experiment", "ExperimentRun"):
        assert getattr(flows.runs.run, name) is getattr(flows.runs.experiments, name), name
    assert set(flows.runs.run.__all__) <= set(dir(flows.runs.run))
