r"""The energy learned from a fit of recorded activity.

SEAL fits an energy whose low-energy set is the target bump manifold and whose normal
relaxation rate is ``kappa`` (units of ``1/tau``). From activity, ``kappa`` is the geometric
mean of the measured normal rates times ``tau`` (:attr:`~.core.ActivityFit.kappa`) -- or, where
no normal mode fluctuated measurably (tens of cells), :data:`DEFAULT_KAPPA`, said so in
``kappa_source`` -- and the
target bump is the population's tuning profile: the fitted profile ``p`` (peak 1, minimum 0)
sampled at the network's ``n`` neurons and mapped onto the rates of the default bump's range,
``r = phi(a - c) + (phi(a + c) - phi(a - c)) p``, through
:class:`~neurodyn.fitting.config.FitConfig`'s ``profile`` where the installed library has it.
Where it does not, the default (cosine) family is fitted with the estimated ``kappa`` and the
result says ``profile_used: false``. Either way :func:`resting_profile_correlation` compares the
learned network's resting bump with the tuning profile.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from .cells import profile_values

__all__ = ["learn_energy", "resting_profile_correlation", "profile_supported",
           "DEFAULT_KAPPA"]

#: the normal attraction rate (units of 1/tau) learned when the activity measures none
DEFAULT_KAPPA = 1.0


def profile_supported() -> bool:
    """Whether :class:`~neurodyn.fitting.config.FitConfig` takes a target ``profile``."""
    from ..fitting.config import FitConfig

    return "profile" in {f.name for f in fields(FitConfig)}


def _ring_rates(fit, n: int, a: float, c: float, gain: float, rmax: float) -> np.ndarray:
    theta = np.arange(n) * 2 * np.pi / n
    p = np.clip(profile_values(fit.cells.profile, theta), 0.0, 1.0)
    lo, hi = (rmax / (1 + np.exp(-gain * (a - c))), rmax / (1 + np.exp(-gain * (a + c))))
    return lo + (hi - lo) * p


def resting_profile_correlation(network, fit, duration: float = 30.0) -> float:
    """Correlation of the network's resting bump with the fitted tuning profile at the
    network's neurons (ring only; NaN for a torus): the state the dynamics reach in
    ``duration`` (units of tau) from the target bump with 5% noise, re-centred at 0.

    Parameters
    ----------
    network : HopfieldNetwork
        The learned network.
    fit : ActivityFit
        The activity fit.
    duration : float
        Relaxation time (units of tau).

    Returns
    -------
    float
    """
    import torch

    from ..dynamics.simulation import simulate

    if fit.geometry != "ring":
        return float("nan")
    with torch.no_grad():
        u0 = network.manifold.u_star(torch.zeros(1, dtype=torch.float64)).reshape(1, -1)
    gen = torch.Generator().manual_seed(0)
    u0 = u0 * (1 + 0.05 * torch.randn(u0.shape, generator=gen, dtype=u0.dtype))
    run = simulate(network, u0, duration=duration, dt=0.1, save_every=int(duration / 0.1))
    r = run.r[-1, 0].reshape(-1).cpu().numpy()
    theta = np.arange(r.size) * 2 * np.pi / r.size
    shift = float(run.decoded[-1, 0].reshape(-1)[0])
    return float(np.corrcoef(r, profile_values(fit.cells.profile, theta - shift))[0, 1])


def learn_energy(fit, n: int | tuple = 64, seed: int = 0, steps: int | None = None):
    """Learn the SEAL energy of an activity fit (module docstring).

    Parameters
    ----------
    fit : ActivityFit
        From :func:`~.core.fit_activity`, with an attractor.
    n : int or tuple of int
        Neurons of the network (ring), or ``(n1, n2)`` (torus; default ``(16, 16)``).
    seed : int
        Seeds the fit.
    steps : int or None
        Sampled batches of the fit (None: the fit's default).

    Returns
    -------
    network : HopfieldNetwork
    info : dict
        ``kappa`` (the fit's, or :data:`DEFAULT_KAPPA` where the activity measured no normal
        rate), ``kappa_source``, ``profile_used``, ``resting_profile_correlation``.
    """
    from ..fitting.config import FitConfig
    from ..fitting.core import fit as seal_fit

    kappa, source = fit.kappa, "measured"
    if not (np.isfinite(kappa) and kappa > 0):
        kappa, source = DEFAULT_KAPPA, "default: no normal mode fluctuated measurably"
    extra = {} if steps is None else {"steps": steps}
    used = profile_supported() and fit.geometry == "ring"
    if fit.geometry == "torus":
        cfg = FitConfig(geometry="torus", n=n if isinstance(n, tuple) else (16, 16),
                        kappa=kappa, seed=seed, **extra)
    elif used:
        d = FitConfig(geometry="ring", n=n)
        rates = _ring_rates(fit, n, d.a, d.c, d.gain, d.rmax)
        cfg = FitConfig(geometry="ring", n=n, kappa=kappa, seed=seed,
                        profile=tuple(float(v) for v in rates), **extra)
    else:
        cfg = FitConfig(geometry="ring", n=n, kappa=kappa, seed=seed, **extra)
    result = seal_fit(cfg)
    network = result.network
    info = {"kappa": kappa, "kappa_source": source, "profile_used": bool(used),
            "resting_profile_correlation": resting_profile_correlation(network, fit),
            "config": cfg.to_dict()}
    return network, info
