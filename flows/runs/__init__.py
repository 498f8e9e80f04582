"""Run directories: each ``flows`` command as one function that checks its inputs (and the
memory they need) before it writes, and leaves config.json, metrics.json and its figures in a
locked directory on the shared run contract of :mod:`_runkit`.

Training and sampling in :mod:`~flows.runs.run` and :mod:`~flows.runs.sampling`, the width and
samples experiments in :mod:`~flows.runs.experiments`, the risk and memorization experiments in
:mod:`~flows.runs.sweeps`, the stopping rules and the NTK gap over seeds in
:mod:`~flows.runs.stopping`; the measurements they share in :mod:`~flows.runs.measure`, size
estimates in :mod:`~flows.runs.memory`. Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "run": ("run_training",),
    "sampling": ("run_sample", "run_eval"),
    "experiments": ("run_width_experiment", "run_samples_experiment"),
    "sweeps": ("run_risk_experiment", "run_memorization_experiment"),
    "stopping": ("run_stopping_experiment", "run_ntk_gap_experiment"),
})
