r"""Connectivity of a network as it is: the state-dependent effective connectivity, and the best
fixed translation-invariant network that reproduces its dynamics.

The effective connectivity ``W_eff = -d^2 F / dr^2`` at a manifold point is a property of the
state: for the exact SEAL solution ``H_F = (kappa - 1) D^{-1} - kappa e e^T / (e^T D e)``, a
diagonal plus a rank-one matrix built from the tangent ``e`` (at ``kappa = 1`` it is rank one),
and its diagonal average is the tangent's autocorrelation, so a "local excitation, surround
inhibition" profile read from it is an identity, not evidence. :func:`effective_connectivity`
reports ``W_eff`` as what it is (rank, singular spectrum, the share of its diagonal and its
distance from any circulant matrix).

The claim about a fixed connectivity is made on :func:`fit_circulant`: the symmetric circulant
``W`` (one weight per offset) and constant ``c`` that best reproduce the recurrent input,

.. math:: \min_{W, c} \sum_s \| W r_s + c - (-\nabla F(r_s) + b) \|^2,
          \qquad r_s = \phi(u_s),

over states ``u_s`` on and near the manifold (least squares, mode by mode in Fourier space,
pooled over the sheet's rotations and reflections), so that ``tau du/dt = -u + W r + c`` is the
best fixed network of that kind; its profile is the connectivity figure and its errors on
held-out states say how well a fixed ``W`` reproduces the learned dynamics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, Result, artifact
from _runkit.seeds import check_seed, derive_seed

from ..dynamics.device import on_device
from ..dynamics.perturbations import perturb
from ..geometry.base import Geometry
from ..network import HopfieldNetwork
from .diagnostics import ConnectivityProfile, _manifold, kernel_profile

__all__ = ["EffectiveConnectivity", "effective_connectivity", "CirculantFit", "fit_circulant",
           "shell_spread", "diagonal_average"]


def diagonal_average(matrix: torch.Tensor, geometry: Geometry) -> torch.Tensor:
    """The circulant part of a matrix: ``w(delta) = (1/N) sum_i W[i, i + delta]``.

    The circulant matrix with this kernel is the nearest circulant to ``W`` in the Frobenius
    norm (the circulants' basis matrices are orthogonal).

    Parameters
    ----------
    matrix : torch.Tensor, shape (N, N)
        ``W`` with rows and columns in the geometry's neuron order.
    geometry : Geometry
        The population's geometry.

    Returns
    -------
    torch.Tensor, shape (*geometry.shape)
        The kernel by offset ``delta``.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> w = torch.roll(torch.eye(8, dtype=torch.float64), 1, 1)  # W[i, i + 1] = 1
    >>> diagonal_average(w, Ring(8)).tolist()
    [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    g = geometry
    w = matrix.reshape((g.size,) + g.shape)
    idx = torch.stack(torch.meshgrid(*[torch.arange(n) for n in g.shape], indexing="ij"))
    idx = idx.reshape(g.dim, -1)
    kernel = torch.zeros(g.shape, dtype=matrix.dtype)
    for i in range(g.size):
        shifts = tuple(-int(idx[a, i]) for a in range(g.dim))
        kernel += torch.roll(w[i], shifts=shifts, dims=tuple(range(g.dim)))
    return kernel / g.size


def shell_spread(kernel: torch.Tensor, geometry: Geometry) -> float:
    """Largest disagreement of a kernel between offsets that the sheet's symmetries relate.

    .. math:: \\max_{M, \\delta} |w(M \\delta) - w(\\delta)| / (\\max w - \\min w)

    over the point symmetries ``M`` of the geometry (``delta -> -delta`` on a ring,
    :meth:`~neurodyn.geometry.populations.Torus.point_symmetries` on a torus): a kernel that
    depends on the sheet's geometry alone gives 0 to rounding. (Offsets at one distance but in
    different orbits, such as ``(7, 0)`` and ``(8, 3)`` on a hex sheet, need not agree.)

    Parameters
    ----------
    kernel : torch.Tensor, shape (*geometry.shape)
        ``w(delta)`` by offset.
    geometry : Geometry
        The ring or torus.

    Returns
    -------
    float

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> shell_spread(torch.tensor([2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]), Ring(8))
    0.0
    """
    k = kernel.to(torch.float64)
    span = float(k.max() - k.min())
    if span == 0.0:
        return 0.0
    if geometry.dim == 1:
        return float((torch.roll(k.flip(0), 1, 0) - k).abs().max()) / span
    n1, n2 = geometry.shape
    i, j = torch.meshgrid(torch.arange(n1), torch.arange(n2), indexing="ij")
    worst = 0.0
    for (a, b), (c, d) in geometry.point_symmetries():
        moved = k[(a * i + b * j) % n1, (c * i + d * j) % n2]
        worst = max(worst, float((moved - k).abs().max()))
    return worst / span


@dataclass(frozen=True)
class EffectiveConnectivity(Result):
    """``W_eff = -d^2 F / dr^2`` at one manifold point, reported as what it is.

    Attributes
    ----------
    rank : int
        Singular values above ``rtol`` times the largest.
    singular_values : list of float
        The largest ``top`` singular values, descending.
    top_share : float
        ``s_1^2 / sum s^2``: the share of the squared Frobenius norm in one direction.
    diagonal_share : float
        ``||diag W_eff||^2 / ||W_eff||^2``.
    circulant_error : float
        ``||W_eff - C||_F / ||W_eff||_F`` for the nearest circulant ``C``
        (:func:`diagonal_average`): how far the matrix is from a fixed translation-invariant
        connectivity (0 for a circulant network, large for a state-dependent one).
    rtol : float
        The rank's relative threshold.
    matrix : torch.Tensor, shape (N, N)
        ``W_eff`` itself (not in ``to_dict``).
    """

    rank: int
    singular_values: list
    top_share: float
    diagonal_share: float
    circulant_error: float
    rtol: float
    matrix: torch.Tensor = artifact()


def effective_connectivity(network: HopfieldNetwork, psi=None, rtol: float = 1e-3,
                           top: int = 8) -> EffectiveConnectivity:
    """Rank and singular spectrum of ``W_eff = -Hess F`` at ``r*(psi)`` (default ``psi = 0``).

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    psi : torch.Tensor or None, shape (dim,)
        The manifold point.
    rtol : float
        Singular values ``> rtol * s_max`` count towards the rank.
    top : int
        How many singular values to report.

    Returns
    -------
    EffectiveConnectivity

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> eff = effective_connectivity(fit(FitConfig(n=32, steps=5)).network)
    >>> eff.rank <= 32 and len(eff.singular_values) == 8
    True
    """
    m = _manifold(network)
    g = network.geometry
    psi = torch.zeros(g.dim, dtype=torch.float64) if psi is None else torch.as_tensor(psi)
    with torch.no_grad():
        w = -network.interaction_hessian(m.u_star(psi.reshape(g.dim).to(torch.float64)))
    s = torch.linalg.svdvals(w)
    total = float(s.pow(2).sum())
    if not total:
        raise BadInput("network: its effective connectivity at the manifold is zero",
                       param="network")
    # the nearest circulant C is an orthogonal projection: ||W - C||^2 = ||W||^2 - N sum w^2
    circ = g.size * float(diagonal_average(w, g).pow(2).sum())
    return EffectiveConnectivity(
        int((s > rtol * s[0]).sum()), [float(x) for x in s[:top]], float(s[0] ** 2) / total,
        float(torch.diagonal(w).pow(2).sum()) / total, math.sqrt(max(total - circ, 0.0) / total),
        rtol, w)


@dataclass(frozen=True)
class CirculantFit(Result):
    """The best fixed circulant network ``tau du/dt = -u + W r + c`` (:func:`fit_circulant`).

    Attributes
    ----------
    w0 : float
        ``w(0)``, the self weight.
    min_far : float
        Most negative weight beyond a distance of ``pi / 3`` (surround inhibition when < 0).
    zero_crossings : list of float
        Distances (radians of phase) where the distance profile changes sign.
    offset : float
        The constant ``c``.
    relative_error : float
        ``||W r + c - y|| / ||y - mean(y)||`` on held-out states, ``y = -grad F(r) + b`` the
        learned recurrent input: the share of its variation a fixed ``W`` misses.
    field_error : float
        ``||du/dt_W - du/dt|| / ||du/dt||`` on the held-out perturbed states: the error of the
        fixed network's restoring field.
    count : int
        Fitted states (the held-out set has as many).
    strength : float
        Largest relative perturbation of the states.
    profile : ConnectivityProfile
        ``W``'s kernel and its profile by distance (not in ``to_dict``).
    """

    w0: float
    min_far: float
    zero_crossings: list
    offset: float
    relative_error: float
    field_error: float
    count: int
    strength: float
    profile: ConnectivityProfile = artifact()


def fit_circulant(network: HopfieldNetwork, count: int = 64, strength: float = 0.3,
                  seed: int = 0, reg: float = 1e-10) -> CirculantFit:
    """Least-squares symmetric circulant ``W`` and constant ``c`` with ``W r + c ~ -grad F + b``.

    States: ``count`` manifold points ``u*(psi)`` at uniform ``psi``, moved by ``noise``,
    ``shape`` and ``amplitude`` perturbations (in turn) of relative size uniform in
    ``[0, strength]``; another ``count`` states from an independent stream are held out for
    the errors. A circulant acts mode by mode, ``(W r)^_k = lambda_k r^_k`` with real
    ``lambda_k`` for a symmetric ``W``, so

    .. math:: \\lambda_k = \\frac{\\sum_s \\mathrm{Re}(\\bar{\\hat r}_{s,k} \\hat y_{s,k})}
                          {\\sum_s |\\hat r_{s,k}|^2 + \\epsilon},

    with numerator and denominator summed over the orbit of ``k`` under the sheet's point
    symmetries (so ``W`` has the sheet's symmetry), ``epsilon = reg`` times the largest
    denominator, and the mean mode fitted jointly with ``c``.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold.
    count : int
        States fitted (and held out).
    strength : float
        Largest relative perturbation (``>= 0``; 0 fits the manifold alone).
    seed : int
        Seeds the states.
    reg : float
        Relative ridge of the mode-wise division.

    Returns
    -------
    CirculantFit

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> cf = fit_circulant(fit(FitConfig(n=32, steps=5)).network, count=16)
    >>> cf.profile.kernel.shape, cf.relative_error < 1
    (torch.Size([32]), True)
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(f"count={count!r}: must be an integer >= 1", param="count")
    if not (math.isfinite(strength) and strength >= 0):
        raise BadInput(f"strength={strength!r}: must be finite and >= 0", param="strength")
    seed = check_seed("seed", seed)
    network = _on_cpu(network)
    g = network.geometry
    u, y = _samples(network, count, strength, derive_seed(seed, "circulant-fit"))
    lam, c = _mode_fit(g, network.rates(u), y, reg)
    kernel = torch.fft.ifftn(lam, dim=g.axes).real
    ut, yt = _samples(network, count, strength, derive_seed(seed, "circulant-test"))
    pred = _apply(g, lam, network.rates(ut)) + c
    rel = float((pred - yt).norm() / (yt - yt.mean()).norm())
    with torch.no_grad():
        field = network.field(ut) * network.tau
    # on the manifold the field vanishes: its relative error needs perturbed states
    field_err = float((pred - yt).norm() / field.norm()) if strength > 0 else float("nan")
    prof = kernel_profile(kernel, g)
    return CirculantFit(prof.at_zero, prof.min_beyond(math.pi / 3), prof.zero_crossings(), c,
                        rel, field_err, count, float(strength), prof)


def _on_cpu(network: HopfieldNetwork) -> HopfieldNetwork:
    """``network`` itself on the CPU, else a copy there (with its manifold)."""
    cpu = torch.device("cpu")
    if network.bias.device == cpu:
        return network
    net = on_device(network, cpu)
    if net.manifold is not None:
        net.manifold = net.manifold.to(cpu)
    return net


def _samples(network: HopfieldNetwork, count: int, strength: float, seed: int):
    """States on and near the manifold and their recurrent input ``-grad F + b``."""
    m = _manifold(network)
    g = network.geometry
    gen = torch.Generator().manual_seed(seed)
    psi = g.random_phase(count, gen)
    size = strength * torch.rand(count, generator=gen, dtype=torch.float64)
    u = torch.empty((count,) + g.shape, dtype=torch.float64)
    for j, kind in enumerate(("noise", "shape", "amplitude")):
        if j < count:
            u[j::3] = perturb(m, psi[j::3], kind, size[j::3], gen)
    with torch.no_grad():
        y = network.field(u) * network.tau + u
    return u, y


def _pooled(g: Geometry, x: torch.Tensor) -> torch.Tensor:
    """``x`` (full spectrum, ``g.shape``) summed over the orbits of the point symmetries."""
    if g.dim == 1:
        return x + torch.roll(x.flip(0), 1, 0)
    n1, n2 = g.shape
    i, j = torch.meshgrid(torch.arange(n1), torch.arange(n2), indexing="ij")
    # a symmetry M of offsets acts on wave vectors by M^T
    return sum(x[(a * i + c * j) % n1, (b * i + d * j) % n2]
               for (a, b), (c, d) in g.point_symmetries())


def _mode_fit(g: Geometry, r: torch.Tensor, y: torch.Tensor, reg: float):
    """Per-mode ``lambda`` (full spectrum) and the constant ``c`` of the least squares."""
    rh = torch.fft.fftn(r, dim=g.axes)
    yh = torch.fft.fftn(y, dim=g.axes)
    num = _pooled(g, (rh.conj() * yh).real.sum(0))
    den = _pooled(g, (rh.abs() ** 2).sum(0))
    lam = num / (den + reg * den.max())
    # the mean mode with the constant: y0 = lambda_0 r0 + N c, r0 and y0 real, per state
    zero = (0,) * g.dim
    r0, y0 = rh[(slice(None),) + zero].real, yh[(slice(None),) + zero].real
    lam0, c = _line_fit(r0.tolist(), y0.tolist(), float(g.size))
    lam[zero] = lam0
    return lam, c


def _line_fit(x: list, y: list, n: float) -> tuple[float, float]:
    """Least squares ``y_i ~ a x_i + n c`` in closed form with exactly rounded sums (the
    same bits on every run, unlike a LAPACK solve whose blocking follows memory alignment);
    the minimum-norm solution when every ``x_i`` is equal.

    >>> _line_fit([1.0, 2.0, 3.0], [5.0, 7.0, 9.0], 4.0)     # y = 2 x + 4 * 0.75
    (2.0, 0.75)
    """
    m = len(x)
    xm, ym = math.fsum(x) / m, math.fsum(y) / m
    sxx = math.fsum((v - xm) ** 2 for v in x)
    if sxx <= 1e-300:  # rows (x, n) all equal: the minimum-norm solution
        scale = ym / (xm * xm + n * n)
        return xm * scale, n * scale
    a = math.fsum((u - xm) * (v - ym) for u, v in zip(x, y, strict=True)) / sxx
    return a, (ym - a * xm) / n


def _apply(g: Geometry, lam: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``W r`` for the circulant with eigenvalues ``lam``: ``(..., *shape)``."""
    return torch.fft.ifftn(lam * torch.fft.fftn(r, dim=g.axes), dim=g.axes).real
