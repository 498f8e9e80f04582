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
    "kernel": ("kernel_h", "lambda_0", "log_loss_slope", "weight_drift", "guaranteed_log_rate"),
    "ntk": ("ntk_comparison", "NTKComparison", "empirical_ntk", "ntk_loss_curve",
            "end_ratio_passes", "curve_check", "CurveCheck"),
    "ntk_gap": ("gap_sweep", "GapSweep"),
    "excess": ("population_minimum", "excess_risk", "Estimate"),
    "wbound": ("w2_bound", "WassersteinBound", "certified_w2_bound", "CertifiedW2Bound",
               "certified_lipschitz", "LipschitzCertificate"),
    "bounds": ("BOUNDS", "bounds_table"),
    "genbound": ("generalization_bound", "GeneralizationBound"),
    "regime": ("theory_run", "TheoryRun", "width_sweep", "sample_sweep", "TheorySweep"),
    "sweeps": ("ntk_width_sweep", "risk_sweep", "memorization_sweep"),
    "risk": ("protocol_sweep", "RiskPath"),
})
