"""Judging samples honestly: a distance between generated and held-out points means something
only beside its noise floor, the same distance between two true samples of the same sizes.

Distances (W2, W1, sliced W, Sinkhorn divergence) and :func:`evaluate` in
:mod:`~flows.evaluation.distances`, log-domain entropic OT in :mod:`~flows.evaluation.entropic`,
noise floors with their spread in :mod:`~flows.evaluation.floors`, memorization against the whole
training set in :mod:`~flows.evaluation.nearest`, permutation two-sample tests, k-NN precision and
recall and the variance ratio in :mod:`~flows.evaluation.twosample`, the data-copying test in
:mod:`~flows.evaluation.copying`, the one result shape of ``flows eval`` in
:mod:`~flows.evaluation.report`, and the one verdict of every test with Holm's correction
(``flows eval --metric all``) in :mod:`~flows.evaluation.verdict`. Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "distances": ("evaluate", "w2", "w1", "sliced_w", "path_energy"),
    "entropic": ("sinkhorn_divergence", "entropic_ot"),
    "floors": ("noise_floor",),
    "nearest": ("memorization",),
    "twosample": ("permutation_test",),
    "copying": ("data_copying",),
    "report": ("report_statistic",),
    "verdict": ("evaluate_all", "holm"),
})
