"""Figures of flows' runs and experiments (matplotlib, imported on first use): samples,
trajectories and loss curves (:mod:`~flows.plotting.figures`), the figure sets of each run
(:mod:`~flows.plotting.runs`), the theory's checks (:mod:`~flows.plotting.theory`) and an
animation of the flow (:mod:`~flows.plotting.animation`).
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "figures": ("plot_samples", "plot_trajectories", "plot_loss"),
    "runs": ("training_figures", "class_figures", "width_figures", "samples_figures"),
    "animation": ("animate_flow",),
})
