"""Typed results of SEAL's learning experiments (:mod:`neurodyn.experiments.seal`).

Frozen dataclasses on :class:`_runkit.Result`. A row of an experiment is a
:class:`SealMeasurement` (spectrum, restoring field, energy and, when simulated, decay rates)
with the experiment's own extra fields; ``to_dict()`` gives the flat JSON row, and a sweep's
``to_dict()`` the nested mapping the demo writes (``{family: {kappa: row}}`` and so on).

Examples
--------
>>> m = SealMeasurement(spectrum_min=-2.02, spectrum_max=-1.98, fraction_within=1.0,
...                     worst_relative=0.01, n_zero=1, field_error=0.02, energy_error=0.03)
>>> sorted(m.to_dict())[:3], "decay_late" in m.to_dict()
(['energy_error', 'field_error', 'fraction_within'], False)
>>> row = FittedMeasurement(**m.fields(), fit_seconds=1.5)
>>> KappaSweep({"seal": {"2.0": row}}).to_dict()["seal"]["2.0"]["fit_seconds"]
1.5
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from _runkit import Result

__all__ = ["SealMeasurement", "FittedMeasurement", "CapacityMeasurement",
           "AblationMeasurement", "MLPMeasurement", "VariableControlRow", "KappaSweep",
           "CapacitySweep", "Ablation", "MLPSweep", "VariableControl"]

_DECAY = ("decay_early", "decay_late", "decay_worst_relative", "energy_ok")


@dataclass(frozen=True)
class SealMeasurement(Result):
    """One network measured against a prescribed ``kappa`` (:func:`~.seal_experiments.measure`).

    Attributes
    ----------
    spectrum_min, spectrum_max : float
        Range of the normal eigenvalues (1/tau).
    fraction_within : float
        Fraction of them within the tolerance of ``-kappa``.
    worst_relative : float
        Largest relative distance of one from ``-kappa``.
    n_zero : int
        Neutral eigenvalues.
    field_error, energy_error : float
        Worst relative errors of the restoring field and of the energy against ``kappa B``.
    decay_early, decay_late : dict of str to float or None
        Simulated decay rates per perturbation kind, early and late (None when the decay was
        not simulated; then the four decay fields are absent from ``to_dict()``).
    decay_worst_relative : float or None
        Their worst relative distance from ``kappa``.
    energy_ok : bool or None
        The energy audit passed in every simulated run.
    """

    spectrum_min: float
    spectrum_max: float
    fraction_within: float
    worst_relative: float
    n_zero: int
    field_error: float
    energy_error: float
    decay_early: dict[str, float] | None = None
    decay_late: dict[str, float] | None = None
    decay_worst_relative: float | None = None
    energy_ok: bool | None = None

    def fields(self) -> dict[str, Any]:
        """The measurement's own fields by name (to build an experiment's row from it)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(SealMeasurement)}

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON; the decay fields only when the decay was simulated."""
        out = super().to_dict()
        if self.decay_early is None:
            for key in _DECAY:
                del out[key]
        return out


@dataclass(frozen=True, kw_only=True)
class FittedMeasurement(SealMeasurement):
    """A fitted network's measurement with the fit's wall time (a kappa-sweep row)."""

    fit_seconds: float


@dataclass(frozen=True, kw_only=True)
class CapacityMeasurement(SealMeasurement):
    """A capacity-sweep row: the measurement and the number of learned parameters."""

    parameters: int


@dataclass(frozen=True, kw_only=True)
class AblationMeasurement(SealMeasurement):
    """An ablation row: the measurement and the slowest normal rate of the Jacobian (1/tau)."""

    slowest_rate: float


@dataclass(frozen=True, kw_only=True)
class MLPMeasurement(FittedMeasurement):
    """A fitted MLP energy: its measurement, the learned leak coefficient ``c0`` (the
    derivation's value is ``kappa - 1``), and the measurements with the MLP's weights zeroed
    (``without_mlp``) and with ``c0`` zeroed (``without_c0``)."""

    c0: float
    without_mlp: SealMeasurement
    without_c0: SealMeasurement


@dataclass(frozen=True)
class VariableControlRow(Result):
    """Restoring field and energy of one spectral variable (:func:`~.variable_control`).

    Attributes
    ----------
    field_error : dict of str to float
        Worst relative field error per perturbation kind.
    field_error_median : dict of str to float
        Median relative field error per kind.
    energy_ratio : dict of str to (float, float)
        Per kind, ``(min, max)`` of the energy over its target ``kappa B``.
    fit_seconds : float
    worst_relative : float
        Worst relative distance of a normal eigenvalue from ``-kappa``.
    """

    field_error: dict
    field_error_median: dict
    energy_ratio: dict
    fit_seconds: float
    worst_relative: float


def _rows(rows: dict) -> dict[str, Any]:
    return {str(k): v.to_dict() for k, v in rows.items()}


@dataclass(frozen=True)
class KappaSweep(Result):
    """Prescribed against measured rates: ``families[family][str(kappa)]`` is a row.

    ``to_dict()`` is ``{family: {kappa: row}}``.
    """

    families: dict[str, dict[str, FittedMeasurement]]

    def to_dict(self) -> dict[str, Any]:
        """``{family: {kappa: row}}``."""
        return {f: _rows(rows) for f, rows in self.families.items()}


@dataclass(frozen=True)
class CapacitySweep(Result):
    """Family variants against their errors: ``variants[name]`` is a row (``to_dict()``:
    ``{name: row}``)."""

    variants: dict[str, CapacityMeasurement]

    def to_dict(self) -> dict[str, Any]:
        """``{name: row}``."""
        return _rows(self.variants)


@dataclass(frozen=True)
class Ablation(Result):
    """Four ring networks on the same perturbations: ``networks[name]`` is a row.

    ``to_dict()`` is ``{name: row, ..., "kappa": kappa, "note": note}``.
    """

    networks: dict[str, AblationMeasurement]
    kappa: float
    note: str

    def to_dict(self) -> dict[str, Any]:
        """The rows by network name, with ``kappa`` and ``note``."""
        return {**_rows(self.networks), "kappa": self.kappa, "note": self.note}


@dataclass(frozen=True)
class MLPSweep(Result):
    """Fitted MLP energies: ``kappas[str(kappa)]`` is a row (``to_dict()``: ``{kappa: row}``)."""

    kappas: dict[str, MLPMeasurement]

    def to_dict(self) -> dict[str, Any]:
        """``{kappa: row}``."""
        return _rows(self.kappas)


@dataclass(frozen=True)
class VariableControl(Result):
    """The two spectral variables: ``variables["amplitude"]``, ``variables["power"]``
    (``to_dict()``: ``{variable: row}``)."""

    variables: dict[str, VariableControlRow]

    def to_dict(self) -> dict[str, Any]:
        """``{variable: row}``."""
        return _rows(self.variables)
