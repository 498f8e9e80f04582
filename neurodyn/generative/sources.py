"""Population states from a driving trajectory or from recorded counts, for the generators.

- :func:`driven_states`: the fitted network driven by a trajectory (a rat's heading on a ring,
  its position's lattice phase on a torus; :func:`neurodyn.datasets.rat_trajectory`, real or
  synthetic) through its velocity input, with noise; the states' coordinate follows the
  trajectory, so its distribution is the animal's, not uniform.
- :func:`recorded_states`: the counts a ``neurodyn fit-activity`` model was fitted to, put on the
  model's neurons through its fitted manifold. Each recorded cell's windowed rate is normalised
  by its fitted gain and baseline (``y_i = (rate_i - b_i) / g_i``, the shared profile's value,
  0 to 1 on the bump), interpolated (periodically, linearly) over the cells' preferred angles
  onto the network's neurons -- on a torus piecewise linearly over a Delaunay triangulation of
  the cells' preferred phases and their periodic images, laid out on the sheet with the
  lattice's axes (:meth:`~neurodyn.geometry.Torus.metric`) -- clipped to the profile's range
  [0, 1] and mapped onto the rate range of the network's bump, as the fit maps the profile onto
  its target
  (:mod:`neurodyn.inference.energy`). The maximum-likelihood
  coordinate of the counts (:func:`neurodyn.inference.decode_file`) is kept beside the
  states' nearest manifold coordinate.

Both return :class:`~.states.PopulationStates` (with ``covariate``), so every generator,
metric and the command ``neurodyn generate`` take them as they take noise-driven states.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from _runkit import BadInput, check_int
from _runkit.seeds import derive_seed

from ..network import HopfieldNetwork
from .states import PopulationStates, locate

__all__ = ["driven_states", "recorded_states", "trajectory_coordinate"]


def trajectory_coordinate(network: HopfieldNetwork, trajectory, spacing: float = 0.5,
                          orientation: float = 0.0) -> np.ndarray:
    """The manifold coordinate a trajectory drives, unwrapped, ``(T, dim)``: the heading on a
    ring; on a torus the position's lattice phases for a module of grid ``spacing`` (m) and
    ``orientation`` (rad) on the network's lattice.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=16, steps=1)).network
    >>> tr = SimpleNamespace(heading=np.array([6.2, 0.1]), position=np.zeros((2, 2)))
    >>> trajectory_coordinate(net, tr).round(4).ravel().tolist()  # across 0, not back round
    [6.2, 6.3832]
    """
    if network.geometry.dim == 1:
        return np.unwrap(np.asarray(trajectory.heading, dtype=float))[:, None]
    from ..spatial.phases import position_to_phase

    return position_to_phase(np.asarray(trajectory.position, dtype=float), spacing, orientation,
                             network.geometry.lattice)


def _check_noise(noise) -> float:
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise >= 0):
        raise BadInput(f"noise={noise!r} is not allowed; it must be a finite number >= 0")
    return float(noise)


def driven_states(network: HopfieldNetwork, trajectory, count: int = 2000, noise: float = 0.2,
                  tau: float = 0.1, runs: int = 20, burn: float = 5.0, dt: float = 0.05,
                  spacing: float = 0.5, orientation: float = 0.0,
                  seed: int = 0) -> PopulationStates:
    """States of ``network`` driven by a trajectory's velocity, one per tau.

    The trajectory is cut into ``runs`` equal segments; each segment is simulated from the
    manifold point of its first coordinate (:func:`trajectory_coordinate`) with the
    coordinate's velocity (rad per tau, ``tau`` seconds per unit of the network's time) as the
    network's velocity input and noise ``sigma = noise`` on ``u`` (Euler-Maruyama); states are
    kept once per tau after ``burn``.

    Parameters
    ----------
    network : HopfieldNetwork
        A fitted ring or torus.
    trajectory : RatTrajectory
        From :func:`neurodyn.datasets.rat_trajectory` (or anything with ``dt`` (s),
        ``heading`` ``(T,)`` and ``position`` ``(T, 2)``).
    count : int
        States returned (in a seeded random order).
    noise : float
        Noise ``sigma`` on ``u``, >= 0.
    tau : float
        Seconds per unit of the network's time.
    runs : int
        Segments simulated side by side.
    burn, dt : float
        Time discarded at the start of each segment and the step (tau).
    spacing, orientation : float
        Grid module of a torus (m, rad); unused on a ring.
    seed : int
        Seeds the noise and the order.

    Returns
    -------
    PopulationStates
        With ``covariate`` the trajectory's coordinate (wrapped) at each state.
    """
    from ..dynamics.inputs import ArrayVelocity
    from ..dynamics.simulation import simulate

    count, runs = check_int("count", count, lo=2), check_int("runs", runs, lo=1)
    noise = _check_noise(noise)
    if network.manifold is None:
        raise BadInput("network: needs a target manifold (a fitted network)")
    psi = trajectory_coordinate(network, trajectory, spacing, orientation)
    h = float(trajectory.dt) / float(tau)  # trajectory bin in units of tau
    per_run = -(-count // runs)
    seg = len(psi) // runs
    need = burn + per_run
    length = int(math.ceil(need / h)) + 1  # velocity samples per segment
    if seg < length + 1:
        raise BadInput(f"count={count}: {runs} segments of {seg * h:.0f} tau from a trajectory "
                       f"of {len(psi) * h:.0f} tau; {need:.0f} tau each are needed (fewer "
                       "states or a longer trajectory)")
    starts = np.arange(runs) * seg
    vel = np.diff(psi, axis=0) / h
    v = np.stack([vel[s:s + length] for s in starts], axis=1)  # (length, runs, dim)
    u0 = network.manifold.u_star(torch.as_tensor(np.mod(psi[starts], 2 * math.pi)))
    tr = simulate(network, u0, need, dt, method="euler", noise=noise,
                  velocity=ArrayVelocity(v, h), save_every=max(1, int(round(1.0 / dt))),
                  seed=derive_seed(seed, "driven") % 2**63, diagnostics=False,
                  progress=False).cpu()
    keep = tr.t >= burn - 1e-9
    u = tr.u[keep].reshape(-1, network.geometry.size)
    idx = np.rint(np.asarray(tr.t[keep], dtype=float) / h).astype(int)
    cov = np.mod(psi[starts[None, :] + idx[:, None]], 2 * math.pi).reshape(-1, psi.shape[1])
    order = torch.randperm(len(u), generator=torch.Generator().manual_seed(
        derive_seed(seed, "order") % 2**63))[:count]
    rates = network.activation(u[order].to(torch.float64))
    phases, dist = locate(network, rates)
    return PopulationStates(rates, phases, dist, noise, torch.as_tensor(cov)[order])


def _on_neurons(y: np.ndarray, preferred: np.ndarray, n: int) -> np.ndarray:
    """Values ``y`` ``(T, cells)`` at cells' angles, interpolated periodically and linearly at
    ``n`` equally spaced angles ``2 pi j / n``: ``(T, n)``."""
    order = np.argsort(preferred)
    p, y = preferred[order], y[:, order]
    theta = np.arange(n) * 2 * math.pi / n
    pp = np.concatenate([p[-1:] - 2 * math.pi, p, p[:1] + 2 * math.pi])
    yy = np.concatenate([y[:, -1:], y, y[:, :1]], axis=1)
    hi = np.searchsorted(pp, theta, side="right").clip(1, len(pp) - 1)
    f = (theta - pp[hi - 1]) / np.maximum(pp[hi] - pp[hi - 1], 1e-12)
    return yy[:, hi - 1] * (1 - f) + yy[:, hi] * f


def _on_sheet(y: np.ndarray, preferred: np.ndarray, geometry) -> np.ndarray:
    """Values ``y`` ``(T, cells)`` at cells' phases ``(cells, 2)``, interpolated piecewise
    linearly (Delaunay triangles of the cells and their eight periodic images, on the sheet's
    axes) at the phases of a torus's neurons: ``(T, n1 n2)``.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Torus
    >>> sheet = Torus(8, 8, "hex")
    >>> pref = np.random.default_rng(0).uniform(0, 2 * np.pi, (400, 2))
    >>> out = _on_sheet(np.cos(pref[:, 0] - pref[:, 1])[None], pref, sheet)
    >>> a, b = sheet.coords().reshape(2, -1).numpy()
    >>> bool(np.abs(out[0] - np.cos(a - b)).max() < 0.1)   # 400 cells: within 0.1 everywhere
    True
    """
    from scipy.spatial import Delaunay

    if len(preferred) < 3:
        raise BadInput(f"model: {len(preferred)} cells cannot span a torus (3 or more needed)")
    c = float(geometry.metric()[0, 1])
    axes = np.array([[1.0, 0.0], [c, math.sqrt(1.0 - c * c)]])  # rows e1, e2 on the sheet
    shifts = 2 * math.pi * np.array([(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)], float)
    pts = (np.mod(preferred, 2 * math.pi)[None] + shifts[:, None]).reshape(-1, 2)
    tri = Delaunay(pts @ axes)
    grid = geometry.coords().reshape(2, -1).T.numpy() @ axes
    simplex = tri.find_simplex(grid)
    if (simplex < 0).any():  # the periodic images cover the sheet unless the cells are degenerate
        raise BadInput("model: the cells' phases do not span the torus (collinear or repeated)")
    T = tri.transform[simplex]  # (n, 3, 2): inverse affine map and the last vertex
    b = np.einsum("nij,nj->ni", T[:, :2], grid - T[:, 2])
    w = np.concatenate([b, 1.0 - b.sum(1, keepdims=True)], axis=1)  # barycentric, (n, 3)
    cell = tri.simplices[simplex] % len(preferred)  # (n, 3) cell of each vertex
    return np.einsum("tnk,nk->tn", y[:, cell], w)


def recorded_states(model, data, count: int | None = None, window: int = 5,
                    seed: int = 0) -> tuple[HopfieldNetwork, PopulationStates]:
    """The recorded counts of a ``fit-activity`` model on the model's neurons (module
    docstring).

    Parameters
    ----------
    model : str or Path
        The model folder of ``neurodyn fit-activity`` (``model.pt`` and ``cells.npz``; ring
        or torus).
    data : str or Path or dict
        The activity file (:func:`neurodyn.inference.read_activity`) or its arrays.
    count : int or None
        States kept, equally spaced in time (None: every bin where all cells were observed).
    window : int
        Odd number of bins pooled per state (and per decoded coordinate).
    seed : int
        Seeds the order of the states.

    Returns
    -------
    network : HopfieldNetwork
        The model's network.
    states : PopulationStates
        ``noise`` nan; ``covariate`` the counts' maximum-likelihood coordinate.
    """
    from ..inference import decode_file, load_cells, read_activity
    from ..inference.decode import windowed
    from ..io import load_model

    network = load_model(model, "model").network
    cells, info = load_cells(model, "model")
    dim = 1 if info["geometry"] == "ring" else 2
    if network.geometry.dim != dim:
        raise BadInput(f"model={str(model)!r}: cells of a {info['geometry']} beside a network "
                       f"of dimension {network.geometry.dim}")
    data = read_activity(data, "data") if not isinstance(data, dict) else data
    if data["counts"].shape[1] != info["used"].size:
        raise BadInput(f"data: {data['counts'].shape[1]} cells; the model was fitted to "
                       f"{info['used'].size}")
    check_int("window", window, lo=1, hi=data["counts"].shape[0])  # at most the recording
    sums, seen = windowed(data["counts"][:, info["used"]], window)
    rows = np.flatnonzero((seen > 0).all(1))
    if count is not None:
        count = check_int("count", count, lo=2)
        if count > len(rows):
            raise BadInput(f"count={count}: the record has {len(rows)} fully observed bins")
        rows = rows[np.linspace(0, len(rows) - 1, count).round().astype(int)]
    y = (sums[rows] / (seen[rows] * data["dt"]) - cells.baseline) / cells.gain
    bump = network.activation(network.manifold.u_star(torch.zeros(1, dim, dtype=torch.float64)))
    lo, hi = float(bump.min()), float(bump.max())
    y = (_on_neurons(y, cells.preferred, network.geometry.size) if dim == 1
         else _on_sheet(y, cells.preferred, network.geometry))
    y = np.clip(y, 0.0, 1.0)
    rates = torch.as_tensor(lo + (hi - lo) * y)
    decoded = decode_file(cells, info, data, window)[rows]
    order = torch.randperm(len(rates), generator=torch.Generator().manual_seed(
        derive_seed(seed, "order") % 2**63))
    rates = rates[order]
    phases, dist = locate(network, rates)
    cov = torch.as_tensor(np.mod(decoded, 2 * math.pi)).reshape(len(rows), -1)[order]
    return network, PopulationStates(rates, phases, dist, math.nan, cov)
