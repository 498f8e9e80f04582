"""Measurements behind the flows runs, returned as typed results (no files, no figures).

- :func:`sample_field`: seeded source points pushed through a field.
- :func:`evaluate_field` -> :class:`FieldEvaluation`: W2 (or sliced W for d > 3) of generated
  samples to held-out data, beside its noise floor at the same sample sizes.
- :func:`reference_for`: a reference sample of a named dataset with an independent floor sample.
- :func:`width_experiment` / :func:`samples_experiment` -> :class:`WidthExperiment` /
  :class:`SamplesExperiment`: the theory-regime sweeps with their fits and guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from _runkit import Result, artifact
from _runkit.runtime import with_threads

from ..data import Dataset, Splits, load_dataset
from ..errors import check_positive_int, derive_seed
from ..evaluation.distances import evaluate
from ..evaluation.distances import w2 as w2_metric
from ..evaluation.floors import noise_floor
from ..evaluation.nearest import memorization
from ..field import FieldSpec, TwoLayerReLUField
from ..sampling.ode import SampleResult, integrate
from ..theory.excess import optimal_velocity, population_minimum, target_mixture
from ..theory.kernel import guaranteed_log_rate, kernel_h, log_loss_slope
from ..theory.regime import sample_sweep, width_sweep
from ..theory.sweeps import objective_draws
from ..training.loop import TrainConfig, fixed_objective, prepare_data

__all__ = ["sample_field", "evaluate_field", "FieldEvaluation", "reference_for",
           "theory_base", "width_experiment", "WidthExperiment", "samples_experiment",
           "SamplesExperiment"]


def sample_field(field: TwoLayerReLUField, source: Dataset, n: int, seed: int,
                 method: str = "midpoint", steps: int = 20,
                 save_trajectory: bool = False) -> SampleResult:
    """Draw n source points (seeded) and push them through the flow; see :func:`integrate`.

    Returns
    -------
    SampleResult
        ``x`` of shape (n, d), the NFE and, when asked, the trajectory.
    """
    params = list(field.parameters()) if isinstance(field, torch.nn.Module) else []
    x0 = source.sample(check_positive_int("n", n), seed)
    x0 = x0.to(params[0].device) if params else x0  # on the field's device
    return integrate(field, x0, method=method, steps=steps, save_trajectory=save_trajectory)


@dataclass(frozen=True)
class FieldEvaluation(Result):
    """Distance of generated samples to held-out data, with its floor.

    Attributes
    ----------
    metric : str
        "w2" (d <= 3) or "sliced" (higher d; then ``w2_heldout`` / ``w2_floor`` are also given).
    heldout, floor : float
        metric(generated, held-out) and metric(floor sample, held-out).
    n_eval, nfe : int
        Points compared (each side) and velocity evaluations of the sampling.
    solver : str
        The ODE method of the sampling (``method`` of :func:`evaluate_field`).
    sample_steps : int
    w2_heldout, w2_floor : float or None
        Exact W2 beside a sliced metric.
    samples : torch.Tensor, shape (n_eval, d)
        The generated points (an artifact, not in ``to_dict()``).
    """

    metric: str
    heldout: float
    floor: float
    n_eval: int
    nfe: int
    solver: str
    sample_steps: int
    w2_heldout: float | None = None
    w2_floor: float | None = None
    floor_std: float | None = None
    floor_pairs: int | None = None
    memorized_fraction: float | None = None
    memorized_baseline: float | None = None
    w2_floor_std: float | None = None
    samples: torch.Tensor = artifact(default=None)

    def to_dict(self) -> dict:
        """``{metric}_heldout``, ``{metric}_floor`` (mean) and ``{metric}_floor_std`` over
        ``floor_pairs`` independent pairs, n_eval, nfe, solver, sample_steps, the memorized
        fraction against the whole training set with its i.i.d. baseline (+ W2)."""
        d = {f"{self.metric}_heldout": self.heldout, f"{self.metric}_floor": self.floor,
             f"{self.metric}_floor_std": self.floor_std, "floor_pairs": self.floor_pairs,
             "memorized_fraction": self.memorized_fraction,
             "memorized_baseline": self.memorized_baseline,
             "n_eval": self.n_eval, "nfe": self.nfe, "solver": self.solver,
             "sample_steps": self.sample_steps}
        if self.metric != "w2":
            d["w2_heldout"], d["w2_floor"] = self.w2_heldout, self.w2_floor
            d["w2_floor_std"] = self.w2_floor_std
        return d


def evaluate_field(field: TwoLayerReLUField, splits: Splits, source: Dataset, seed: int,
                   method: str = "midpoint", steps: int = 20, dataset: Dataset | None = None,
                   floor_pairs: int = 5) -> FieldEvaluation:
    """W2 (2-D data) or sliced W (higher d) of generated samples to held-out data, with floor,
    and the memorized fraction against the whole training set.

    The number of generated points equals the number of held-out points, so the value and the
    floor are taken at the same sample sizes. With a ``dataset`` the floor is the mean and std
    over ``floor_pairs`` pairs of true samples (:func:`flows.evaluation.floors.noise_floor`):
    independent draws of a generated dataset, or pairs of disjoint random row subsets of a finite
    pool (digits), each pair its own split; without one, the split's floor sample gives one value.
    """
    n = splits.heldout.shape[0]
    res = sample_field(field, source, n, derive_seed(seed, "eval-samples"), method, steps)
    res = replace(res, x=res.x.cpu())
    metric = "w2" if splits.heldout.shape[1] <= 3 else "sliced"
    sliced_seed = derive_seed(seed, "sliced") % 2**31
    if dataset is not None:  # independent draws, or disjoint subsets of a finite pool
        m = evaluate(res.x, splits.heldout, metric, seed=sliced_seed, dataset=dataset,
                     pairs=floor_pairs)
    else:  # the split's floor sample
        m = evaluate(res.x, splits.heldout, metric, splits.floor, seed=sliced_seed)
    w2_value = w2_floor = w2_floor_std = None
    if metric == "sliced":
        w = evaluate(res.x, splits.heldout, "w2", splits.floor, dataset=dataset,
                     pairs=floor_pairs)
        w2_value, w2_floor, w2_floor_std = w.value, w.floor, w.floor_std
    mem = memorization(res.x, splits.train, seed=seed)
    return FieldEvaluation(metric, m.value, float(m.floor), n, res.nfe, method, steps,
                           w2_value, w2_floor, m.floor_std, m.floor_pairs, mem.fraction,
                           mem.baseline, w2_floor_std, samples=res.x)


def reference_for(name: str, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A reference sample of a named dataset and an independent floor sample of the same size.

    Finite datasets give two disjoint random subsets (at most half the rows each); one with
    held-out splits (MNIST) gives random validation images and random test images, which no
    training saw (:func:`flows.evaluation.floors.floor_pairs` pairs them the same way).
    """
    ds = load_dataset(name, name="data")
    n = check_positive_int("n", n)
    if ds.held_out is not None:
        valid, test = ds.held_out()
        g = torch.Generator().manual_seed(derive_seed(seed, "reference"))
        return (valid[torch.randperm(valid.shape[0], generator=g)[:n]],
                test[torch.randperm(test.shape[0], generator=g)[:n]])
    if ds.pool is None:
        ref = ds.sample(n, derive_seed(seed, "reference"))
        return ref, ds.sample(n, derive_seed(seed, "floor"))
    g = torch.Generator().manual_seed(derive_seed(seed, "reference"))
    perm = torch.randperm(ds.pool.shape[0], generator=g)
    k = min(n, ds.pool.shape[0] // 2)
    return ds.pool[perm[:k]], ds.pool[perm[k:2 * k]]


def theory_base(data: str, n: int, k: int, steps: int, lr: float | None, seed: int,
                width: int = 1024, n_eval: int = 1000) -> TrainConfig:
    """The theory-regime config the sweeps vary."""
    return TrainConfig(data=data, regime="theory", n_train=n, k_draws=k, steps=steps, lr=lr,
                       seed=seed, width=width, n_eval=n_eval)


@dataclass(frozen=True)
class WidthExperiment(Result):
    """Theory regime at several widths m (lists are per width, in the order of ``widths``).

    ``log_loss_slope_late`` / ``_r2_late`` fit log L after the first fifth of the steps;
    ``ntk_gap`` is ``max_t |L_t - L_t^NTK| / L_0`` against the infinite-width prediction on the
    same draws, ``ntk_within`` whether it is below ``ntk_tolerance`` = 4 m^{-1/2} (the earlier
    rule, which passes runs far from the regime at small m), ``ntk_end_ratio`` L_T / L_T^NTK
    and ``ntk_passes`` the check over the whole horizon (loss within 10% and outputs within
    10% of the predicted change at every step, :func:`flows.theory.ntk.curve_check`),
    ``flipped`` the fraction of activations that
    changed; ``guaranteed_log_rate`` = 4 lr lambda_0 / N is the slowest kernel mode's rate.
    ``losses`` (per width) and ``eigenvalues`` (of
    the kernel H) are artifacts; ``fits`` gives (start, slope, intercept) of the late fits.

    Regime of the step and of the horizon. ``step_stability`` = 2 lr lambda_max / N: below 1
    every kernel mode of the discrete prediction decays without changing sign, below 2 it
    decays (above 2 the linearised descent diverges). ``horizon`` = lr x steps is the
    gradient-flow time: measured at n = 64, k = 4, the NTK gap depends on it and not on lr
    (lr 0.5 x 2000 steps and lr 2 x 500 give gaps equal to 3 digits at every m), and the lazy
    approximation needs more width the longer the horizon. At horizon 250 the gap falls with
    m from 256 to 16384 (0.059, 0.054, 0.028, 0.021); at 1000 it does not (0.135, 0.145,
    0.099, 0.096), though the step is stable there (step_stability 0.76).
    """

    widths: list[int]
    n: int
    k: int
    steps: int
    lambda_0: float
    drift_slope: float | None
    drift: list[float]
    log_loss_slope: list[float]
    log_loss_r2: list[float]
    log_loss_slope_late: list[float]
    log_loss_r2_late: list[float]
    guaranteed_log_rate: float
    ntk_gap: list[float]
    ntk_tolerance: list[float]
    ntk_within: list[bool]
    flipped: list[float]
    final_train_loss: list[float]
    test_loss: list[float]
    w2: list[float]
    w2_floor: list[float]
    horizon: float | None = None
    step_stability: float | None = None
    ntk_end_ratio: list[float] | None = None
    ntk_passes: list[bool] | None = None
    losses: dict = artifact(default=None)
    eigenvalues: np.ndarray = artifact(default=None)
    fits: list = artifact(default=None)


@with_threads
def width_experiment(widths: list[int], data: str = "moons", n: int = 256, k: int = 4,
                     steps: int = 500, lr: float | None = None, seed: int = 0,
                     sample_steps: int = 20, sweep: dict | None = None) -> WidthExperiment:
    """Theory-regime runs at each width: loss curves and fits, drift, lambda_0, W2 versus m.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    ``sweep`` as in :func:`flows.theory.regime.width_sweep` (cells on a Dask cluster)."""
    base = theory_base(data, n, k, steps, lr, seed)
    res = width_sweep(widths, base, sample_steps=sample_steps, with_lambda=False, with_ntk=True,
                      sweep=sweep)
    cfg = base.resolved()
    splits, source = prepare_data(cfg)
    spec = FieldSpec(splits.train.shape[1], 1, "theory", True, cfg.fourier)
    z, _ = fixed_objective(splits.train[:n], source, k, cfg.path, cfg.sigma_min, spec,
                           derive_seed(seed, "objective"))
    ev = torch.linalg.eigvalsh(kernel_h(z)).numpy()
    runs = res.runs
    rate = guaranteed_log_rate(float(ev[0]), float(cfg.lr), n * k)  # type: ignore[arg-type]
    late = [log_loss_slope(r.losses, steps // 5) for r in runs]  # after the fast transient
    return WidthExperiment(
        widths=list(widths), n=n, k=k, steps=steps, lambda_0=float(ev[0]),
        drift_slope=res.drift_slope, drift=[r.drift for r in runs],
        log_loss_slope=[r.slope for r in runs], log_loss_r2=[r.slope_r2 for r in runs],
        log_loss_slope_late=[f.slope for f in late], log_loss_r2_late=[f.r2 for f in late],
        guaranteed_log_rate=rate,
        ntk_gap=[r.ntk_gap for r in runs], ntk_tolerance=[r.ntk_tolerance for r in runs],
        ntk_within=[r.ntk_within for r in runs], flipped=[r.flipped for r in runs],
        final_train_loss=[r.train_loss for r in runs], test_loss=[r.test_loss for r in runs],
        w2=[r.w2 for r in runs], w2_floor=[r.floor for r in runs],
        horizon=float(cfg.lr) * steps,  # type: ignore[arg-type]
        step_stability=2.0 * float(cfg.lr) * float(ev[-1]) / (n * k),  # type: ignore[arg-type]
        ntk_end_ratio=[r.ntk_end_ratio for r in runs], ntk_passes=[r.ntk_passes for r in runs],
        losses={r.width: np.asarray(r.losses) for r in runs}, eigenvalues=ev,
        fits=[(steps // 5, f.slope, f.intercept) for f in late])


@dataclass(frozen=True)
class SamplesExperiment(Result):
    """Theory regime at several numbers n of training points (lists per n, in ``ns`` order).

    The raw ``generalization_gap`` (test minus train objective, on n k draws each) mixes the
    excess risk with the noise of the irreducible part; ``gap_floor`` is the same difference
    for the population-optimal field u* on the same draws (what a perfect field reads), and
    ``gap_corrected`` = gap - floor = excess on the test draws - excess on the training draws.
    ``excess_train`` / ``excess_test`` are the objectives minus the population minimum
    (``population_minimum``, its standard error ``population_minimum_se``). The three are
    None for data without a closed-form optimal field. ``w2_floor`` / ``w2_floor_std``: W2
    between independent true samples of the same sizes over ``floor_pairs`` pairs
    (:func:`flows.evaluation.floors.noise_floor`; disjoint row subsets for a finite pool), and
    ``w2_excess`` = W2 - floor.
    """

    ns: list[int]
    width: int
    k: int
    steps: int
    train_loss: list[float]
    test_loss: list[float]
    generalization_gap: list[float]
    w2: list[float]
    w2_floor: list[float]
    gap_floor: list[float] | None = None
    gap_corrected: list[float] | None = None
    excess_train: list[float] | None = None
    excess_test: list[float] | None = None
    population_minimum: float | None = None
    population_minimum_se: float | None = None
    w2_floor_std: list[float] | None = None
    w2_excess: list[float] | None = None
    floor_pairs: int | None = None


def _gap_floor(cfg: TrainConfig, mix) -> float:
    """test minus train objective of u* on the draws of a theory run (see theory_run)."""
    cfg = cfg.resolved()
    splits, source = prepare_data(cfg)
    n_test = min(cfg.n_train, splits.heldout.shape[0])  # as flows.training.loop.theory_test_loss

    def mean_loss(x1, tag):
        x_t, t, u = objective_draws(x1, source, cfg.k_draws, cfg.path, cfg.sigma_min,
                                    derive_seed(cfg.seed, tag))
        return float((optimal_velocity(mix, x_t, t) - u).square().sum(1).mean())

    return (mean_loss(splits.heldout[:n_test], "test-objective")
            - mean_loss(splits.train[: cfg.n_train], "objective"))


@with_threads
def samples_experiment(ns: list[int], data: str = "moons", width: int = 4096, k: int = 4,
                       steps: int = 500, lr: float | None = None, seed: int = 0,
                       sample_steps: int = 20, sweep: dict | None = None,
                       floor_pairs: int = 5) -> SamplesExperiment:
    """Theory-regime runs at each n: the generalization gap beside its floor, excess risks,
    and W2 beside its noise floor (mean and std over ``floor_pairs`` pairs) versus n.

    ``threads=`` sets torch's CPU threads during the call (default 1; the
    caller's count is restored).

    ``sweep`` as in :func:`flows.theory.regime.width_sweep` (cells on a Dask cluster)."""
    base = replace(theory_base(data, ns[0], k, steps, lr, seed), width=width)
    runs = sample_sweep(ns, base, sample_steps=sample_steps, with_lambda=False,
                        sweep=sweep).runs
    ds = load_dataset(data, name="data")
    gaps = [r.test_loss - r.train_loss for r in runs]
    floors, by_size, excess = [], {}, {}
    for n in ns:  # generated points (theory_run's 1000) against each run's held-out points
        n_ref = prepare_data(replace(base, n_train=n).resolved())[0].heldout.shape[0]
        if n_ref not in by_size:
            by_size[n_ref] = noise_floor(ds, w2_metric, 1000, n_ref, floor_pairs,
                                         derive_seed(seed, "w2-floor"))
        floors.append(by_size[n_ref])
    mix = target_mixture(data) if ds.pool is None else None
    if mix is not None:
        lstar = population_minimum(ds, seed=derive_seed(seed, "lstar"))
        gf = [_gap_floor(replace(base, n_train=n), mix) for n in ns]
        excess = {"gap_floor": gf, "gap_corrected": [g - f for g, f in zip(gaps, gf, strict=True)],
                  "excess_train": [r.train_loss - lstar.value for r in runs],
                  "excess_test": [r.test_loss - lstar.value for r in runs],
                  "population_minimum": lstar.value, "population_minimum_se": lstar.se}
    w2s = [r.w2 for r in runs]
    return SamplesExperiment(
        ns=list(ns), width=width, k=k, steps=steps, train_loss=[r.train_loss for r in runs],
        test_loss=[r.test_loss for r in runs], generalization_gap=gaps, w2=w2s,
        w2_floor=[f.mean for f in floors], w2_floor_std=[f.std for f in floors],
        w2_excess=[w - f.mean for w, f in zip(w2s, floors, strict=True)],
        floor_pairs=floor_pairs, **excess)
