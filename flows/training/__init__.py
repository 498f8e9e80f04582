"""Training a velocity field by conditional flow matching.

:class:`TrainConfig` is everything that determines a run (importable without torch);
:func:`train` runs it (:mod:`~flows.training.loop`), from minibatches drawn and coupled
ahead of the step (:mod:`~flows.training.batches`) through the updates of either regime
(:mod:`~flows.training.steps`), with checkpoints and model files
(:mod:`~flows.training.checkpoint`). Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "config": ("TrainConfig", "TrainResult"),
    "loop": ("train", "prepare_data", "fixed_objective", "build_model"),
    "checkpoint": ("save_model", "load_model", "LoadedModel"),
})
