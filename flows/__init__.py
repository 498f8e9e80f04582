"""flows: flow matching with two-layer ReLU velocity fields.

v(x, t) = m^{-1/2} A^T relu(W [x, t, 1]) trained by conditional flow matching in two regimes
("theory": A fixed, full-batch gradient descent on a fixed empirical objective; "practice":
both layers, Adam, minibatches), sampled with torchdiffeq and judged with POT Wasserstein
distances beside their noise floors, with the kernel, drift and generalization diagnostics of
the over-parameterized theory.

Modules: ``field`` (the network), ``path`` (conditional paths), ``coupling`` (independent, exact
OT permutation, Sinkhorn), ``assignment`` (the exact assignment solver behind the OT
coupling), ``data`` (datasets), ``training`` (training, checkpoints), ``sample``
(ODE sampling, likelihood), ``evaluation`` (distances, floors, straightness, memorization),
``optimal`` (closed-form velocities), ``theory`` (kernel H, lambda_0, sweeps), ``plotting``;
evaluation that cannot flatter: ``floors`` (noise floors with their spread), ``entropic``
(log-domain Sinkhorn), ``memorization`` (against the whole training set); the theory's claims
as numbers: ``ntk`` (predicted loss curves, empirical kernels), ``excess`` (population minimum,
excess risk), ``wbound`` (Groenwall W2 bound), ``theory_sweeps`` (typed results in
``theory_results``) and ``theory_plots``;
for runs: ``measure`` (typed measurements of fields and sweeps), ``memory`` (size estimates
checked before allocation), ``run_figures`` (their figures), ``run`` (run directories, on the
shared run contract of :mod:`_runkit`), ``checkpoint`` (weights-only files) and ``cli``.
"""

from .coupling import couple, ot_permutation, sinkhorn_pairing
from .data import Dataset, Splits, load_array, load_dataset, make_splits
from .errors import FlowsError
from .evaluation.distances import (
    MetricResult,
    evaluate,
    memorization,
    path_energy,
    sinkhorn_divergence,
    sliced_w,
    w1,
    w2,
)
from .field import FieldSpec, TwoLayerReLUField
from .optimal import EmpiricalOptimalField, gaussian_optimal_velocity
from .path import PathSample, get_path
from .sampling.ode import integrate, log_likelihood
from .theory.kernel import kernel_h, lambda_0, log_loss_slope, weight_drift
from .training.loop import TrainConfig, TrainResult, train

__all__ = [
    "Dataset", "EmpiricalOptimalField", "FieldSpec", "FlowsError", "MetricResult", "PathSample",
    "Splits", "TrainConfig", "TrainResult", "TwoLayerReLUField", "couple", "evaluate",
    "gaussian_optimal_velocity", "get_path", "integrate", "kernel_h", "lambda_0", "load_array",
    "load_dataset", "log_likelihood", "log_loss_slope", "make_splits", "memorization",
    "ot_permutation", "path_energy", "sinkhorn_divergence", "sinkhorn_pairing", "sliced_w",
    "train", "w1", "w2", "weight_drift",
]
