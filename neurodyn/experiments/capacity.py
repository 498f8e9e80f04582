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


#: where :func:`resting_correlation` starts its cosine bump, per axis (radians): off the
#: target's centre 0 and off every lattice symmetry
START_ANGLE = 2.0


def resting_correlation(network, duration: float = 10.0, dt: float = 0.1,
                        angle: float = START_ANGLE) -> float:
    """Correlation of the bump the network rests in with the requested rate profile.

    The network relaxes (rk4, ``duration``) from a plain cosine bump
    (:func:`~neurodyn.manifold.bump_profile`) spanning the target's range of potentials and
    centred at ``angle`` on every axis, not from the target itself (which a network that merely
    holds it as a fixed point would keep); the rates reached are correlated (Pearson) with the
    target rates at their nearest manifold point. A flat final state reads 0.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    duration, dt : float
        Relaxation time and step, in units of tau.
    angle : float
        The starting bump's centre on each axis (radians).

    Returns
    -------
    float

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, profile="von-mises:2", kappa=2.0, steps=1, batch=2)).network
    >>> resting_correlation(net) > 0.999
    True
    """
    from ..dynamics.simulation import simulate
    from ..manifold import bump_profile, nearest_point

    m, g = network.manifold, network.geometry
    lo, hi = float(m.u0.min()), float(m.u0.max())
    start = g.shift((hi + lo) / 2 + (hi - lo) / 2 * bump_profile(g, "auto"),
                    torch.full((g.dim,), float(angle), dtype=torch.float64))
    tr = simulate(network, start.unsqueeze(0), duration, dt, method="rk4", backend="torch",
                  save_every=max(1, round(duration / dt)), diagnostics=False)
    u = tr.u[-1, 0]
    r, rs = network.activation(u), m.r_star(nearest_point(m, u.unsqueeze(0)))[0]
    r, rs = r - r.mean(), rs - rs.mean()
    norm = float(r.norm() * rs.norm())
    return float((r * rs).sum()) / norm if norm > 0 else 0.0


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
