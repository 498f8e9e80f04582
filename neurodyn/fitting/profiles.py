"""Target bump profiles of a fit: the shape of the requested attractor's bump.

A profile gives the target potentials ``u*(theta)`` at ``psi = 0`` (the manifold is their exact
spectral translates, :class:`~neurodyn.manifold.TargetManifold`); the requested RATE profile is
``phi(u*)``. Named profiles are ``u* = a + c p`` with ``p`` peaked at 1 at ``theta = 0`` and
ranging over ``[-1, 1]``, a function of the lattice's own cosine coordinate

- ring: ``x = cos theta``;
- hex torus: ``x = (cos t1 + cos t2 + cos(t1 - t2) - 1) / 2`` (the three cosines of the
  library's triad; ``x ~ cos t`` near the peak along an axis, ``x`` in ``[-5/4, 1]``);
- square torus: ``x = (cos t1 + cos t2) / 2``;

through ``p = -1 + 2 (f(x) - f(x_lo)) / (f(1) - f(x_lo))``:

- ``cosine``: today's bump (:func:`neurodyn.manifold.bump_profile`: the cosine, the hex sum of
  three cosines, the square product), unchanged;
- ``von-mises:K``: ``f(x) = exp(K x)``, a von Mises tuning curve of concentration ``K > 0``;
- ``flat-top:W``: ``f(x) = sigmoid((x - cos W) / (s sin W))``, a top-hat of half-width
  ``0 < W < pi`` radians whose edges are smoothed over ``s`` = two lattice steps
  (``2 pi / min(shape)`` each) of phase: about the sharpest edge whose translates the lattice
  still carries without pinning the bump to the neurons;
- ``asymmetric:S``: ``f(x) = x`` with the first phase warped, ``t1 -> t1 + S (1 - cos t1)``
  (``0 < |S| < 1``, a monotone warp with the peak kept at 0): a cosine bump whose one flank is
  steeper than the other, the skew growing with ``S``.

A user's profile is an array of RATES (``(N,)`` over the angles ``2 pi j / N`` for the ring,
``(n1, n2)`` for the torus), every value strictly inside the activation's range, not constant;
``u* = phi^{-1}(r)``. From the command line it is a ``.npy`` file.

What a fit can reach (:func:`check_fittable`, before anything is written):

- one bump: the rates above half their range form one connected region of the periodic
  lattice (:func:`count_bumps`); two bumps make the template's nearest translate ambiguous and
  the fit's loss leaves a sane range;
- little content at the top of the lattice's band (:func:`band_edge_content`, ``c``): a bump
  that the lattice barely resolves is pinned to the neurons. Fitted on the 128-neuron ring
  (Gaussian rate bumps of floor 0.05 and peak 0.95, family template, the fit's own checks
  against the network's attractor), the pinned tangent eigenvalue is
  ``lambda ~ PINNING kappa (n c)^2`` (``n`` the longest side; :data:`PINNING` = 0.011, within
  15% from c = 1.2e-3 to 4.8e-3 at kappa 1 and 3, and 0.009 on a 16-neuron ring), and a fit
  fails its neutral count when ``lambda`` exceeds the check's tolerance 1e-3
  (:data:`~neurodyn.analysis.attraction.NEUTRAL_TOL`): at kappa 1 fits passed at c = 2.0e-3
  and failed from c = 2.9e-3. A profile whose predicted ``lambda`` exceeds that tolerance is
  refused (:func:`max_edge_content`).
"""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from _runkit import BadInput

from ..activation import Activation
from ..geometry.populations import Geometry, Ring, Torus

__all__ = ["NAMED_PROFILES", "check_profile_spec", "profile_label", "profile_potentials",
           "count_bumps", "band_edge_content", "max_edge_content", "check_fittable",
           "EDGE_FRACTION", "PINNING"]

#: the top of the band: modes with ``max_a |k_a| / (n_a / 2) >= EDGE_FRACTION``
EDGE_FRACTION = 0.75

#: the measured pinning coefficient: tangent eigenvalue ``~ PINNING kappa (n c)^2`` (module
#: docstring)
PINNING = 0.011

NAMED_PROFILES = ("cosine", "von-mises", "flat-top", "asymmetric")

#: the flat-top's edge width, in lattice steps of phase
EDGE_STEPS = 2

_SPEC = re.compile(r"^(von-mises|flat-top|asymmetric):(.+)$")


def check_profile_spec(profile) -> str | tuple:
    """A profile as a config holds it: a checked name (``str``) or a nested tuple of floats.

    Raises ``BadInput`` (naming ``profile=``) for an unknown name, a parameter out of range,
    or an array that is not real and finite.

    Examples
    --------
    >>> check_profile_spec("von-mises:5")
    'von-mises:5'
    >>> check_profile_spec("flat-top:4")
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: profile='flat-top:4': the half-width W must be in (0, pi)
    """
    if isinstance(profile, (np.ndarray, torch.Tensor, list, tuple)):
        arr = np.asarray(profile.detach().cpu() if isinstance(profile, torch.Tensor)
                         else profile)
        if arr.dtype.kind not in "fiu" or not np.isfinite(arr).all() or arr.size == 0:
            raise BadInput("profile=<array>: must be a non-empty array of finite real rates",
                           param="profile")
        return tuple(map(tuple, arr.astype(float))) if arr.ndim == 2 else \
            tuple(float(v) for v in arr.reshape(-1)) if arr.ndim == 1 else _bad_rank(arr)
    if not isinstance(profile, str):
        raise BadInput(f"profile={profile!r}: a name, a .npy file or an array of rates",
                       param="profile")
    if profile == "cosine" or profile.endswith(".npy"):
        return profile
    m = _SPEC.match(profile)
    if m is None:
        raise BadInput(f"profile={profile!r}: choose cosine, von-mises:K, flat-top:W, "
                       "asymmetric:S or a FILE.npy of rates", param="profile")
    name, text = m.groups()
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"profile={profile!r}: {text!r} is not a number", param="profile") from None
    ok = {"von-mises": (0 < value < 1e3, "the concentration K must be in (0, 1000)"),
          "flat-top": (0 < value < math.pi, "the half-width W must be in (0, pi)"),
          "asymmetric": (0 < abs(value) < 1, "the skew S must satisfy 0 < |S| < 1")}[name]
    if not (math.isfinite(value) and ok[0]):
        raise BadInput(f"profile={profile!r}: {ok[1]}", param="profile")
    return profile


def _bad_rank(arr):
    raise BadInput(f"profile=<array of shape {arr.shape}>: a ring takes (N,), a torus "
                   "(n1, n2)", param="profile")


def profile_label(profile) -> str:
    """A short text naming the profile (an array is ``"array(SHAPE)"``)."""
    if isinstance(profile, str):
        return profile
    return f"array{tuple(np.asarray(profile).shape)}"


def profile_potentials(geometry: Geometry, activation: Activation, a: float, c: float,
                       profile) -> torch.Tensor:
    """The target potentials ``u*`` at ``psi = 0`` of a profile, shape ``geometry.shape``.

    Parameters
    ----------
    geometry : Geometry
        The population.
    activation : Activation
        The rate function (a user's rates are inverted through it).
    a, c : float
        Baseline and height of a named profile ``u* = a + c p``.
    profile : str or numpy.ndarray, shape (*geometry.shape)
        As accepted by :func:`check_profile_spec`.

    Raises
    ------
    BadInput
        Naming ``profile=``: a user's profile of another shape than the population's, with a
        value outside the activation's range, or constant; an unreadable file
        (a missing or unreadable ``.npy``).

    Examples
    --------
    >>> from neurodyn.activation import Logistic
    >>> u = profile_potentials(Ring(64), Logistic(), -2.0, 4.0, "von-mises:5")
    >>> round(float(u.max()), 6), round(float(u.min()), 6), int(u.argmax())
    (2.0, -6.0, 0)
    """
    profile = check_profile_spec(profile)
    if isinstance(profile, str) and not profile.endswith(".npy"):
        return a + c * _named(geometry, profile)
    if isinstance(profile, str):
        arr, label = _load_rates(profile), f"profile={profile!r}"
    else:
        arr, label = np.asarray(profile, dtype=float), "profile=<array>"
    if tuple(arr.shape) != geometry.shape:
        raise BadInput(f"{label}: shape {tuple(arr.shape)}, the population's is "
                       f"{geometry.shape}", param=label)
    if arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
        raise BadInput(f"{label}: the rates must be finite real numbers", param=label)
    r = torch.as_tensor(np.ascontiguousarray(arr), dtype=torch.float64)
    with torch.no_grad():
        u = activation.inverse(r)
    if not torch.isfinite(u).all():
        bad = int((~torch.isfinite(u)).sum())
        raise BadInput(f"{label}: {bad} rate(s) outside the activation's open range "
                       f"({float(activation(torch.tensor(-1e300))):g}, "
                       f"{float(activation(torch.tensor(1e300))):g})", param=label)
    if float(u.max() - u.min()) <= 1e-9 * max(1.0, float(u.abs().max())):
        raise BadInput(f"{label}: constant rates define no bump", param=label)
    return u


def _load_rates(path: str) -> np.ndarray:
    """One array from a ``.npy`` file (its declared size checked first, no pickles)."""
    from _runkit.files import load_npy

    return load_npy(path, "profile")


def _named(geometry: Geometry, profile: str) -> torch.Tensor:
    """``p`` of a named profile, peak 1 at 0, range ``[-1, 1]``."""
    from ..manifold import bump_profile

    if profile == "cosine":
        return bump_profile(geometry, "auto")
    name, value = profile.split(":")
    value = float(value)
    th = geometry.coords()
    t = [th[a] for a in range(geometry.dim)]
    if name == "asymmetric":
        t[0] = t[0] + value * (1 - torch.cos(t[0]))
    x, lo = _cosine_coordinate(geometry, t)
    if name == "von-mises":
        def f(y):
            return torch.exp(value * (torch.as_tensor(y, dtype=torch.float64) - 1))
    elif name == "flat-top":
        s = EDGE_STEPS * 2 * math.pi / min(geometry.shape) * math.sin(value)

        def f(y):
            return torch.sigmoid((torch.as_tensor(y, dtype=torch.float64) - math.cos(value)) / s)
    else:
        def f(y):
            return torch.as_tensor(y, dtype=torch.float64)
    return -1 + 2 * (f(x) - f(lo)) / (f(1.0) - f(lo))


def _cosine_coordinate(geometry: Geometry, t: list) -> tuple[torch.Tensor, float]:
    """``(x, x_lo)``: the lattice's cosine coordinate of phases ``t`` and its least value."""
    if isinstance(geometry, Ring):
        return torch.cos(t[0]), -1.0
    if not isinstance(geometry, Torus):
        raise BadInput(f"profile: no named profiles for {geometry!r}", param="profile")
    if geometry.lattice == "hex":
        return (torch.cos(t[0]) + torch.cos(t[1]) + torch.cos(t[0] - t[1]) - 1) / 2, -1.25
    return (torch.cos(t[0]) + torch.cos(t[1])) / 2, -1.0


def count_bumps(geometry: Geometry, rates: torch.Tensor) -> int:
    """The number of bumps: connected regions (8-neighbour on a torus) of the periodic lattice
    where the rates exceed half their range.

    Parameters
    ----------
    geometry : Geometry
        The population.
    rates : torch.Tensor, shape (*geometry.shape)

    Returns
    -------
    int

    Examples
    --------
    >>> th = Ring(64).coords()[0]
    >>> count_bumps(Ring(64), torch.cos(th - 3.1)), count_bumps(Ring(64), torch.cos(2 * th))
    (1, 2)
    """
    from scipy import ndimage

    r = rates.detach().cpu().numpy()
    mask = r > (r.max() + r.min()) / 2
    labels, count = ndimage.label(mask, structure=np.ones((3,) * r.ndim))
    parent = list(range(count + 1))

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for axis in range(r.ndim):  # join the regions that meet across each periodic edge
        first, last = np.take(labels, 0, axis), np.take(labels, -1, axis)
        for shift in ((-1, 0, 1) if r.ndim == 2 else (0,)):
            for a, b in zip(first.ravel(), np.roll(last, shift).ravel(), strict=True):
                if a and b:
                    parent[root(a)] = root(b)
    return len({root(a) for a in range(1, count + 1)})


def band_edge_content(geometry: Geometry, u: torch.Tensor) -> float:
    r"""The target potentials' content at the top of the lattice's band.

    .. math:: \max_{k \in \text{edge}} |\hat u_k| \, / \max_{k \ne 0} |\hat u_k|,
              \qquad \text{edge} = \{k : \max_a |k_a| / (n_a / 2) \ge 3/4\}

    (:data:`EDGE_FRACTION`), with ``\hat u`` the population Fourier coefficients.

    Parameters
    ----------
    geometry : Geometry
        The population.
    u : torch.Tensor, shape (*geometry.shape)
        The target potentials.

    Returns
    -------
    float

    Examples
    --------
    >>> from neurodyn.activation import Logistic
    >>> ring = Ring(128)
    >>> wide = profile_potentials(ring, Logistic(), -2.0, 4.0, "von-mises:5")
    >>> narrow = profile_potentials(ring, Logistic(), -2.0, 4.0, "von-mises:400")
    >>> band_edge_content(ring, wide) < 1e-12, band_edge_content(ring, narrow) > 1e-2
    (True, True)
    """
    z = geometry.dft(u.detach().cpu().to(torch.float64)).abs()
    k = geometry.wavevectors().abs()
    rel = torch.stack([k[a] / (geometry.shape[a] / 2) for a in range(geometry.dim)]).amax(0)
    top = float(z[rel > 0].max())
    return float(z[rel >= EDGE_FRACTION].max()) / top if top > 0 else 0.0


def max_edge_content(geometry: Geometry, kappa: float) -> float:
    """The largest band-edge content a fit at rate ``kappa`` accepts: where the predicted
    pinning ``PINNING kappa (n c)^2`` reaches the neutral tolerance of the fit's check.

    Examples
    --------
    >>> round(max_edge_content(Ring(128), 1.0), 5), round(max_edge_content(Ring(128), 3.0), 5)
    (0.00236, 0.00136)
    """
    from ..analysis.attraction import NEUTRAL_TOL

    return math.sqrt(NEUTRAL_TOL / (PINNING * kappa)) / max(geometry.shape)


def check_fittable(geometry: Geometry, u: torch.Tensor, rates: torch.Tensor, kappa: float,
                   label: str) -> None:
    """Refuse a target bump a fit cannot reach (see the module docstring).

    Raises
    ------
    BadInput
        Naming ``profile=`` (``label``), the reason and the measured number.
    """
    bumps = count_bumps(geometry, rates)
    if bumps != 1:
        raise BadInput(f"{label}: {bumps} bumps (regions where the rates exceed half their "
                       "range); a ring or torus attractor holds one bump", param="profile")
    edge, top = band_edge_content(geometry, u), max_edge_content(geometry, kappa)
    if edge > top:
        pinned = PINNING * kappa * (max(geometry.shape) * edge) ** 2
        raise BadInput(
            f"{label}: band-edge content {edge:.3g} (the target potentials' largest Fourier "
            f"amplitude in the top quarter of the lattice's band, relative to the largest) "
            f"pins the bump to the lattice: predicted tangent eigenvalue {pinned:.2g} / tau, "
            f"above the neutral tolerance; at {max(geometry.shape)} neurons a side and "
            f"kappa={kappa:g} a fit accepts up to {top:.3g}; widen the bump or use more "
            "neurons", param="profile")
