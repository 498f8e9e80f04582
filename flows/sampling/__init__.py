"""Sampling a trained field: the ODE dx/dt = v(x, t) from the source at t = 0 to t = 1, and the
exact log-likelihood along it (:mod:`~flows.sampling.ode`, on torchdiffeq). The integrator is
chosen by ``method=`` ("euler", "midpoint", "rk4", "dopri5"). Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "ode": ("integrate", "log_likelihood", "SampleResult", "LikelihoodResult",
            "SamplingDiverged", "BudgetExceeded", "METHODS"),
})
