r"""Noise set by a biological level: the diffusion of each module's bump in the arena.

Independent noise ``sigma dW`` on every ``u_i`` makes the bump's phase diffuse with the tensor
``D_psi(sigma) = sigma^2 D_psi(1)`` (rad^2 per network time unit;
:func:`neurodyn.analysis.drift.diffusion_tensor_theory`). A module of wave vectors
``K = [k_1; k_2]`` reads position as ``x = K^{-1} psi``, so its position error diffuses with

.. math:: D_x = K^{-1} D_\psi K^{-T} / u \qquad (\mathrm{m^2/s}),

``u`` the seconds per network time unit (``tau_seconds / tau``). The stated level is
``D = tr(D_x)``, the coefficient of ``E|e(t)|^2 = 2 D t``: the root-mean-square error of path
integration grows like ``sqrt(2 D t)``. Since ``D`` grows like ``sigma^2 s^2`` with the spacing
``s``, one level in every module needs its own ``sigma_m = sqrt(D / D_m(1))``.
"""

from __future__ import annotations

import math

import numpy as np

from _runkit import BadInput

from ...network import HopfieldNetwork
from ..phases import wave_vectors

__all__ = ["module_diffusion", "noise_for_diffusion"]


def module_diffusion(network: HopfieldNetwork, spacings, noise, orientation: float = 0.0,
                     tau_seconds: float = 0.01) -> np.ndarray:
    """``tr(D_x)`` of each module's position error (m^2/s) for the noise ``sigma`` of each.

    Parameters
    ----------
    network : HopfieldNetwork
        A torus network with its target manifold.
    spacings : sequence of float, shape (M,)
        Module spacings (m).
    noise : float or sequence of float, shape (M,)
        ``sigma`` of every module (one value: the same for all).
    orientation : float
        Angle of ``k1`` (radians).
    tau_seconds : float
        Seconds of the network's ``tau``.

    Returns
    -------
    ndarray, shape (M,)

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(geometry="torus", n=(12, 12), steps=2)).network
    >>> d = module_diffusion(net, [0.4, 0.8], 0.1)
    >>> round(float(d[1] / d[0]), 6)                 # D grows like the spacing squared
    4.0
    """
    from ...analysis.drift import diffusion_tensor_theory

    sp = [float(s) for s in spacings]
    sig = np.broadcast_to(np.asarray(noise, dtype=float), (len(sp),))
    unit = float(tau_seconds) / float(network.tau)
    d_psi = diffusion_tensor_theory(network, 1.0)
    out = []
    for s, sg in zip(sp, sig, strict=True):
        kinv = np.linalg.inv(wave_vectors(s, orientation, network.geometry.lattice)[:2])
        out.append(float(sg) ** 2 * float(np.trace(kinv @ d_psi @ kinv.T)) / unit)
    return np.asarray(out)


def noise_for_diffusion(network: HopfieldNetwork, spacings, diffusion: float,
                        orientation: float = 0.0, tau_seconds: float = 0.01) -> list[float]:
    """The noise ``sigma_m`` of each module whose position error diffuses with ``diffusion``.

    Parameters
    ----------
    network : HopfieldNetwork
        A torus network with its target manifold.
    spacings : sequence of float, shape (M,)
        Module spacings (m).
    diffusion : float
        The target ``D = tr(D_x)`` in m^2/s (> 0; 1 cm^2/s is 1e-4).
    orientation : float
        Angle of ``k1`` (radians).
    tau_seconds : float
        Seconds of the network's ``tau``.

    Returns
    -------
    list of float, length M

    Raises
    ------
    BadInput
        ``diffusion`` not a finite number > 0.

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(geometry="torus", n=(12, 12), steps=2)).network
    >>> sig = noise_for_diffusion(net, [0.4, 0.8], 1e-4)
    >>> np.allclose(module_diffusion(net, [0.4, 0.8], sig), 1e-4), round(sig[0] / sig[1], 6)
    (True, 2.0)
    """
    if isinstance(diffusion, bool) or not isinstance(diffusion, (int, float)) or not \
            (math.isfinite(diffusion) and diffusion > 0):
        raise BadInput(f"diffusion={diffusion!r}: must be a finite number > 0 (m^2/s)",
                       param="diffusion")
    unit_d = module_diffusion(network, spacings, 1.0, orientation, tau_seconds)
    return [math.sqrt(float(diffusion) / d) for d in unit_d]
