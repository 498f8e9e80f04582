"""Capacity study of the learned-template family: error against the number of learned parameters.

For each target profile (:mod:`neurodyn.fitting.profiles`) and each capacity ``K`` (the
template's harmonics per axis, :func:`~neurodyn.energies.template.template_basis`), a network is
fitted (:func:`neurodyn.fitting.core.fit`, family ``template``) and measured with the library's
attraction measures (:mod:`neurodyn.analysis.attraction`): the worst normal eigenvalue's
relative error and the worst restoring-field error on held-out perturbations of relative size
0.03-0.3. Beside each fit, the ablation that zeroes the learned template (the leak coefficient
kept) is measured the same way, and the per-mode ``seal`` family is fitted to the same profile as
the control. :func:`resting_correlation` compares the bump the network rests in with the
requested rate profile.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from _runkit import Result

__all__ = ["resting_correlation", "CapacityResult", "capacity_study", "capacity_row"]


def resting_correlation(network, duration: float = 10.0, dt: float = 0.1) -> float:
    """Correlation of the resting bump's rates with the requested rate profile.

    The target bump ``u*(0)`` of ``network.manifold`` is relaxed for ``duration`` (rk4); the
    rates of the state reached are correlated (Pearson) with the target rates at its nearest
    manifold point.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    duration, dt : float
        Relaxation time and step, in units of tau.

    Returns
    -------
    float
    """
    from ..dynamics.simulation import simulate
    from ..manifold import nearest_point

    m = network.manifold
    tr = simulate(network, m.u0.unsqueeze(0), duration, dt, method="rk4", backend="torch",
                  save_every=max(1, round(duration / dt)))
    u = tr.u[-1, 0]
    r, rs = network.activation(u), m.r_star(nearest_point(m, u.unsqueeze(0)))[0]
    r, rs = r - r.mean(), rs - rs.mean()
    return float((r * rs).sum() / (r.norm() * rs.norm()))


def _measure(network, kappa: float) -> dict:
    """Worst normal eigenvalue error, zero modes and worst field error of a network."""
    from ..analysis.attraction import field_energy_error, normal_spectrum

    ns = normal_spectrum(network, kappa)
    fe = field_energy_error(network, kappa, count=16)
    return {"spectrum_error": ns.worst_relative, "n_zero": ns.n_zero,
            "field_error": fe.worst_field()}


def capacity_row(config, harmonics: int | None) -> dict:
    """Fit one template network (``config`` with ``bandwidth = harmonics``) and measure it, and
    its ablation with the template zeroed.

    Returns
    -------
    dict
        ``profile``, ``harmonics``, ``parameters`` (learned: template coordinates + the leak
        coefficient), ``spectrum_error``, ``n_zero``, ``field_error``, ``leak``,
        ``ablated_field_error``, ``ablated_spectrum_error``.
    """
    from ..energies.template import template_basis
    from ..fitting.core import fit
    from ..fitting.profiles import profile_label

    cfg = replace(config, family="template", bandwidth=harmonics)
    net = fit(cfg, progress=False).network
    e = net.energy_fn
    row = {"profile": profile_label(cfg.profile), "harmonics": e.harmonics,
           "parameters": template_basis(net.geometry, e.harmonics).shape[0] + 1,
           **_measure(net, cfg.kappa), "leak": float(e.leak)}
    with torch.no_grad():
        e.template.zero_()
    ablated = _measure(net, cfg.kappa)
    row["ablated_field_error"] = ablated["field_error"]
    row["ablated_spectrum_error"] = ablated["spectrum_error"]
    return row


@dataclass(frozen=True)
class CapacityResult(Result):
    """Outcome of :func:`capacity_study`.

    Attributes
    ----------
    rows : list of dict
        One per (profile, capacity): :func:`capacity_row`'s entries.
    control : list of dict
        One per profile: the ``seal`` family's ``spectrum_error``, ``n_zero`` and
        ``field_error`` on the same target.
    kappa : float
    """

    rows: list
    control: list
    kappa: float

    def curve(self, profile: str) -> list[tuple[int, float]]:
        """``(parameters, field_error)`` of one profile, by increasing capacity."""
        return sorted((r["parameters"], r["field_error"]) for r in self.rows
                      if r["profile"] == profile)


def capacity_study(config, profiles: tuple[str, ...], harmonics: tuple[int, ...],
                   control: bool = True) -> CapacityResult:
    """Fit every profile at every capacity (and the ``seal`` control) and measure them.

    Parameters
    ----------
    config : FitConfig
        Everything but the profile, the family and the capacity.
    profiles : tuple of str
        Target profiles.
    harmonics : tuple of int
        Capacities ``K`` (template harmonics per axis).
    control : bool
        Also fit the per-mode ``seal`` family to each profile.

    Returns
    -------
    CapacityResult

    Examples
    --------
    >>> from neurodyn.fitting.config import FitConfig
    >>> res = capacity_study(FitConfig(n=24, steps=1, batch=2), ("von-mises:2",), (2, 4),
    ...                      control=False)
    >>> [r["parameters"] for r in res.rows]
    [6, 10]
    >>> res.rows[1]["field_error"] < res.rows[0]["field_error"]
    True
    """
    from ..fitting.core import fit
    from ..fitting.profiles import profile_label

    rows, ctrl = [], []
    for profile in profiles:
        base = replace(config, profile=profile)
        for k in harmonics:
            rows.append(capacity_row(base, int(k)))
        if control:
            net = fit(replace(base, family="seal", check_kappa=False), progress=False).network
            ctrl.append({"profile": profile_label(profile), **_measure(net, config.kappa)})
    return CapacityResult(rows, ctrl, float(config.kappa))
