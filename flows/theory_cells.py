"""Sweep cells of the theory sweeps run over a grid: one grid point each.

For each of :func:`flows.theory_sweeps.risk_sweep`, :func:`flows.theory_sweeps.memorization_sweep`,
:func:`flows.risk_paths.protocol_sweep` and :func:`flows.ntk_seeds.gap_sweep`:

- ``*_at(params)``: the typed result of one grid point, from its parameters (the grid
  coordinates and the sweep's fixed settings). The run's seed is the coordinate (or fixed
  setting) ``run_seed``, never the ``seed`` the sweep engine adds from the coordinates, so a
  result does not depend on how the grid is run.
- ``*_cell(params)``: the same as the JSON row :func:`_runkit.sweep.run_sweep` stores (the
  typed result's ``to_dict()``); a top-level function, so Dask can send it to its workers.

The sweeps run the points through :func:`flows.theory.grid_points`: in this process, or as
cells on a Dask cluster whose rows are rebuilt into the typed results with ``from_dict``.
"""

from __future__ import annotations

from dataclasses import replace

from .ntk import NTKComparison, ntk_comparison
from .risk_paths import RiskPath, reads_at, risk_path
from .theory_results import MemorizationPoint, RiskPoint
from .theory_sweeps import memorization_point, risk_point

__all__ = ["risk_at", "risk_cell", "memorization_at", "memorization_cell", "path_at",
           "path_cell", "ntk_at", "ntk_cell"]


def risk_at(params: dict) -> RiskPoint:
    """:func:`flows.theory_sweeps.risk_point` of ``params["base"]`` at ``n`` training points
    and seed ``run_seed``, against ``lstar``, with ``point_kwargs``.

    Returns
    -------
    RiskPoint
    """
    cfg = replace(params["base"], n_train=params["n"], seed=params["run_seed"])
    return risk_point(cfg, params["lstar"], **params["point_kwargs"])


def risk_cell(params: dict) -> dict:
    """One cell of the risk sweep: :func:`risk_at` as a JSON row."""
    return risk_at(params).to_dict()


def memorization_at(params: dict) -> MemorizationPoint:
    """:func:`flows.theory_sweeps.memorization_point` at ``n`` with the sweep's ``data``,
    ``width``, ``steps``, ``n_samples``, ``run_seed`` and ``reference_steps``; the curves along
    the reverse process when ``n`` is in ``vs_time_at``.

    Returns
    -------
    MemorizationPoint
    """
    return memorization_point(params["n"], params["data"], params["width"], params["steps"],
                              params["n_samples"], params["run_seed"],
                              params["reference_steps"], params["n"] in params["vs_time_at"])


def memorization_cell(params: dict) -> dict:
    """One cell of the memorization sweep: :func:`memorization_at` as a JSON row."""
    return memorization_at(params).to_dict()


def path_at(params: dict) -> RiskPath:
    """:func:`flows.risk_paths.risk_path` of ``params["base"]`` at ``n`` points and seed
    ``run_seed``, against ``lstar``, read at the step counts of ``protocols`` (anchored at
    ``n0`` with ``steps0`` steps) and at ``extra_reads`` (:func:`flows.risk_paths.reads_at`),
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


def path_cell(params: dict) -> dict:
    """One cell of the stopping sweep: :func:`path_at` as a JSON row."""
    return path_at(params).to_dict()


def ntk_at(params: dict) -> NTKComparison:
    """:func:`flows.ntk.ntk_comparison` of ``params["base"]`` (theory regime) at ``width``
    and seed ``run_seed``.

    Returns
    -------
    NTKComparison
    """
    return ntk_comparison(replace(params["base"], width=params["width"],
                                  seed=params["run_seed"]))


def ntk_cell(params: dict) -> dict:
    """One cell of the NTK-gap sweep: :func:`ntk_at` as a JSON row."""
    return ntk_at(params).to_dict()
