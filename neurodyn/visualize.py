"""Pictures of attractor manifolds: embeddings, topology, energy landscape, paths, animations.

Population activity of a ring attractor lies on a closed curve in rate space, that of a torus
attractor on a two-dimensional torus. This module samples such activity from a network
(:func:`manifold_activity`), embeds it (PCA in 3-D, Isomap in 2-D), measures its topology
(persistent homology: Betti numbers ``(1, 1, 0)`` for a ring, ``(1, 2, 1)`` for a torus), shows the
Hopfield energy along the manifold and across it (:func:`energy_landscape`: flat along the
tangent, a valley along the normal directions), and the bump's path on the manifold during path
integration. :func:`manifold_report` runs all of these and writes the figures; the command
``neurodyn manifold`` is a thin layer over it.

Animations (:func:`animate_ring_bump`, :func:`animate_sheet_bump`, :func:`animate_flow`) write
GIFs with matplotlib's :class:`~matplotlib.animation.PillowWriter`, on figures built without
pyplot.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from .embedding import Embedding, isomap, pca, plot_embedding_2d, plot_embedding_3d, subsample
from .geometry import Torus, sheet_corners
from .inputs import Velocity, parse_velocity
from .network import HopfieldNetwork
from .simulate import SimulationResult, simulate

__all__ = [
    "ManifoldActivity",
    "EnergyLandscape",
    "manifold_activity",
    "energy_landscape",
    "path_on_manifold",
    "manifold_report",
    "plot_activity_pca",
    "plot_activity_isomap",
    "plot_energy_landscape",
    "plot_manifold_path",
    "animate_ring_bump",
    "animate_sheet_bump",
    "animate_flow",
]

#: Fewest activity samples :func:`manifold_report` accepts (Isomap needs a connected graph).
MIN_REPORT_SAMPLES = 20
_PHASE = "decoded phase"
_POLAR_TICKS = ["0", "π/2", "π", "3π/2"]


# --------------------------------------------------------------------------------------------------
# helpers


def _np(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _check_int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}={value!r}: must be an int >= {low}")
    if value < low:
        raise ValueError(f"{name}={value}: must be an int >= {low}")
    return int(value)


def _check_positive(value: Any, name: str, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    ok = ok and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name}={value!r}: must be a finite number {bound}")
    return float(value)


def _manifold(network: HopfieldNetwork):
    if not isinstance(network, HopfieldNetwork):
        raise TypeError(f"network: expected a HopfieldNetwork, got {type(network).__name__}")
    if network.manifold is None:
        raise ValueError("network: has no target manifold; build it with one (fit does)")
    return network.manifold


def _seeds(seed: int, count: int) -> list[int]:
    """Independent integer seeds derived from one seed (no shared random streams)."""
    children = np.random.SeedSequence(seed).spawn(count)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def _phase_labels(dim: int) -> list[str]:
    return ["ψ (rad)"] if dim == 1 else [f"ψ{a + 1} (rad)" for a in range(dim)]


# --------------------------------------------------------------------------------------------------
# activity on the manifold


@dataclass(frozen=True)
class ManifoldActivity:
    """Samples of simulated population activity near the attractor manifold.

    Attributes
    ----------
    rates : ndarray ``(samples, N)``, rates ``r = phi(u)`` with the neuron axes flattened.
    decoded : ndarray ``(samples, dim)``, population-vector phases in ``[0, 2 pi)``.
    distance : ndarray ``(samples,)``, relative distance ``min_psi ||u - u*(psi)|| / ||u*||``.
    runs : number of simulated runs the samples come from.
    seconds : wall time of the simulation (s).
    """

    rates: np.ndarray
    decoded: np.ndarray
    distance: np.ndarray
    runs: int
    seconds: float

    @property
    def samples(self) -> int:
        """Number of samples."""
        return int(self.rates.shape[0])


def manifold_activity(network: HopfieldNetwork, samples: int = 2000, runs: int | None = None,
                      duration: float = 40.0, relax: float = 10.0, dt: float = 0.1,
                      velocity: Velocity | str | None = "ou:0.3:5:1", noise: float = 0.02,
                      settle: float = 5.0, seed: int = 0) -> ManifoldActivity:
    """Simulated population activity that covers the attractor manifold.

    1. Movement: ``runs`` states start at uniformly random manifold points ``u*(psi_b)`` and
       are driven along the manifold by an Ornstein-Uhlenbeck velocity (one component per
       manifold axis, independent per run), integrated with RK4,

       .. math:: \\tau \\dot u = -u - \\nabla F(r) + b + \\textstyle\\sum_a v_a(t)\\, T_a(r) .

       After ``relax`` time units each run is sampled at evenly spaced times up to
       ``duration``; the samples of all runs are pooled (run-major) and cut to ``samples``.
    2. Noise (when ``noise > 0``): every sample then evolves for ``settle`` time units without
       input under additive noise (Euler-Maruyama),
       ``tau du = (-u - grad F(r) + b) dt + tau sigma dW``, which spreads it around the manifold.

    The two phases are separate because the transport term is an advection: explicit Euler, which
    noise requires, amplifies its high modes, while RK4 (no noise) is stable for it.

    Parameters
    ----------
    network : a network with a target manifold (and a transport when ``velocity`` is given).
    samples : number of activity vectors returned (>= 1).
    runs : number of runs (default ``max(1, samples // 10)``, ten samples per run).
    duration : simulated time per run (units of tau), > ``relax``.
    relax : time before the first sample (units of tau), >= 0.
    dt : integration step (units of tau).
    velocity : a :class:`~neurodyn.inputs.Velocity` or spec string (``"ou:SIGMA:T[:VMAX]"``,
        radians per tau); ``None`` for none.
    noise : ``sigma``, noise on ``u`` per square root of time (>= 0).
    settle : duration of the noisy phase (units of tau; > 0 when ``noise > 0``).
    seed : seeds the starting phases, the velocity and the noise.

    Returns
    -------
    ManifoldActivity
        ``rates (samples, N)``, ``decoded (samples, dim)``, ``distance (samples,)``.

    Examples
    --------
    >>> from neurodyn.fit import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=0)).network
    >>> act = manifold_activity(net, samples=40, duration=4.0, relax=2.0, settle=1.0, seed=0)
    >>> act.rates.shape, act.decoded.shape
    ((40, 32), (40, 1))
    """
    m = _manifold(network)
    samples = _check_int(samples, "samples", 1)
    runs = max(1, samples // 10) if runs is None else _check_int(runs, "runs", 1)
    duration = _check_positive(duration, "duration")
    relax = _check_positive(relax, "relax", allow_zero=True)
    dt = _check_positive(dt, "dt")
    noise = _check_positive(noise, "noise", allow_zero=True)
    settle = _check_positive(settle, "settle", allow_zero=noise == 0)
    if relax >= duration:
        raise ValueError(f"relax={relax}: must be < duration={duration}")
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    if velocity is not None and network.transport is None:
        raise ValueError("velocity: the network has no transport; pass velocity=None")
    per_run = math.ceil(samples / runs)
    relax_steps = int(math.ceil(relax / dt - 1e-9))
    save_every = max(1, int(math.floor((duration / dt - relax_steps) / per_run + 1e-9)))
    first = int(math.ceil(relax_steps / save_every))  # first saved index after the relaxation
    total = max(1, first + per_run - 1) * save_every
    if first + per_run - 1 == 0:  # relax = 0 and one sample per run: the start is the sample
        first = 0
    s_phase, s_move, s_noise = _seeds(seed, 3)
    g = network.geometry
    psi = g.random_phase(runs, torch.Generator().manual_seed(s_phase))
    start = time.perf_counter()
    tr = simulate(network, m.u_star(psi), total * dt, dt, method="rk4", velocity=velocity,
                  save_every=save_every, seed=s_move, progress_bar=False, diagnostics=False)
    u = tr.u[first:first + per_run].transpose(0, 1).reshape((-1,) + g.shape)[:samples]
    if noise > 0:
        steps = max(1, int(round(settle / dt)))
        tr = simulate(network, u, steps * dt, dt, method="euler", noise=noise,
                      save_every=steps, seed=s_noise, progress_bar=False, diagnostics=False)
        u = tr.u[-1]
    seconds = time.perf_counter() - start
    with torch.no_grad():
        r = network.rates(u)
        dec = g.decode(r)
        dist = torch.cat([m.distance(chunk).distance for chunk in torch.split(u, 256)])
    return ManifoldActivity(_np(r.reshape(-1, g.size)), _np(dec), _np(dist), runs, seconds)


# --------------------------------------------------------------------------------------------------
# energy landscape


@dataclass(frozen=True)
class EnergyLandscape:
    """Hopfield energy along the manifold and across it, relative to ``E(u*(0))``.

    Attributes
    ----------
    psi : ndarray ``(P,)``, manifold coordinate along each tangent line (rad).
    tangent_names : names of the tangent lines (``"psi"``; or ``"psi1"``, ``"psi2"``,
        ``"psi1 = psi2"`` on a torus).
    tangent : ndarray ``(L, P)``, ``E(u*(psi e_l)) - E(u*(0))`` along line ``l`` with unit
        direction ``e_l`` in phase coordinates.
    s : ndarray ``(S,)``, signed relative distance along the normal directions (contains 0).
    normal_names : names of the normal directions.
    normal : ndarray ``(D, S)``, ``E(u*(0) + s ||u*|| n_d) - E(u*(0))`` for unit normals
        ``n_d`` orthogonal to the tangent space at ``psi = 0``.
    """

    psi: np.ndarray
    tangent_names: tuple[str, ...]
    tangent: np.ndarray
    s: np.ndarray
    normal_names: tuple[str, ...]
    normal: np.ndarray

    @property
    def tangent_range(self) -> float:
        """``max - min`` of the energy over all tangent lines."""
        return float(self.tangent.max() - self.tangent.min())

    def valleys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The valley around ``s = 0`` along each normal direction.

        Walking outwards from ``s = 0`` on each side while the energy keeps increasing gives the
        valley's edges (the first local maximum on that side, or the end of the grid).

        Returns
        -------
        local_min : bool ``(D,)``, ``E(s_{-1}) > E(0) < E(s_1)`` (the grid neighbours of 0).
        halfwidth : ``(D,)``, ``min(|s|)`` of the two edges.
        depth : ``(D,)``, the lower of the two edge energies (relative to ``E(0)``).
        """
        c = len(self.s) // 2
        local, width, depth = [], [], []
        for e in self.normal:
            right = c
            while right + 1 < len(e) and e[right + 1] > e[right]:
                right += 1
            left = c
            while left > 0 and e[left - 1] > e[left]:
                left -= 1
            local.append(bool(e[c + 1] > e[c] and e[c - 1] > e[c]))
            width.append(min(abs(self.s[right]), abs(self.s[left])))
            depth.append(min(e[right], e[left]))
        return np.array(local), np.array(width), np.array(depth)

    @property
    def normal_depth(self) -> float:
        """Depth of the shallowest valley over the normal directions (see :meth:`valleys`)."""
        return float(self.valleys()[2].min())

    @property
    def tangent_relative(self) -> float:
        """Tangent variation relative to the normal depth, ``tangent_range / |normal_depth|``."""
        depth = abs(self.normal_depth)
        return self.tangent_range / depth if depth > 0 else math.inf

    def argmin_s(self) -> np.ndarray:
        """Position ``s`` of the lowest energy on the grid along each normal direction, ``(D,)``."""
        return self.s[np.argmin(self.normal, axis=1)]

    def metrics(self) -> dict:
        """JSON-ready numbers: flatness, valley depth and width, where the minima are.

        ``normal_local_min``: ``s = 0`` is a local minimum along every normal direction;
        ``normal_min_at_zero``: it is also the lowest point of the whole grid ``|s| <= s_max``.
        """
        local, width, depth = self.valleys()
        return {"tangent_range": self.tangent_range, "normal_depth": self.normal_depth,
                "tangent_relative": self.tangent_relative,
                "normal_local_min": bool(local.all()),
                "normal_min_at_zero": bool(np.all(self.argmin_s() == 0.0)),
                "normal_argmin_s": [float(x) for x in self.argmin_s()],
                "valley_halfwidth": [float(x) for x in width],
                "valley_depth": [float(x) for x in depth],
                "s_max": float(self.s.max()), "normal_directions": list(self.normal_names)}


def energy_landscape(network: HopfieldNetwork, points: int = 128, s_max: float = 0.3,
                     steps: int = 41, directions: int = 3, seed: int = 0) -> EnergyLandscape:
    """Energy along the manifold's tangent lines and along normal directions at ``u*(0)``.

    Tangent: ``E(u*(psi))`` for ``psi`` on an even grid of ``[0, 2 pi)`` along each phase axis
    (and the diagonal of a torus). A continuous attractor makes it flat: exactly for shifts by
    whole neurons, and up to the aliasing of ``phi(u*)``'s harmonics beyond the grid's Nyquist
    mode for shifts in between (relative to the normal depth: ~1e-14 on a 64-neuron ring or a
    32 x 32 sheet, ~1e-6 on a 16 x 16 sheet).

    Normal: ``E(u*(0) + s ||u*|| n)`` for ``s`` in ``[-s_max, s_max]`` and unit directions ``n``
    orthogonal to the tangent space ``span{d u*/d psi_a}`` at ``psi = 0``: the bump's amplitude
    ``u* - mean(u*)``, a uniform offset, and ``directions`` random smooth directions (low Fourier
    modes with random coefficients, seeded). At a stable fixed point the energy has a valley
    there with its minimum at ``s = 0``: with ``D = diag phi'(u*)`` the Hessian of ``E(phi(u))``
    is ``D (H_F + D^{-1}) D``, which is positive on the normal space exactly when the Jacobian
    ``-(I + H_F D)/tau`` is stable there.

    Parameters
    ----------
    network : a network with a target manifold.
    points : grid points along each tangent line (>= 2).
    s_max : largest relative distance along the normals (> 0).
    steps : grid points in ``s``; made odd so that ``s = 0`` is on the grid (>= 3).
    directions : number of random smooth normal directions (>= 0).
    seed : seeds the random directions.

    Returns
    -------
    EnergyLandscape

    Examples
    --------
    >>> from neurodyn.fit import FitConfig, fit
    >>> land = energy_landscape(fit(FitConfig(n=32, steps=0)).network, points=16, directions=1)
    >>> land.tangent.shape, land.normal.shape, bool(land.tangent_relative < 1e-6)
    ((1, 16), (3, 41), True)
    """
    m = _manifold(network)
    points = _check_int(points, "points", 2)
    steps = _check_int(steps, "steps", 3)
    directions = _check_int(directions, "directions", 0)
    s_max = _check_positive(s_max, "s_max")
    steps += 1 - steps % 2
    g = network.geometry
    psi = torch.arange(points, dtype=torch.float64) * (2 * math.pi / points)
    if g.dim == 1:
        lines, names = [torch.tensor([1.0])], ("ψ",)
    else:
        lines = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0])]
        names = ("ψ1", "ψ2", "ψ1 = ψ2")
    zero = torch.zeros(g.dim, dtype=torch.float64)
    with torch.no_grad():
        e0 = network.energy(m.u_star(zero))
        tangent = torch.stack([network.energy(m.u_star(psi[:, None] * e[None, :])) - e0
                               for e in lines])
        normals, nnames = _normal_directions(m, directions, seed)
        s = torch.linspace(-s_max, s_max, steps, dtype=torch.float64)
        s[steps // 2] = 0.0
        u0 = m.u_star(zero)
        states = u0 + s.reshape((1, steps) + (1,) * g.dim) * m.norm * normals[:, None]
        normal = network.energy(states) - e0
    return EnergyLandscape(_np(psi), names, _np(tangent), _np(s), nnames, _np(normal))


def _normal_directions(m, count: int, seed: int) -> tuple[torch.Tensor, tuple[str, ...]]:
    """Unit directions ``(D, *shape)`` orthogonal to the tangent space at ``psi = 0``."""
    g = m.geometry
    zero = torch.zeros(g.dim, dtype=torch.float64)
    u0 = m.u_star(zero)
    tang = m.tangents(zero).reshape(g.size, g.dim)
    q, _ = torch.linalg.qr(tang)
    cands = [u0 - u0.mean(), torch.ones(g.shape, dtype=torch.float64)]
    names = ["amplitude", "offset"]
    gen = torch.Generator().manual_seed(seed)
    k = g.wavevectors()
    low = (k.abs().amax(0) <= 3) & (k.abs().sum(0) > 0)  # smooth: fundamental to third modes
    for i in range(count):
        z = torch.complex(torch.randn(g.spectral_shape, generator=gen, dtype=torch.float64),
                          torch.randn(g.spectral_shape, generator=gen, dtype=torch.float64))
        cands.append(g.idft(z * low))
        names.append(f"random {i + 1}")
    out = []
    for c in cands:
        v = c.reshape(-1)
        v = v - q @ (q.T @ v)
        out.append((v / v.norm()).reshape(g.shape))
    return torch.stack(out), tuple(names)


# --------------------------------------------------------------------------------------------------
# path integration on the manifold


def path_on_manifold(network: HopfieldNetwork, runs: int = 4, duration: float = 200.0,
                     dt: float = 0.1, velocity: Velocity | str = "ou:0.2:10:0.5",
                     seed: int = 0, save_every: int | None = None) -> SimulationResult:
    """Path integration from random manifold points: the bump's decoded path and its reference.

    .. math:: \\psi_{ref}(t) = \\psi(0) + \\int_0^t v(s)\\, ds

    Parameters
    ----------
    network : a network with a target manifold and a transport.
    runs : number of runs (>= 1).
    duration : simulated time (units of tau).
    dt : step (units of tau).
    velocity : a velocity or spec string (default: the ``path-integrate`` command's).
    seed : seeds the starting phases and the velocity.
    save_every : steps between saved states (default: one per time unit).

    Returns
    -------
    SimulationResult
        With ``decoded (T, runs, dim)`` and ``reference (T, runs, dim)``.
    """
    m = _manifold(network)
    runs = _check_int(runs, "runs", 1)
    if network.transport is None:
        raise ValueError("network: path integration needs a transport (fit makes one)")
    if isinstance(velocity, str):
        velocity = parse_velocity(velocity)
    s_phase, s_sim = _seeds(seed, 2)
    psi = network.geometry.random_phase(runs, torch.Generator().manual_seed(s_phase))
    every = max(1, int(round(1.0 / dt))) if save_every is None else save_every
    return simulate(network, m.u_star(psi), duration, dt, velocity=velocity, seed=s_sim,
                    save_every=every, progress_bar=False, diagnostics=False)


# --------------------------------------------------------------------------------------------------
# figures


def plot_activity_pca(activity: ManifoldActivity, emb: Embedding | None = None,
                      path: np.ndarray | None = None, fig: Figure | None = None) -> Figure:
    """PCA (3-D) of activity, coloured by each decoded phase (cyclic ``twilight``).

    One 3-D panel per manifold coordinate. ``coords = (R - mean) V_3^T`` (see
    :func:`~neurodyn.embedding.pca`).

    Parameters
    ----------
    activity : samples with ``rates (samples, N)`` and ``decoded (samples, dim)``.
    emb : a PCA of ``activity.rates`` with >= 3 components (computed when ``None``).
    path : optional rates ``(T, N)`` of one run, projected and drawn as a black line.
    fig : figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    emb = pca(activity.rates, 3) if emb is None else emb
    dim = activity.decoded.shape[1]
    fig = Figure(figsize=(5.2 * dim, 4.4), layout="constrained") if fig is None else fig
    for a in range(dim):
        ax = fig.add_subplot(1, dim, a + 1, projection="3d")
        plot_embedding_3d(emb, activity.decoded[:, a], ax=ax,
                          color_label=f"{_PHASE} {_phase_labels(dim)[a]}", s=3.0)
        if path is not None:
            xyz = emb.transform(np.asarray(path, dtype=np.float64))
            ax.plot(xyz[:, 0], xyz[:, 1], xyz[:, 2], color="k", lw=1.0,
                    label="one path-integration run")
            ax.legend(loc="upper left", fontsize="small", frameon=False)
    fig.suptitle("population activity, first three principal components")
    return fig


def plot_activity_isomap(activity: ManifoldActivity, emb: Embedding,
                         index: np.ndarray | None = None, fig: Figure | None = None) -> Figure:
    """Isomap (2-D) of activity, coloured by each decoded phase (cyclic ``twilight``).

    Parameters
    ----------
    activity : the samples.
    emb : an Isomap embedding of ``activity.rates[index]`` with >= 2 coordinates.
    index : rows of the activity that ``emb`` embeds (all when ``None``).
    fig : figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    dec = activity.decoded if index is None else activity.decoded[index]
    if dec.shape[0] != emb.coords.shape[0]:
        raise ValueError(f"emb: {emb.coords.shape[0]} points, but {dec.shape[0]} decoded phases")
    dim = dec.shape[1]
    fig = Figure(figsize=(5.6 * dim, 4.2), layout="constrained") if fig is None else fig
    for a in range(dim):
        ax = fig.add_subplot(1, dim, a + 1)
        plot_embedding_2d(emb, dec[:, a], ax=ax, color_label=f"{_PHASE} {_phase_labels(dim)[a]}")
    fig.suptitle("population activity, Isomap")
    return fig


def plot_energy_landscape(landscape: EnergyLandscape, fig: Figure | None = None) -> Figure:
    """Energy along the manifold (flat) and along its normal directions (a valley at 0).

    Left: ``E(u*(psi)) - E(u*(0))`` versus ``psi``. Right: ``E(u*(0) + s ||u*|| n) - E(u*(0))``
    versus ``s``, one line per normal direction ``n``.

    Parameters
    ----------
    landscape : from :func:`energy_landscape`.
    fig : figure to draw into (a new one otherwise).

    Returns
    -------
    Figure
    """
    fig = Figure(figsize=(10.0, 3.8), layout="constrained") if fig is None else fig
    ax_t, ax_n = fig.subplots(1, 2)
    for name, e in zip(landscape.tangent_names, landscape.tangent, strict=True):
        ax_t.plot(landscape.psi, e, lw=1.2, label=f"along {name}")
    ax_t.set_xlabel("manifold coordinate ψ (rad)")
    ax_t.set_ylabel("$E(u^*(ψ)) - E(u^*(0))$ (a.u.)")
    depth = abs(landscape.normal_depth) or 1.0
    ax_t.set_ylim(-depth, depth)
    ax_t.set_title(f"tangent: range {landscape.tangent_range:.2g} "
                   f"({landscape.tangent_relative:.1g} of the normal depth)", fontsize="small")
    ax_t.legend(frameon=False, fontsize="small")
    colours = _sampled_colours("viridis", len(landscape.normal_names))
    for name, e, c in zip(landscape.normal_names, landscape.normal, colours, strict=True):
        ax_n.plot(landscape.s, e, lw=1.2, color=c, label=name)
    ax_n.axvline(0.0, color="0.5", lw=0.8, ls=":")
    ax_n.set_xlabel("normal displacement $s$ (relative distance $\\|δu\\| / \\|u^*\\|$)")
    ax_n.set_ylabel("$E(u^*(0) + s\\|u^*\\| n) - E(u^*(0))$ (a.u.)")
    ax_n.set_title("normal directions at $u^*(0)$", fontsize="small")
    ax_n.legend(frameon=False, fontsize="small")
    return fig


def _sampled_colours(cmap: str, count: int) -> list:
    from matplotlib import colormaps

    cm = colormaps[cmap]
    return [cm(x) for x in np.linspace(0.0, 0.85, max(count, 1))]


def _wrapped_segments(x: np.ndarray, y: np.ndarray | None = None) -> list[np.ndarray]:
    """Split a wrapped path at its jumps across the period (so no line crosses the plot)."""
    pts = np.c_[x] if y is None else np.c_[x, y]
    jump = np.any(np.abs(np.diff(pts, axis=0)) > math.pi, axis=1)
    cuts = np.flatnonzero(jump) + 1
    return [p for p in np.split(pts, cuts) if len(p) > 1]


def plot_manifold_path(trajectory: SimulationResult, runs: int = 4, fig: Figure | None = None,
                       shown: int = 1) -> Figure:
    """The bump's path on the manifold during path integration and its error.

    Left: ring, the decoded angle on a circle with radius growing with time (polar); torus, the
    decoded phases on the unit cell ``[0, 2 pi)^2``, coloured by time (``viridis``). Dashed: the
    integrated input velocity. Right: the wrapped error ``decoded - reference`` (rad) over time.

    Parameters
    ----------
    trajectory : a run with velocity input (``reference`` is set).
    runs : how many runs' errors to draw.
    fig : figure to draw into (a new one otherwise).
    shown : how many runs' paths to draw on the manifold (the first ones).

    Returns
    -------
    Figure
    """
    if trajectory.reference is None:
        raise ValueError("trajectory: plot_manifold_path needs a run with velocity input")
    t = _np(trajectory.t)
    dec = _np(trajectory.decoded)
    ref = np.mod(_np(trajectory.reference), 2 * math.pi)
    err = _np(trajectory.path_error())
    dim = dec.shape[-1]
    n = min(runs, dec.shape[1])
    fig = Figure(figsize=(10.0, 4.4), layout="constrained") if fig is None else fig
    colours = [f"C{b}" for b in range(n)]
    if dim == 1:
        ax = fig.add_subplot(1, 2, 1, projection="polar")
        for b in range(min(shown, n)):
            ax.plot(dec[:, b, 0], t, color=colours[b], lw=1.2)
            ax.plot(ref[:, b, 0], t, color=colours[b], lw=0.8, ls="--")
        ax.set_xticks(np.arange(4) * math.pi / 2, _POLAR_TICKS)
        ax.set_title("decoded angle ψ (rad; solid) and integrated velocity (dashed);\n"
                     "radius: time (τ)", fontsize="small")
    else:
        ax = fig.add_subplot(1, 2, 1)
        mappable = None
        for b in range(min(shown, n)):
            for seg in _wrapped_segments(ref[:, b, 0], ref[:, b, 1]):
                ax.plot(seg[:, 0], seg[:, 1], color="0.6", lw=0.8, ls="--")
            pts = np.c_[dec[:, b, 0], dec[:, b, 1]]
            jump = np.any(np.abs(np.diff(pts, axis=0)) > math.pi, axis=1)
            segs = np.stack([pts[:-1], pts[1:]], axis=1)[~jump]
            lc = LineCollection(segs, cmap="viridis", lw=1.4)
            lc.set_array(0.5 * (t[:-1] + t[1:])[~jump])
            lc.set_clim(t[0], t[-1])
            mappable = ax.add_collection(lc)
        fig.colorbar(mappable, ax=ax, label="time (τ)")
        ax.set_xlim(0, 2 * math.pi)
        ax.set_ylim(0, 2 * math.pi)
        ax.set_aspect("equal")
        ax.set_xlabel(_phase_labels(2)[0])
        ax.set_ylabel(_phase_labels(2)[1])
        ax.set_title("bump path on the torus (phase unit cell);\ndashed: integrated velocity",
                     fontsize="small")
    ax_e = fig.add_subplot(1, 2, 2)
    for b in range(n):
        for a in range(dim):
            ax_e.plot(t, err[:, b, a], color=colours[b], lw=1.0, ls="-" if a == 0 else ":")
    ax_e.axhline(0.0, color="0.5", lw=0.8)
    ax_e.set_xlabel("time (τ)")
    ax_e.set_ylabel("path error, decoded − integrated (rad)")
    ax_e.set_title("path-integration error" + (" (solid ψ1, dotted ψ2)" if dim == 2 else ""),
                   fontsize="small")
    return fig


# --------------------------------------------------------------------------------------------------
# animations


def _frame_index(count: int, frames: int) -> np.ndarray:
    frames = _check_int(frames, "frames", 1)
    return np.unique(np.linspace(0, count - 1, min(frames, count)).round().astype(int))


def _write_gif(fig: Figure, path: str | Path, fps: float, update, frames: np.ndarray,
               dpi: int) -> Path:
    from matplotlib.animation import PillowWriter

    fps = _check_positive(fps, "fps")
    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise ValueError(f"path={str(path)!r}: must end with .gif")
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    update(int(frames[0]))
    fig.canvas.draw()  # lay out once, then keep the layout fixed (faster, no jitter)
    fig.set_layout_engine("none")
    writer = PillowWriter(fps=fps)
    with writer.saving(fig, str(path), dpi):
        for i in frames:
            update(int(i))
            writer.grab_frame()
    return path


def _trajectory_arrays(trajectory, run: int, dim: int) -> tuple[np.ndarray, ...]:
    t = _np(trajectory.t).astype(float)
    r = _np(trajectory.r)
    dec = _np(trajectory.decoded)
    if r.ndim != 2 + dim:
        raise ValueError(f"trajectory: rates of shape {r.shape}; expected (T, B, "
                         + ("N)" if dim == 1 else "n1, n2)"))
    if not 0 <= run < r.shape[1]:
        raise ValueError(f"run={run}: must be in [0, {r.shape[1]})")
    if len(t) != r.shape[0]:
        raise ValueError(f"trajectory: {len(t)} times but {r.shape[0]} saved states")
    return t, r[:, run], dec[:, run].reshape(len(t), -1)


def animate_ring_bump(trajectory, path: str | Path, fps: float = 15.0, frames: int = 60,
                      run: int = 0, dpi: int = 80) -> Path:
    """GIF of a moving bump on a ring: the rate profile and its decoded angle.

    Left: rates ``r_j(t)`` versus the preferred angle ``theta_j = 2 pi j / N``; right: the
    decoded angle ``psi(t) = -arg z_1(r(t))`` on the unit circle with its recent trail.

    Parameters
    ----------
    trajectory : a :class:`~neurodyn.simulate.SimulationResult` (or any object with ``t (T,)``,
        ``r (T, B, N)`` and ``decoded (T, B, 1)``).
    path : output file, ``*.gif``.
    fps : frames per second (> 0).
    frames : at most this many frames, evenly spaced over the saved states (>= 1).
    run : which run of the batch.
    dpi : resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, T)`` frames).
    """
    t, r, dec = _trajectory_arrays(trajectory, run, 1)
    idx = _frame_index(len(t), frames)
    n = r.shape[1]
    theta = 2 * math.pi * np.arange(n) / n
    fig = Figure(figsize=(8.0, 3.4), layout="constrained")
    ax, ax_c = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2, projection="polar")
    line, = ax.plot(theta, r[0], color="#21918c", lw=1.8)
    marker = ax.axvline(dec[0, 0], color="0.3", ls=":", lw=1)
    ax.set_xlim(0, 2 * math.pi)
    top = float(r.max())
    ax.set_ylim(min(0.0, float(r.min())), 1.05 * top if top > 0 else 1.0)
    ax.set_xlabel("preferred angle θ (rad)")
    ax.set_ylabel("rate r (a.u.)")
    trail, = ax_c.plot([], [], color="0.6", lw=1)
    dot, = ax_c.plot([], [], "o", color="#440154", ms=8)
    ax_c.set_ylim(0, 1.1)
    ax_c.set_yticks([])
    ax_c.set_xticks(np.arange(4) * math.pi / 2, _POLAR_TICKS)
    ax_c.set_title("decoded angle ψ (rad)", fontsize="small")
    title = fig.suptitle("")

    def update(i: int) -> None:
        line.set_ydata(r[i])
        marker.set_xdata([dec[i, 0], dec[i, 0]])
        lo = max(0, i - 20)
        trail.set_data(dec[lo:i + 1, 0], np.ones(i + 1 - lo))
        dot.set_data([dec[i, 0]], [1.0])
        title.set_text(f"bump on the ring, t = {t[i]:.1f} τ")

    return _write_gif(fig, path, fps, update, idx, dpi)


def animate_sheet_bump(trajectory, path: str | Path, lattice: str = "hex", fps: float = 15.0,
                       frames: int = 60, run: int = 0, dpi: int = 80) -> Path:
    """GIF of a moving bump on a torus sheet: the rates on the sheet and the decoded phases.

    Left: rates of neuron ``(i, j)`` drawn at ``i e1 + j e2`` with ``e2`` at 60 degrees (hex) or
    90 degrees (square), ``viridis`` on a fixed scale; right: decoded phases
    ``(psi1, psi2)`` on the unit cell with their recent trail.

    Parameters
    ----------
    trajectory : a :class:`~neurodyn.simulate.SimulationResult` (or any object with ``t (T,)``,
        ``r (T, B, n1, n2)`` and ``decoded (T, B, 2)``).
    path : output file, ``*.gif``.
    lattice : ``"hex"`` or ``"square"``, the sheet's geometry.
    fps : frames per second (> 0).
    frames : at most this many frames, evenly spaced over the saved states (>= 1).
    run : which run of the batch.
    dpi : resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, T)`` frames).
    """
    if lattice not in ("hex", "square"):
        raise ValueError(f"lattice={lattice!r}: unknown; choose one of ('hex', 'square')")
    t, r, dec = _trajectory_arrays(trajectory, run, 2)
    idx = _frame_index(len(t), frames)
    x, y = sheet_corners(r.shape[1:], lattice)
    fig = Figure(figsize=(8.4, 3.6), layout="constrained")
    ax, ax_p = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    mesh = ax.pcolormesh(x, y, r[0], cmap="viridis", vmin=float(r.min()), vmax=float(r.max()),
                         shading="flat")
    fig.colorbar(mesh, ax=ax, label="rate r (a.u.)")
    ax.set_aspect("equal")
    ax.set_xlabel("sheet x (neuron spacings)")
    ax.set_ylabel("sheet y (neuron spacings)")
    trail, = ax_p.plot([], [], ".", color="0.6", ms=2)
    dot, = ax_p.plot([], [], "o", color="#440154", ms=8)
    ax_p.set_xlim(0, 2 * math.pi)
    ax_p.set_ylim(0, 2 * math.pi)
    ax_p.set_aspect("equal")
    ax_p.set_xlabel(_phase_labels(2)[0])
    ax_p.set_ylabel(_phase_labels(2)[1])
    ax_p.set_title("decoded phases", fontsize="small")
    title = fig.suptitle("")

    def update(i: int) -> None:
        mesh.set_array(r[i].ravel())
        lo = max(0, i - 30)
        trail.set_data(dec[lo:i + 1, 0], dec[lo:i + 1, 1])
        dot.set_data([dec[i, 0]], [dec[i, 1]])
        title.set_text(f"bump on the {lattice} sheet, t = {t[i]:.1f} τ")

    return _write_gif(fig, path, fps, update, idx, dpi)


def animate_flow(trajectories: np.ndarray, path: str | Path, times: np.ndarray | None = None,
                 target: np.ndarray | None = None, fps: float = 15.0, frames: int = 60,
                 trails: int = 64, dpi: int = 80) -> Path:
    """GIF of flow trajectories from noise (t = 0) to data (t = 1) in the plane.

    Each frame shows the points ``x_i(t)``, coloured by the angle of their starting point
    ``atan2(x_i(0))`` (cyclic ``twilight``), so that one sees where each part of the noise goes;
    ``trails`` of them draw their path so far.

    Parameters
    ----------
    trajectories : array ``(steps, n, 2)``, the ODE solution at ``steps`` times.
    path : output file, ``*.gif``.
    times : ``(steps,)`` times of the solution (default ``linspace(0, 1, steps)``).
    target : optional ``(m, 2)`` data samples drawn faintly in the background.
    fps : frames per second (> 0).
    frames : at most this many frames, evenly spaced over the steps (>= 1).
    trails : number of points whose path is drawn (>= 0).
    dpi : resolution of the frames.

    Returns
    -------
    Path of the written GIF (``min(frames, steps)`` frames).
    """
    x = np.asarray(trajectories, dtype=np.float64)
    if x.ndim != 3 or x.shape[2] != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"trajectories: shape {x.shape}; expected (steps, n, 2)")
    if not np.all(np.isfinite(x)):
        raise ValueError("trajectories: contains non-finite values")
    steps = x.shape[0]
    t = np.linspace(0.0, 1.0, steps) if times is None else np.asarray(times, dtype=float)
    if t.shape != (steps,):
        raise ValueError(f"times: shape {t.shape}; expected ({steps},)")
    trails = min(_check_int(trails, "trails", 0), x.shape[1])
    idx = _frame_index(steps, frames)
    fig = Figure(figsize=(4.6, 4.4), layout="constrained")
    ax = fig.add_subplot()
    pts = x.reshape(-1, 2)
    if target is not None:
        tg = np.asarray(target, dtype=np.float64)
        if tg.ndim != 2 or tg.shape[1] != 2:
            raise ValueError(f"target: shape {tg.shape}; expected (m, 2)")
        ax.scatter(tg[:, 0], tg[:, 1], s=2, color="0.8", linewidths=0, label="data")
        pts = np.r_[pts, tg]
    lo, hi = pts.min(0), pts.max(0)
    pad = 0.05 * (hi - lo) + 1e-9
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$ (data units)")
    ax.set_ylabel("$x_2$ (data units)")
    angle = np.mod(np.arctan2(x[0, :, 1], x[0, :, 0]), 2 * math.pi)
    lines = [ax.plot([], [], color="0.4", lw=0.5, alpha=0.6)[0] for _ in range(trails)]
    sc = ax.scatter(x[0, :, 0], x[0, :, 1], c=angle, cmap="twilight", vmin=0, vmax=2 * math.pi,
                    s=4, linewidths=0)
    fig.colorbar(sc, ax=ax, shrink=0.8, label="angle of the starting point (rad)")
    title = ax.set_title("")

    def update(i: int) -> None:
        sc.set_offsets(x[i])
        for j, ln in enumerate(lines):
            ln.set_data(x[: i + 1, j, 0], x[: i + 1, j, 1])
        title.set_text(f"flow from noise to data, t = {t[i]:.2f}")

    return _write_gif(fig, path, fps, update, idx, dpi)


# --------------------------------------------------------------------------------------------------
# the report


def manifold_report(network: HopfieldNetwork, out_dir: str | Path | None = None,
                    samples: int = 2000, seed: int = 0, topology: bool = True,
                    animate: bool = False, isomap_points: int = 1000,
                    max_landmarks: int = 250) -> dict:
    """Embeddings, topology, energy landscape and path of a network's attractor manifold.

    Steps: :func:`manifold_activity` (``samples`` rates); PCA to 3 components and Isomap to 2
    (on ``isomap_points`` max-min landmarks of the activity projected on its 10 leading principal
    components); persistent homology up to dimension 2 on ``max_landmarks`` landmarks
    (:func:`~neurodyn.topology.persistent_homology`), Betti numbers by the widest-gap rule (a ring
    gives ``(1, 1, 0)``, a torus ``(1, 2, 1)``); :func:`energy_landscape`; path integration of
    four runs for 200 tau (:func:`path_on_manifold`); optionally the bump animation.

    Parameters
    ----------
    network : a network with a target manifold and transport.
    out_dir : directory for the figures (``pca.png``, ``isomap.png``, ``barcode.png``,
        ``energy_landscape.png``, ``path.png``; ``ring_bump.gif`` or ``sheet_bump.gif`` with
        ``animate``) and ``activity.npz``; nothing is written when ``None``.
    samples : activity samples (>= 20).
    seed : seeds every random draw.
    topology : compute persistent homology (needs the optional ``ripser``).
    animate : also write the bump GIF (needs ``out_dir``).
    isomap_points : at most this many samples enter Isomap (>= 20).
    max_landmarks : landmarks of the persistent homology (>= 2).

    Returns
    -------
    dict
        ``betti`` ``[b0, b1, b2]`` (when ``topology``), ``pca_explained_variance`` (first six
        ratios), ``pca_top3``, ``isomap_explained_variance``, ``energy`` (see
        :meth:`EnergyLandscape.metrics`), ``path_error_rms_final`` (rad), ``activity``
        (samples, runs, max/median distance), ``seconds`` (per step and total).
    """
    from .plotting import save_figure

    _manifold(network)
    samples = _check_int(samples, "samples", MIN_REPORT_SAMPLES)
    isomap_points = _check_int(isomap_points, "isomap_points", MIN_REPORT_SAMPLES)
    max_landmarks = _check_int(max_landmarks, "max_landmarks", 2)
    if animate and out_dir is None:
        raise ValueError("animate=True: needs out_dir to write the GIF into")
    out = None if out_dir is None else Path(out_dir)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    s_act, s_top, s_land, s_path, s_iso = _seeds(seed, 5)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    total_start = clock

    def tick(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    def save(fig: Figure, name: str) -> None:
        if out is not None:
            save_figure(fig, out / name)

    act = manifold_activity(network, samples=samples, seed=s_act)
    tick("activity")
    g = network.geometry
    metrics: dict[str, Any] = {
        "geometry": g.config(),
        "activity": {"samples": act.samples, "runs": act.runs,
                     "distance_max": float(act.distance.max()),
                     "distance_median": float(np.median(act.distance))},
    }
    emb = pca(act.rates, min(10, act.rates.shape[1], act.samples))
    metrics["pca_explained_variance"] = [float(x) for x in emb.explained_variance_ratio[:6]]
    metrics["pca_top3"] = float(emb.explained_variance_ratio[:3].sum())
    low = emb.coords  # activity on its leading principal components (noise removed)
    idx = subsample(low, isomap_points, seed=s_iso)
    iso = isomap(low[idx], 2, n_neighbors=min(10, len(idx) - 1))
    metrics["isomap_explained_variance"] = [float(x) for x in iso.explained_variance_ratio]
    tick("embedding")
    if topology:
        from .topology import persistent_homology, plot_barcode

        hom = persistent_homology(act.rates, maxdim=2, max_points=max_landmarks, seed=s_top)
        betti = hom.betti()
        metrics["betti"] = list(betti)
        metrics["expected_betti"] = [1, 1, 0] if g.dim == 1 else [1, 2, 1]
        metrics["betti_ok"] = metrics["betti"] == metrics["expected_betti"]
        metrics["homology"] = {"landmarks": int(len(hom.landmarks)),
                               "cover_radius": hom.cover_radius, "diameter": hom.diameter,
                               "longest_bars": [[float(x) for x in hom.lifetimes(k)[:4]]
                                                for k in range(3)]}
        fig = plot_barcode(hom, units="rate")
        fig.suptitle(f"persistent homology of activity: Betti {tuple(betti)}")
        save(fig, "barcode.png")
        tick("topology")
    land = energy_landscape(network, seed=s_land)
    metrics["energy"] = land.metrics()
    save(plot_energy_landscape(land), "energy_landscape.png")
    tick("energy_landscape")
    tr = path_on_manifold(network, seed=s_path)
    err = _np(tr.path_error())
    metrics["path_error_rms_final"] = float(np.sqrt(np.mean(err[-1] ** 2)))
    save(plot_manifold_path(tr), "path.png")
    path_rates = _np(tr.r[:61, 0]).reshape(min(61, len(tr.t)), -1)  # the first 60 tau
    save(plot_activity_pca(act, pca(act.rates, 3), path=path_rates), "pca.png")
    save(plot_activity_isomap(act, iso, idx), "isomap.png")
    tick("path_and_figures")
    if animate:
        if g.dim == 1:
            animate_ring_bump(tr, out / "ring_bump.gif")
        else:
            lattice = g.lattice if isinstance(g, Torus) else "square"
            animate_sheet_bump(tr, out / "sheet_bump.gif", lattice=lattice)
        tick("animation")
    if out is not None:
        np.savez_compressed(out / "activity.npz", rates=act.rates.astype(np.float32),
                            decoded=act.decoded, distance=act.distance,
                            pca=emb.coords[:, :3])
    seconds["total"] = time.perf_counter() - total_start
    metrics["seconds"] = seconds
    return metrics


# --------------------------------------------------------------------------------------------------
# command line
