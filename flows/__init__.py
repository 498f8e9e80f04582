"""flows: flow matching with two-layer ReLU velocity fields.

v(x, t) = m^{-1/2} A^T relu(W [x, t, 1]) trained by conditional flow matching in two regimes
("theory": A fixed, full-batch gradient descent on a fixed empirical objective; "practice":
both layers, Adam, minibatches), sampled with torchdiffeq and judged with POT Wasserstein
distances beside their noise floors, with the kernel, drift and generalization diagnostics of
the over-parameterized theory.

>>> import flows
>>> cfg = flows.TrainConfig(data="moons", width=16, steps=5, batch=64, n_train=256, n_eval=64)
>>> res = flows.train(cfg, progress=False)
>>> x = flows.integrate(res.field, flows.load_dataset("moons").sample(64, seed=1), steps=4).x
>>> tuple(x.shape)
(64, 2)

The names below are the public API, each imported from its module on first use, so
``import flows`` is cheap. The modules by concept: :mod:`~flows.data` (datasets, splits),
:mod:`~flows.field` (the velocity field: the built-in network, any torch module, a
convolutional field for images),
:mod:`~flows.path` (conditional paths),
:mod:`~flows.coupling` (independent, exact OT, Sinkhorn pairings; the exact assignment solver in
:mod:`flows.assignment`), :mod:`flows.training` (the loop, its config, checkpoints),
:mod:`flows.sampling` (the ODE, likelihood), :mod:`flows.evaluation` (distances, noise floors,
memorization), :mod:`~flows.optimal` (closed-form velocities), :mod:`flows.theory` (kernel H,
lambda_0, NTK curves, excess risk, W2 bound, sweeps), :mod:`flows.runs` (run directories on the
shared run contract of :mod:`_runkit`), :mod:`flows.plotting` and :mod:`flows.cli`.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "data": ("Dataset", "Splits", "load_dataset", "make_splits"),
    "errors": ("FlowsError",),
    "field": ("FieldSpec", "TwoLayerReLUField"),
    "path": ("PathSample", "get_path"),
    "coupling": ("couple",),
    "optimal": ("EmpiricalOptimalField",),
    "training.config": ("TrainConfig", "TrainResult"),
    "training.loop": ("train",),
    "sampling.ode": ("integrate", "log_likelihood"),
    "evaluation.distances": ("MetricResult", "evaluate", "path_energy", "sliced_w", "w1", "w2"),
    "evaluation.entropic": ("sinkhorn_divergence",),
    "evaluation.nearest": ("memorization",),
    "theory.kernel": ("kernel_h", "lambda_0", "log_loss_slope", "weight_drift"),
})
