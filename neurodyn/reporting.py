"""The fit report of a network: Jacobian spectrum, connectivity and fixed-point residual at its
manifold (a typed result with ``to_dict()``; :mod:`neurodyn.experiments` re-exports it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .diagnostics import (
    ConnectivityProfile,
    SpectrumSummary,
    connectivity_profile,
    fixed_point_residual,
    jacobian_spectrum,
    summarize_spectrum,
)
from .network import HopfieldNetwork

__all__ = ["NetworkReport", "network_report"]


@dataclass(frozen=True)
class NetworkReport:
    """Jacobian spectrum, connectivity and fixed-point residual of a network at its manifold.

    Attributes
    ----------
    fixed_point_residual : float
        Relative residual of the fixed-point equation on the manifold.
    spectrum : SpectrumSummary
        Neutral eigenvalues and the slowest decaying one.
    eigenvalues : Tensor, shape (N,)
        The Jacobian's eigenvalues (1/tau), descending.
    connectivity : ConnectivityProfile
        The effective connectivity profile ``w(delta)``.
    """

    fixed_point_residual: float
    spectrum: SpectrumSummary
    eigenvalues: torch.Tensor = field(repr=False, compare=False)
    connectivity: ConnectivityProfile = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """``fixed_point_residual``; ``jacobian`` (``n_zero``, ``zero``, ``slowest_nonzero``,
        ``zero_tol``); ``connectivity`` (``w0``, ``min_far`` = most negative weight beyond
        pi/3, ``zero_crossings``)."""
        s, prof = self.spectrum, self.connectivity
        return {
            "fixed_point_residual": self.fixed_point_residual,
            "jacobian": {"n_zero": s.n_zero, "zero": s.zero,
                         "slowest_nonzero": s.slowest_nonzero, "zero_tol": s.zero_tol},
            "connectivity": {"w0": prof.at_zero, "min_far": prof.min_beyond(math.pi / 3),
                             "zero_crossings": prof.zero_crossings()},
        }


def network_report(network: HopfieldNetwork, zero_tol: float = 1e-3) -> NetworkReport:
    """Spectrum, connectivity and fixed-point residual of a network at its manifold.

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
    >>> from neurodyn.fitting import FitConfig, fit
    >>> report = network_report(fit(FitConfig(n=32, steps=5)).network)
    >>> report.spectrum.n_zero, sorted(report.to_dict())
    (1, ['connectivity', 'fixed_point_residual', 'jacobian'])
    """
    ev = jacobian_spectrum(network)
    return NetworkReport(fixed_point_residual(network), summarize_spectrum(ev, zero_tol), ev,
                         connectivity_profile(network))
