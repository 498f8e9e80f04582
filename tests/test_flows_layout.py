"""The flat ``flows`` API does not hide its modules."""

import types

import flows


def test_modules_reachable_beside_flat_functions():
    assert isinstance(flows.training, types.ModuleType)
    assert isinstance(flows.evaluation, types.ModuleType)
    assert flows.train is flows.training.train
    assert flows.evaluate is flows.evaluation.evaluate
    assert callable(flows.train) and callable(flows.evaluate)


def test_run_names_importable_from_flows_run_after_the_split():
    import flows.run
    import flows.run_experiments
    import flows.run_sampling

    for name in ("run_sample", "run_eval", "SampleRun"):
        assert getattr(flows.run, name) is getattr(flows.run_sampling, name), name
    for name in ("run_width_experiment", "run_samples_experiment", "ExperimentRun"):
        assert getattr(flows.run, name) is getattr(flows.run_experiments, name), name
    assert set(flows.run.__all__) <= set(dir(flows.run))
