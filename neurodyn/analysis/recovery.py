"""Standard experiments on a network: fit report and restoration.

Each returns a typed result (a frozen :class:`_runkit.Result` with ``to_dict()`` giving the
JSON-ready numbers; trajectories are kept as attributes but left out of ``to_dict``). Nothing
here writes files: :mod:`neurodyn.runs` writes the figures and ``metrics.json`` of a run
directory. This module holds the network report and restoration (relaxation back to the
manifold); the two experiments on motion along the manifold, path integration and diffusion,
live in :mod:`neurodyn.analysis.bump_motion`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from _runkit import BadInput, Result, artifact
from _runkit.runtime import with_threads

from ..dynamics.perturbations import PERTURBATIONS, perturb, random_strengths
from ..dynamics.simulation import SimulationResult, simulate
from ..network import HopfieldNetwork
from .connectivity import CirculantFit, EffectiveConnectivity, effective_connectivity, fit_circulant
from .diagnostics import (
    EnergyAudit,
    SpectrumSummary,
    energy_audit,
    fixed_point_residual,
    jacobian_spectrum,
    summarize_spectrum,
)

__all__ = ["NetworkReport", "network_report", "RestorationStats", "RestorationResult",
           "restoration"]


@dataclass(frozen=True)
class NetworkReport(Result):
    """Jacobian spectrum, connectivity and fixed-point residual of a network at its manifold.

    Attributes
    ----------
    fixed_point_residual : float
        Relative residual of the fixed-point equation on the manifold.
    spectrum : SpectrumSummary
        Neutral eigenvalues and the slowest decaying one.
    connectivity : CirculantFit
        The best fixed circulant network reproducing the recurrent input
        (:func:`~neurodyn.analysis.connectivity.fit_circulant`): its profile ``w(delta)`` and
        its errors.
    effective : EffectiveConnectivity
        ``W_eff = -Hess F`` at the manifold as it is: rank and singular spectrum
        (:func:`~neurodyn.analysis.connectivity.effective_connectivity`).
    eigenvalues : Tensor, shape (N,)
        The Jacobian's eigenvalues (1/tau), descending.
    """

    fixed_point_residual: float
    spectrum: SpectrumSummary
    connectivity: CirculantFit
    effective: EffectiveConnectivity
    eigenvalues: torch.Tensor = artifact()

    def to_dict(self) -> dict:
        """``fixed_point_residual``; ``jacobian`` (``n_zero``, ``zero``, ``slowest_nonzero``,
        ``zero_tol``); ``connectivity``, the fixed circulant fit (``w0``, ``min_far`` = most
        negative weight beyond pi/3, ``zero_crossings``, ``offset``, ``relative_error``,
        ``field_error``, ``count``, ``strength``); ``effective_connectivity`` (``rank``,
        ``singular_values``, ``top_share``, ``diagonal_share``, ``circulant_error``,
        ``rtol``)."""
        s = self.spectrum
        return {
            "fixed_point_residual": self.fixed_point_residual,
            "jacobian": {"n_zero": s.n_zero, "zero": s.zero,
                         "slowest_nonzero": s.slowest_nonzero, "zero_tol": s.zero_tol},
            "connectivity": self.connectivity.to_dict(),
            "effective_connectivity": self.effective.to_dict(),
        }


def network_report(network: HopfieldNetwork, zero_tol: float = 1e-3) -> NetworkReport:
    """Spectrum, connectivity and fixed-point residual of a network at its manifold.

    The connectivity is reported twice, as what each is: the state-dependent effective
    connectivity at ``psi = 0`` (rank, singular values) and the best fixed circulant network
    (profile and errors, fitted on 64 states perturbed by up to 0.3, seed 0).

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    zero_tol : float
        Eigenvalues with ``|lambda| <= zero_tol`` count as neutral.

    Returns
    -------
    NetworkReport

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> report = network_report(fit(FitConfig(n=32, steps=5)).network)
    >>> report.spectrum.n_zero, sorted(report.to_dict())
    (1, ['connectivity', 'effective_connectivity', 'fixed_point_residual', 'jacobian'])
    """
    ev = jacobian_spectrum(network)
    return NetworkReport(fixed_point_residual(network), summarize_spectrum(ev, zero_tol),
                         fit_circulant(network), effective_connectivity(network), ev)


@dataclass(frozen=True)
class RestorationStats(Result):
    """Restoration after one kind of perturbation.

    Attributes
    ----------
    fraction_within : float
        Fraction of states whose final distance is ``<= threshold``.
    final_max, final_median : float
        Final relative distances to the manifold.
    initial_min, initial_max : float
        Measured initial distances.
    energy : EnergyAudit
        The energy audit (:func:`~neurodyn.analysis.diagnostics.energy_audit`).
    """

    fraction_within: float
    final_max: float
    final_median: float
    initial_min: float
    initial_max: float
    energy: EnergyAudit


@dataclass(frozen=True)
class RestorationResult(Result):
    """Outcome of :func:`restoration`.

    Attributes
    ----------
    kinds : dict of str to RestorationStats
        Per perturbation kind.
    threshold, duration : float
        Distance threshold and simulated time (tau).
    count : int
        States per kind.
    trajectories : dict of str to SimulationResult
        The runs, per kind (not in ``to_dict``).
    """

    kinds: dict[str, RestorationStats]
    threshold: float
    duration: float
    count: int
    trajectories: dict[str, SimulationResult] = artifact()

    def to_dict(self) -> dict:
        """One entry per kind, with ``threshold``, ``duration`` and ``count``."""
        out: dict = {k: v.to_dict() for k, v in self.kinds.items()}
        out.update(threshold=self.threshold, duration=self.duration, count=self.count)
        return out


@with_threads
def restoration(network: HopfieldNetwork, count: int = 256,
                kinds: tuple[str, ...] = ("noise", "shape", "amplitude", "lesion"),
                strength: tuple[float, float] = (0.1, 0.5), duration: float = 20.0,
                dt: float = 0.1, threshold: float = 0.01, seed: int = 0,
                device: str = "cpu") -> RestorationResult:
    """Relaxation of perturbed manifold states back to the manifold.

    For each kind, ``count`` states at random manifold points are perturbed with relative
    strengths uniform in ``strength`` and simulated autonomously for ``duration``; the result
    reports the final relative distance ``min_psi ||u - u*(psi)|| / ||u*||``.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    count : int
        States per kind, >= 1.
    kinds : tuple of str
        Perturbation kinds (:data:`~neurodyn.dynamics.perturbations.PERTURBATIONS` except ``none``).
    strength : tuple of float
        Range ``(low, high)`` of the relative perturbation size.
    duration, dt : float
        Simulated time and step (tau).
    threshold : float
        Distance that counts as restored.
    seed : int
        Seeds the manifold points, strengths and perturbations.
    device : str
        Where the runs are simulated (the trajectories are returned on the CPU).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    RestorationResult

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=5)).network
    >>> res = restoration(net, count=2, kinds=("noise",), duration=2.0)
    >>> sorted(res.to_dict()), res.trajectories["noise"].u.shape
    (['count', 'duration', 'noise', 'threshold'], torch.Size([3, 2, 32]))
    """
    _check_restoration(network, kinds, count)
    gen = torch.Generator().manual_seed(seed)
    m = network.manifold
    stats, trajs = {}, {}
    for kind in kinds:
        psi = network.geometry.random_phase(count, gen)
        s = random_strengths(count, strength[0], strength[1], gen)
        u0 = perturb(m, psi, kind, s, gen)
        tr = simulate(network, u0, duration, dt, save_every=max(1, int(round(1.0 / dt))),
                      device=device).cpu()
        stats[kind] = _restoration_stats(tr, threshold)
        trajs[kind] = tr
    return RestorationResult(stats, float(threshold), float(duration), count, trajs)


def _check_restoration(network: HopfieldNetwork, kinds: tuple[str, ...], count: int) -> None:
    """Raise ``BadInput`` without a target manifold, perturbation kinds or a count >= 1."""
    if network.manifold is None:
        raise BadInput("network: restoration needs a network with a target manifold",
                       param="network")
    if not kinds:
        raise BadInput("kinds: give at least one perturbation kind", param="kinds")
    for k in kinds:
        if k not in PERTURBATIONS or k == "none":
            raise BadInput(f"kinds: {k!r} unknown; choose from {PERTURBATIONS[1:]}", param="kinds")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(f"count={count!r}: must be an integer >= 1", param="count")


def _restoration_stats(tr, threshold: float) -> RestorationStats:
    """Distances at the start and the end of one kind's runs, and their energy audit."""
    d = tr.distance
    return RestorationStats(
        fraction_within=float((d[-1] <= threshold).double().mean()),
        final_max=float(d[-1].max()), final_median=float(d[-1].median()),
        initial_min=float(d[0].min()), initial_max=float(d[0].max()),
        energy=energy_audit(tr))
