"""The grid points of the theory sweeps, one typed result each.

For each of :func:`flows.theory.sweeps.risk_sweep`, :func:`flows.theory.sweeps.memorization_sweep`,
:func:`flows.theory.risk.protocol_sweep` and :func:`flows.theory.ntk_gap.gap_sweep`, ``*_at(params)``
is the typed result of one grid point from its parameters (the grid coordinates and the sweep's
fixed settings). The run's seed is the coordinate (or fixed setting) ``run_seed``, never the
``seed`` the sweep engine adds from the coordinates, so a result does not depend on how the grid
is run. They are top-level functions, so :func:`_runkit.sweep.grid_points` can run them in this
process or send them to a Dask cluster's workers (whose stored rows it rebuilds with
``from_dict``).
"""

from __future__ import annotations

from dataclasses import replace

from .ntk import NTKComparison, ntk_comparison
from .results import MemorizationPoint, RiskPoint
from .risk import RiskPath, reads_at, risk_path
from .sweeps import memorization_point, risk_point

__all__ = ["risk_at", "memorization_at", "path_at", "ntk_at"]


def risk_at(params: dict) -> RiskPoint:
    """:func:`flows.theory.sweeps.risk_point` of ``params["base"]`` at ``n`` training points
    and seed ``run_seed``, against ``lstar``, with ``point_kwargs``.

    Returns
    -------
    RiskPoint
    """
    cfg = replace(params["base"], n_train=params["n"], seed=params["run_seed"])
    return risk_point(cfg, params["lstar"], **params["point_kwargs"])



def memorization_at(params: dict) -> MemorizationPoint:
    """:func:`flows.theory.sweeps.memorization_point` at ``n`` with the sweep's ``data``,
    ``width``, ``steps``, ``n_samples``, ``run_seed`` and ``reference_steps``; the curves along
    the reverse process when ``n`` is in ``vs_time_at``.

    Returns
    -------
    MemorizationPoint
    """
    return memorization_point(params["n"], params["data"], params["width"], params["steps"],
                              params["n_samples"], params["run_seed"],
                              params["reference_steps"], params["n"] in params["vs_time_at"])



def path_at(params: dict) -> RiskPath:
    """:func:`flows.theory.risk.risk_path` of ``params["base"]`` at ``n`` points and seed
    ``run_seed``, against ``lstar``, read at the step counts of ``protocols`` (anchored at
    ``n0`` with ``steps0`` steps) and at ``extra_reads`` (:func:`flows.theory.risk.reads_at`),
    with ``n_test`` test draws and ``targets``.

    Returns
    -------
    RiskPath
    """
    n = params["n"]
    reads = reads_at(n, params["n0"], params["steps0"], params["protocols"],
                     params["extra_reads"])
    return risk_path(replace(params["base"], n_train=n, seed=params["run_seed"]),
                     params["lstar"], reads, params["n_test"], params["targets"])



def ntk_at(params: dict) -> NTKComparison:
    """:func:`flows.theory.ntk.ntk_comparison` of ``params["base"]`` (theory regime) at ``width``
    and seed ``run_seed``.

    Returns
    -------
    NTKComparison
    """
    return ntk_comparison(replace(params["base"], width=params["width"],
                                  seed=params["run_seed"]))

