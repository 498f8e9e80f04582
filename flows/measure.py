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

from .data import Dataset, Splits, load_dataset
from .errors import check_positive_int, derive_seed
from .evaluation import evaluate
from .field import FieldSpec, TwoLayerReLUField
from .memorization import memorization
from .sample import SampleResult, integrate
from .theory import (
    guaranteed_log_rate,
    kernel_h,
    log_loss_slope,
    sample_sweep,
    width_sweep,
)
from .training import TrainConfig, fixed_objective, prepare_data

__all__ = ["sample_field", "evaluate_field", "FieldEvaluation", "reference_for",
           "theory_base", "width_experiment", "WidthExperiment", "samples_experiment",
           "SamplesExperiment"]


def sample_field(field: TwoLayerReLUField, source: Dataset, n: int, seed: int,
                 solver: str = "midpoint", steps: int = 20,
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
    return integrate(field, x0, method=solver, steps=steps, save_trajectory=save_trajectory)


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
        return d


def evaluate_field(field: TwoLayerReLUField, splits: Splits, source: Dataset, seed: int,
                   solver: str = "midpoint", steps: int = 20, dataset: Dataset | None = None,
                   floor_pairs: int = 5) -> FieldEvaluation:
    """W2 (2-D data) or sliced W (higher d) of generated samples to held-out data, with floor,
    and the memorized fraction against the whole training set.

    The number of generated points equals the number of held-out points, so the value and the
    floor are taken at the same sample sizes. With a generated ``dataset`` the floor is the
    mean and std over ``floor_pairs`` independent true-data pairs; otherwise (finite pools) the
    split's floor sample gives one value.
    """
    n = splits.heldout.shape[0]
    res = sample_field(field, source, n, derive_seed(seed, "eval-samples"), solver, steps)
    res = replace(res, x=res.x.cpu())
    metric = "w2" if splits.heldout.shape[1] <= 3 else "sliced"
    sliced_seed = derive_seed(seed, "sliced") % 2**31
    if dataset is not None and dataset.pool is None:  # floor over independent draws
        m = evaluate(res.x, splits.heldout, metric, seed=sliced_seed, dataset=dataset,
                     pairs=floor_pairs)
    else:  # a finite pool: the split's floor sample (disjoint rows of the pool)
        m = evaluate(res.x, splits.heldout, metric, splits.floor, seed=sliced_seed)
    w2_value = w2_floor = None
    if metric == "sliced":
        w = evaluate(res.x, splits.heldout, "w2", splits.floor)
        w2_value, w2_floor = w.value, w.floor
    mem = memorization(res.x, splits.train, seed=seed)
    return FieldEvaluation(metric, m.value, float(m.floor), n, res.nfe, solver, steps,
                           w2_value, w2_floor, m.floor_std, m.floor_pairs, mem.fraction,
                           mem.baseline, samples=res.x)


def reference_for(name: str, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A reference sample of a named dataset and an independent floor sample of the same size.

    Finite datasets give two disjoint random subsets (at most half the rows each).
    """
    ds = load_dataset(name, name="data")
    n = check_positive_int("n", n)
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
    ``ntk_gap`` is max_t |L_t - L_t^NTK| / L_0 against the infinite-width prediction on the
    same draws, ``ntk_within`` whether it is below ``ntk_tolerance`` = 4 m^{-1/2} (a check
    that fails outside the kernel regime), ``flipped`` the fraction of activations that
    changed; ``guaranteed_log_rate`` = 4 lr lambda_0 / N is the slowest kernel mode's rate.
    ``losses`` (per width) and ``eigenvalues`` (of
    the kernel H) are artifacts; ``fits`` gives (start, slope, intercept) of the late fits.
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
    losses: dict = artifact(default=None)
    eigenvalues: np.ndarray = artifact(default=None)
    fits: list = artifact(default=None)


def width_experiment(widths: list[int], data: str = "moons", n: int = 256, k: int = 4,
                     steps: int = 500, lr: float | None = None, seed: int = 0,
                     sample_steps: int = 20, sweep: dict | None = None) -> WidthExperiment:
    """Theory-regime runs at each width: loss curves and fits, drift, lambda_0, W2 versus m.

    ``sweep`` as in :func:`flows.theory.width_sweep` (cells on a Dask cluster)."""
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
        losses={r.width: np.asarray(r.losses) for r in runs}, eigenvalues=ev,
        fits=[(steps // 5, f.slope, f.intercept) for f in late])


@dataclass(frozen=True)
class SamplesExperiment(Result):
    """Theory regime at several numbers n of training points (lists per n, in ``ns`` order)."""

    ns: list[int]
    width: int
    k: int
    steps: int
    train_loss: list[float]
    test_loss: list[float]
    generalization_gap: list[float]
    w2: list[float]
    w2_floor: list[float]


def samples_experiment(ns: list[int], data: str = "moons", width: int = 4096, k: int = 4,
                       steps: int = 500, lr: float | None = None, seed: int = 0,
                       sample_steps: int = 20, sweep: dict | None = None) -> SamplesExperiment:
    """Theory-regime runs at each n: generalization gap and W2 (with floor) versus n.

    ``sweep`` as in :func:`flows.theory.width_sweep` (cells on a Dask cluster)."""
    base = replace(theory_base(data, ns[0], k, steps, lr, seed), width=width)
    runs = sample_sweep(ns, base, sample_steps=sample_steps, with_lambda=False,
                        sweep=sweep).runs
    return SamplesExperiment(
        ns=list(ns), width=width, k=k, steps=steps, train_loss=[r.train_loss for r in runs],
        test_loss=[r.test_loss for r in runs], generalization_gap=[r.gap for r in runs],
        w2=[r.w2 for r in runs], w2_floor=[r.floor for r in runs])
