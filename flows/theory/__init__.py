"""The over-parameterized theory's claims as numbers that can fail.

The kernel H at initialisation, lambda_0, loss slopes and weight drift
(:mod:`~flows.theory.kernel`); the infinite-width NTK loss curve against the observed one
(:mod:`~flows.theory.ntk`, over seeds in :mod:`~flows.theory.ntk_gap`); the population minimum
and excess risk (:mod:`~flows.theory.excess`); the Groenwall W2 bounds, estimated and
certified with the Lipschitz certificate they need (:mod:`~flows.theory.wbound`); the computed
generalization bound (:mod:`~flows.theory.genbound`); each bound's theorem and status
(:mod:`~flows.theory.bounds`); theory-regime runs and their sweeps over width and n
(:mod:`~flows.theory.regime`, :mod:`~flows.theory.sweeps`, stopping rules in
:mod:`~flows.theory.risk`), with typed results (:mod:`~flows.theory.results`). Names are
imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "kernel": ("kernel_h", "lambda_0", "log_loss_slope", "weight_drift"),
    "ntk": ("ntk_comparison",),
    "excess": ("excess_risk",),
    "wbound": ("w2_bound", "certified_w2_bound"),
    "bounds": ("bounds_table",),
    "genbound": ("generalization_bound",),
    "regime": ("theory_run", "width_sweep", "sample_sweep"),
    "sweeps": ("risk_sweep", "memorization_sweep"),
})
