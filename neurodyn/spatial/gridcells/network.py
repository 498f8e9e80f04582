r"""The network side of a grid-cell run: its stable integration step and effective connectivity.

A run integrates the torus network on the largest whole fraction of the trajectory's sample
interval that is inside the integrator's stability region for the network's fastest decaying
mode (:func:`network_step`); :func:`connectivity_row` is the effective weight profile onto one
neuron at its bump, drawn by :func:`neurodyn.spatial.gridcells.run.plot_connectivity_sheet`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from _runkit import BadInput

from ...network import HopfieldNetwork
from .checks import _check_network

__all__ = ["DEFAULT_DT_NETWORK", "STABILITY_LIMIT", "STABILITY_MARGIN", "MAX_SUBSTEPS",
           "connectivity_row", "network_step"]

#: Largest network step (units of ``tau``) used by default
#: (:func:`neurodyn.spatial.gridcells.run.run_grid_cells`).
DEFAULT_DT_NETWORK = 2.0
#: Largest ``|lambda| dt`` on the negative real axis inside each method's stability region.
STABILITY_LIMIT = {"euler": 2.0, "midpoint": 2.0, "rk4": 2.785}
#: Fraction of the stability limit a step may use.
STABILITY_MARGIN = 0.9
#: the most network steps a trajectory sample may take: a network stiffer than that is refused
#: (its run would take a million integration steps per sample)
MAX_SUBSTEPS = 1e6


def connectivity_row(network: HopfieldNetwork, neuron: tuple[int, int] = (0, 0)) -> np.ndarray:
    """Effective connectivity onto one neuron at the bump centred on that neuron.

    .. math:: W_{\\mathrm{eff}}[n, j] = -\\frac{\\partial^2 F}{\\partial r_n \\partial r_j}
              \\Big|_{r = r^*(\\psi_n)}

    Parameters
    ----------
    network : HopfieldNetwork
        A torus network with a target manifold.
    neuron : tuple of int
        Sheet index ``n = (i, j)``.

    Returns
    -------
    array (n1, n2): the weights from every neuron of the sheet.
    """
    g = _check_network(network, None)
    i, j = (int(x) for x in neuron)
    if not (0 <= i < g.shape[0] and 0 <= j < g.shape[1]):
        raise BadInput(f"neuron={neuron!r}: must index the {g.shape[0]} x {g.shape[1]} sheet",
                       param="neuron")
    psi = torch.tensor([2 * math.pi * i / g.shape[0], 2 * math.pi * j / g.shape[1]],
                       dtype=torch.float64)
    r = network.rates(network.manifold.u_star(psi))
    e = torch.zeros(g.shape, dtype=torch.float64)
    e[i, j] = 1.0
    with torch.no_grad():
        row = -network.energy_fn.hvp(r, e)
    return row.detach().numpy()


def network_step(network: HopfieldNetwork, sample_interval: float, dt_max: float,
                 method: str = "rk4") -> tuple[float, int, float]:
    """The network step: the largest whole fraction of the sample interval that is stable.

    ``dt_net = dt' / q`` with ``q`` the smallest integer such that ``dt' / q <= dt_max tau`` and
    ``|lambda_min| dt' / q <= 0.9 L_method``,

    with ``lambda_min`` the most negative eigenvalue of the Jacobian at the manifold
    (:func:`neurodyn.analysis.diagnostics.jacobian_spectrum`) and ``L`` the method's real-axis
    stability limit (:data:`STABILITY_LIMIT`: 2.785 for rk4, 2 for euler and midpoint).

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    sample_interval : float
        ``Delta t'``, the trajectory's sample interval in network time units.
    dt_max : float
        Largest step in units of ``tau``.
    method : str
        ``rk4``, ``midpoint`` or ``euler``.

    Returns
    -------
    dt_net, substeps, lambda_min : the step (network time units), ``q``, and ``lambda_min``.
    """
    from ...analysis.diagnostics import jacobian_spectrum

    why = "(a heterogeneity, gain_sd, threshold_sd or weight_sd, too large for it?)"
    try:
        lam = float(jacobian_spectrum(network).min())
    except RuntimeError as err:  # torch's LinAlgError: no spectrum of a degenerate Jacobian
        raise BadInput(f"network: the spectrum of its Jacobian at the target bump cannot be "
                       f"computed ({' '.join(str(err).split())[:120]}), so no stable step "
                       f"can be chosen {why}", param="network") from None
    bound = dt_max * network.tau
    if lam < 0:
        bound = min(bound, STABILITY_MARGIN * STABILITY_LIMIT[method] / -lam)
    steps = sample_interval / bound if math.isfinite(lam) else math.inf
    if not steps <= MAX_SUBSTEPS:
        raise BadInput(f"network: its stiffest mode (Jacobian eigenvalue {lam:.3g} at the "
                       f"target bump) needs {steps:.3g} {method} steps per trajectory sample "
                       f"to stay stable, more than {MAX_SUBSTEPS:g} {why}", param="network")
    substeps = max(1, math.ceil(steps - 1e-9))
    return sample_interval / substeps, substeps, lam
