"""Typed results of the theory sweeps (:mod:`flows.theory.sweeps`).

Frozen dataclasses on :class:`_runkit.Result`; ``to_dict()`` gives the JSON rows the run layer
writes (``metrics.json``), flat as they always were: the sample checks of a point are merged
into the point's own keys, and what was not measured is left out.

Examples
--------
>>> checks = SampleChecks(w2=0.2, w2_floor=0.1, w2_floor_std=0.01, w2_bound=0.5,
...                       w2_bound_factor=2.0, w2_coupling=0.25, w2_bound_holds=True,
...                       w2_bound_ratio=2.5, mu_max=0.3, lipschitz_max=1.2,
...                       memorized_fraction=0.0)
>>> from dataclasses import replace
>>> point = RiskPoint(n=16, seed=1, excess_test=0.1, excess_test_se=0.01, excess_train=0.05,
...                   test_objective=1.1, test_objective_se=0.01, train_objective=1.05,
...                   generalization_gap=0.05, gap_floor=0.0, excess_gap=0.05)
>>> "w2" in point.to_dict(), "w2" in replace(point, samples=checks).to_dict()
(False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from _runkit import Result

from .excess import Estimate
from .ntk import KernelDrift

__all__ = ["SampleChecks", "WidthPoint", "NTKWidthSweep", "RiskPoint", "RiskSweep",
           "MemorizationCurve", "MemorizationPoint", "MemorizationSweep"]

def _flat(result: Result, nested: str) -> dict[str, Any]:
    """``result.to_dict()`` with the sub-result ``nested`` merged into the top level (left out
    when it is None)."""
    out = Result.to_dict(result)
    inner = out.pop(nested)
    return out | (inner or {})


@dataclass(frozen=True)
class SampleChecks(Result):
    """Generated samples of one run against the theory: W2, its floor and the W2 bound.

    Attributes
    ----------
    w2 : float
        W2 between the generated points and the held-out points.
    w2_floor, w2_floor_std : float
        The noise floor of W2 at these sizes (mean, spread;
        :func:`flows.evaluation.floors.noise_floor`).
    w2_bound, w2_bound_factor, w2_coupling : float
        The Groenwall W2 bound, its factor and the coupling term
        (:func:`flows.theory.wbound.w2_bound`).
    w2_bound_holds : bool
        ``w2_bound >= w2``.
    w2_bound_ratio : float
        ``w2_bound / w2`` (how loose the bound is).
    mu_max, lipschitz_max : float
        The bound's largest one-sided Lipschitz constant and Lipschitz constant on the path.
    memorized_fraction : float
        Fraction of the samples memorized (:func:`flows.evaluation.nearest.memorization`).
    w2_source : float
        W2 between the source sample and the held-out points: what the model that does
        nothing scores, the number a bound must be below to say anything.
    w2_bound_vs_source, w2_bound_vacuous : float, bool
        ``w2_bound / w2_source`` and whether it is >= 1.
    w2_bound_trajectory, w2_bound_trajectory_factor : float
        The bound with the factor along the pairs' own trajectories
        (:func:`flows.theory.wbound.trajectory_factor`) and that factor.
    w2_bound_trajectory_holds : bool
        ``w2_bound_trajectory >= w2``.
    w2_bound_trajectory_vs_source, w2_bound_trajectory_vacuous : float, bool
        ``w2_bound_trajectory / w2_source`` and whether it is >= 1.
    w2_bound_certified, w2_bound_trajectory_certified : bool
        False: both are ESTIMATED (their constants are sampled on pairs).
    w2_lipschitz_bound : float
        The CERTIFIED bound G(mu) sqrt(excess upper) with mu read from the weights
        (:func:`flows.theory.wbound.certified_w2_bound`; ``inf`` past a float's range), and
        ``w2_lipschitz_bound_log10`` its log10.
    w2_lipschitz_bound_certified : bool
        True: certified given the excess risk (a Monte Carlo estimate, upper 95% end).
    w2_lipschitz_mu, w2_lipschitz_constant : float
        The certified one-sided and two-sided Lipschitz constants of the field in x.
    w2_lipschitz_bound_holds, w2_lipschitz_bound_ratio : bool, float
        ``w2_lipschitz_bound >= w2`` and ``w2_lipschitz_bound / w2``.
    w2_lipschitz_bound_vs_source, w2_lipschitz_bound_vacuous : float, bool
        ``w2_lipschitz_bound / w2_source`` and whether it is >= 1.
    """

    w2: float
    w2_floor: float
    w2_floor_std: float
    w2_bound: float
    w2_bound_factor: float
    w2_coupling: float
    w2_bound_holds: bool
    w2_bound_ratio: float
    mu_max: float
    lipschitz_max: float
    memorized_fraction: float
    w2_source: float | None = None
    w2_bound_vs_source: float | None = None
    w2_bound_vacuous: bool | None = None
    w2_bound_trajectory: float | None = None
    w2_bound_trajectory_factor: float | None = None
    w2_bound_trajectory_holds: bool | None = None
    w2_bound_trajectory_vs_source: float | None = None
    w2_bound_trajectory_vacuous: bool | None = None
    w2_bound_certified: bool | None = None
    w2_bound_trajectory_certified: bool | None = None
    w2_lipschitz_bound: float | None = None
    w2_lipschitz_bound_log10: float | None = None
    w2_lipschitz_bound_certified: bool | None = None
    w2_lipschitz_mu: float | None = None
    w2_lipschitz_constant: float | None = None
    w2_lipschitz_bound_holds: bool | None = None
    w2_lipschitz_bound_ratio: float | None = None
    w2_lipschitz_bound_vs_source: float | None = None
    w2_lipschitz_bound_vacuous: bool | None = None


@dataclass(frozen=True)
class WidthPoint(Result):
    """One theory-regime run at one width (:func:`flows.theory.sweeps.width_point`).

    Attributes
    ----------
    width, n, k, steps : int
        Width m, training points, draws per point, gradient-descent steps.
    lr : float
        Step size.
    lambda_0 : float
        Smallest eigenvalue of the limiting kernel on the training draws.
    losses, ntk_losses : list of float
        The observed training-loss curve and the infinite-width NTK prediction.
    ntk_gap, ntk_tolerance : float
        Their largest relative gap and its tolerance K m^{-1/2}; ``ntk_within``: gap <= it.
    kernel : KernelDrift
        The empirical kernel at start and end against the limit, and flipped activations.
    required_width, required_lr : float
        The theorem's width and step for this data.
    final_loss, final_ntk_loss : float
        Last values of the two curves.
    excess_test, excess_test_ci95, excess_train : float
        Excess test risk with its 95% half-width, and excess training risk.
    samples : SampleChecks
        W2, floor and bound of the generated samples (merged into ``to_dict()``).
    ntk_end_ratio : float
        L_obs(T) / L_NTK(T) (the end-ratio rule, for reference).
    ntk_passes : bool
        The NTK check over the whole horizon (:func:`flows.theory.ntk.curve_check`).
    ntk_worst_ratio, ntk_deviation : float
        Its worst loss ratio and worst output deviation over the horizon.
    """

    width: int
    n: int
    k: int
    lr: float
    steps: int
    lambda_0: float
    losses: list
    ntk_losses: list
    ntk_gap: float
    ntk_tolerance: float
    ntk_within: bool
    kernel: KernelDrift
    required_width: float
    required_lr: float
    final_loss: float
    final_ntk_loss: float
    excess_test: float
    excess_test_ci95: float
    excess_train: float
    samples: SampleChecks
    ntk_end_ratio: float | None = None
    ntk_passes: bool | None = None
    ntk_worst_ratio: float | None = None
    ntk_deviation: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The run's fields with the sample checks' fields at the same level."""
        return _flat(self, "samples")


@dataclass(frozen=True)
class NTKWidthSweep(Result):
    """:func:`flows.theory.sweeps.ntk_width_sweep`: theory runs at several widths.

    Attributes
    ----------
    runs : list of WidthPoint
        One per width, in the order of ``widths``.
    widths : list of int
    population_minimum : Estimate
        The irreducible part of the objective the excess risks are measured from.
    ntk_gap : list of float
        Each run's NTK gap.
    gap_monotone : bool
        The gap falls strictly with the width.
    w2_bound_holds_all : bool
        The W2 bound holds in every run.
    ntk_passes : list of bool
        Each run's NTK check over its whole horizon.
    """

    runs: list[WidthPoint]
    widths: list[int]
    population_minimum: Estimate
    ntk_gap: list[float]
    gap_monotone: bool
    w2_bound_holds_all: bool
    ntk_passes: list[bool] | None = None


@dataclass(frozen=True)
class RiskPoint(Result):
    """One theory-regime run at one n and seed (:func:`flows.theory.sweeps.risk_point`).

    Attributes
    ----------
    n, seed : int
    excess_test, excess_test_se : float
        Excess test risk (objective - population minimum) and its standard error.
    excess_train : float
        Excess risk on the run's fixed training objective.
    test_objective, test_objective_se, train_objective : float
        The two objectives themselves.
    generalization_gap : float
        Test objective minus training objective.
    gap_floor : float
        The same gap for the population-optimal field on the same draws.
    excess_gap : float
        ``generalization_gap - gap_floor`` (= excess test - excess train).
    samples : SampleChecks or None
        W2, floor and bound (None when the samples were skipped; then absent from
        ``to_dict()``).
    gen_bound, gen_bound_ratio : float or None
        The computed bound on ``excess_gap`` (:mod:`flows.theory.genbound`) and bound / L*.
    gen_bound_vacuous, gen_bound_holds : bool or None
        ratio >= 1; ``excess_gap <= gen_bound``.
    gen_rademacher, gen_deviation, gen_radius, gen_distance : float or None
        The bound's two terms, the radius sqrt(m) max_r ||w_r - w0_r|| and ||W - W_0||_F.
    gen_bound_certified : bool or None
        False: the bound is ESTIMATED (two population expectations in it are Monte Carlo).
    """

    n: int
    seed: int
    excess_test: float
    excess_test_se: float
    excess_train: float
    test_objective: float
    test_objective_se: float
    train_objective: float
    generalization_gap: float
    gap_floor: float
    excess_gap: float
    samples: SampleChecks | None = None
    gen_bound: float | None = None
    gen_bound_ratio: float | None = None
    gen_bound_vacuous: bool | None = None
    gen_bound_holds: bool | None = None
    gen_rademacher: float | None = None
    gen_deviation: float | None = None
    gen_radius: float | None = None
    gen_distance: float | None = None
    gen_bound_certified: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The run's fields with the sample checks' fields (when measured) at the same level."""
        return _flat(self, "samples")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RiskPoint:
        """The point from its flat ``to_dict()`` (or a sweep row): the sample checks rebuilt
        when their keys are there.

        Returns
        -------
        RiskPoint
        """
        point = super().from_dict({k: v for k, v in data.items() if k != "samples"})
        if "w2" in data:
            point = replace(point, samples=SampleChecks.from_dict(data))
        return point


@dataclass(frozen=True)
class RiskSweep(Result):
    """:func:`flows.theory.sweeps.risk_sweep`: excess risk against n over several seeds.

    Per-n lists are in the order of ``ns``: the mean over seeds and its Student-t 95%
    half-width (``*_ci95``; one seed: 1.96 standard errors of that run where it has one).

    Attributes
    ----------
    runs : list of RiskPoint
        Every (n, seed) run, n-major.
    ns, seeds : list of int
    population_minimum : Estimate
    excess_test, excess_test_ci95, generalization_gap, generalization_gap_ci95,
    excess_train, excess_train_ci95, gap_floor, gap_floor_ci95, excess_gap,
    excess_gap_ci95 : list of float
        The per-n means and half-widths.
    intervals_separate : bool
        Each n's interval of the excess test risk lies strictly below the previous one's.
    endpoints_separate : bool
        The largest n's interval lies strictly below the smallest n's.
    excess_slope, excess_train_slope, excess_gap_slope : float or None
        Log-log slopes against n of the mean excess test risk, excess training risk and excess
        gap (None where a mean is not positive or there is one n).
    excess_slope_ci95, excess_train_slope_ci95, excess_gap_slope_ci95 : float or None
        Their 95% half-widths from the per-seed slopes (None with one seed).
    bound_rate : float
        The n^{-1/2} rate of the kernel regime's generalization bounds (-0.5).
    w2_bound_holds_all : bool or None
        The W2 bound holds in every run (None without samples; then absent from ``to_dict()``).
    gen_bound, gen_bound_ratio : list of float or None
        Per n, the mean computed generalization bound and its mean ratio to L*.
    gen_bound_vacuous_fraction : list of float or None
        Per n, the fraction of runs whose generalization bound is >= L*.
    gen_bound_holds_all : bool or None
        ``excess_gap <= gen_bound`` in every run.
    w2_bound_vs_source, w2_bound_trajectory, w2_bound_trajectory_vs_source : list or None
        Per n (with samples), the means of the W2 bound / W2(source, data), of the bound with
        the trajectory factor, and of its ratio.
    w2_bound_vacuous_fraction, w2_bound_trajectory_vacuous_fraction : list or None
        Per n, the fraction of runs whose bound is >= W2(source, data).
    w2_bound_trajectory_holds_all : bool or None
        The trajectory bound is >= the measured W2 in every run.
    w2_lipschitz_bound_log10, w2_lipschitz_bound_vs_source : list or None
        Per n (with samples), the mean log10 of the certified W2 bound and the mean of its
        ratio to W2(source, data).
    w2_lipschitz_bound_vacuous_fraction : list or None
        Per n, the fraction of runs whose certified bound is >= W2(source, data).
    w2_lipschitz_bound_holds_all : bool or None
        The certified bound is >= the measured W2 in every run.
    bounds : dict or None
        Each bound reported here with its theorem, constants, citation and whether it is
        certified (:data:`flows.theory.bounds.BOUNDS`).

    Fields that are None are left out of ``to_dict()``.
    """

    runs: list[RiskPoint]
    ns: list[int]
    seeds: list[int]
    population_minimum: Estimate
    excess_test: list[float]
    excess_test_ci95: list[float]
    generalization_gap: list[float]
    generalization_gap_ci95: list[float]
    excess_train: list[float]
    excess_train_ci95: list[float]
    gap_floor: list[float]
    gap_floor_ci95: list[float]
    excess_gap: list[float]
    excess_gap_ci95: list[float]
    intervals_separate: bool
    endpoints_separate: bool
    excess_slope: float | None
    excess_slope_ci95: float | None
    excess_train_slope: float | None
    excess_train_slope_ci95: float | None
    excess_gap_slope: float | None
    excess_gap_slope_ci95: float | None
    bound_rate: float
    w2_bound_holds_all: bool | None = None
    gen_bound: list[float] | None = None
    gen_bound_ratio: list[float] | None = None
    gen_bound_vacuous_fraction: list[float] | None = None
    gen_bound_holds_all: bool | None = None
    w2_bound_vs_source: list[float] | None = None
    w2_bound_vacuous_fraction: list[float] | None = None
    w2_bound_trajectory: list[float] | None = None
    w2_bound_trajectory_vs_source: list[float] | None = None
    w2_bound_trajectory_vacuous_fraction: list[float] | None = None
    w2_bound_trajectory_holds_all: bool | None = None
    w2_lipschitz_bound_log10: list[float] | None = None
    w2_lipschitz_bound_vs_source: list[float] | None = None
    w2_lipschitz_bound_vacuous_fraction: list[float] | None = None
    w2_lipschitz_bound_holds_all: bool | None = None
    bounds: dict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON; ``w2_bound_holds_all`` and the bound summaries after it are
        left out when None (not measured)."""
        out = super().to_dict()
        names = [f.name for f in fields(self)]
        optional = names[names.index("w2_bound_holds_all"):]
        return {k: v for k, v in out.items() if v is not None or k not in optional}


@dataclass(frozen=True)
class MemorizationCurve(Result):
    """Memorized fraction along the reverse process (:func:`~.memorization_vs_time`).

    Attributes
    ----------
    t : list of float
        Times in [0, 1] at which the endpoint prediction was judged.
    fraction : list of float
        Its memorized fraction at each time.
    """

    t: list[float]
    fraction: list[float]


@dataclass(frozen=True)
class MemorizationPoint(Result):
    """One n of :func:`flows.theory.sweeps.memorization_sweep`
    (:func:`flows.theory.sweeps.memorization_point`).

    Attributes
    ----------
    n : int
    memorized_trained, memorized_trained_fixed, criterion : float
        The trained field's memorized fraction (calibrated criterion; fixed 1/3 ratio) and
        the calibrated ratio.
    memorized_empirical_optimal : float
        The same for the exact empirical-optimal field.
    iid_baseline : float
        What i.i.d. draws of the target read.
    t, trained_vs_time, optimum_vs_time : list of float or None
        Along the reverse process (the times, and the two fields' fractions), when asked.
    """

    n: int
    memorized_trained: float
    memorized_trained_fixed: float
    criterion: float
    memorized_empirical_optimal: float
    iid_baseline: float
    t: list[float] | None = None
    trained_vs_time: list[float] | None = None
    optimum_vs_time: list[float] | None = None


@dataclass(frozen=True)
class MemorizationSweep(Result):
    """:func:`flows.theory.sweeps.memorization_sweep`: memorized fraction against n and time.

    Attributes
    ----------
    ns : list of int
    memorized_trained, memorized_trained_fixed : list of float
        Trained fields' memorized fraction (calibrated criterion; fixed 1/3 ratio), per n.
    criterion : list of float
        The calibrated ratio per n.
    memorized_empirical_optimal : list of float
        The same for the exact empirical-optimal field.
    iid_baseline : list of float
        What i.i.d. draws of the target read, per n.
    vs_time : dict of str to list of float
        Along the reverse process: ``"t"`` (the times) and one curve per field for the
        smallest and largest n.
    width, steps : int
        Of the trained fields.
    """

    ns: list[int]
    memorized_trained: list[float]
    memorized_trained_fixed: list[float]
    criterion: list[float]
    memorized_empirical_optimal: list[float]
    iid_baseline: list[float]
    vs_time: dict[str, list[float]]
    width: int
    steps: int
