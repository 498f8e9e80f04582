"""Argument checks of grid-cell runs (network, trajectory, module spacings)."""

from __future__ import annotations

import numpy as np

from _runkit import BadInput, check_positive

from ...geometry.populations import LATTICES, Torus
from ...network import HopfieldNetwork
from ..agent import Trajectory

__all__ = []


def _check_network(network: HopfieldNetwork, lattice: str | None) -> Torus:
    if not isinstance(network, HopfieldNetwork):
        raise BadInput(f"network: expected a HopfieldNetwork, got {type(network).__name__}",
                       param="network")
    g = network.geometry
    if not isinstance(g, Torus):
        raise BadInput(f"network: grid cells need a torus model, got {g!r}; "
                       "fit one with `neurodyn fit torus`", param="network")
    if lattice is not None:
        if lattice not in LATTICES:
            raise BadInput(f"lattice={lattice!r}: unknown lattice; choose one of {LATTICES}",
                           param="lattice")
        if lattice != g.lattice:
            raise BadInput(f"lattice={lattice!r}: the model's torus has lattice "
                           f"{g.lattice!r}; use a {lattice} model or lattice={g.lattice!r}",
                           param="lattice")
    if network.transport is None:
        raise BadInput("network: has no velocity transport; fit one (fit does)", param="network")
    if network.manifold is None:
        raise BadInput("network: has no target manifold to start the bump from", param="network")
    return g


def _check_trajectory(trajectory: Trajectory) -> None:
    if not isinstance(trajectory, Trajectory):
        raise BadInput(f"trajectory: expected a neurodyn.spatial.agent.Trajectory, got "
                       f"{type(trajectory).__name__}; see generate_trajectory/load_positions",
                       param="trajectory")
    pos, t = np.asarray(trajectory.position), np.asarray(trajectory.t)
    if pos.ndim != 2 or pos.shape[1] != 2 or pos.shape[0] < 2:
        raise BadInput(f"trajectory.position: shape {pos.shape}; expected (steps, 2) with "
                       "steps >= 2", param="trajectory.position")
    if t.shape != (pos.shape[0],):
        raise BadInput(f"trajectory.t: shape {t.shape}; expected ({pos.shape[0]},) like the "
                       "positions", param="trajectory.t")
    vel = np.asarray(trajectory.velocity)
    if vel.shape != pos.shape:
        raise BadInput(f"trajectory.velocity: shape {vel.shape}; expected {pos.shape}",
                       param="trajectory.velocity")
    for name, arr in (("position", pos), ("t", t), ("velocity", vel)):
        if not np.all(np.isfinite(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr).reshape(arr.shape[0], -1).all(-1))[0])
            raise BadInput(f"trajectory.{name}: non-finite value at sample {i}",
                           param="trajectory")
    step = np.diff(t)
    if np.any(step <= 0):
        i = int(np.flatnonzero(step <= 0)[0])
        raise BadInput(f"trajectory.t: must be strictly increasing; t[{i}]={t[i]} then "
                       f"t[{i + 1}]={t[i + 1]}", param="trajectory.t")
    if np.max(np.abs(step - trajectory.dt)) > 1e-6 * trajectory.dt:
        raise BadInput(f"trajectory.t: samples must be uniformly spaced by dt="
                       f"{trajectory.dt} s; got spacings {step.min()} to {step.max()} s",
                       param="trajectory.t")
    outside = ~trajectory.box.contains(pos)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise BadInput(f"trajectory.position: {pos[i].tolist()} at sample {i} lies outside "
                       f"the box [0, {trajectory.box.size}] x [0, {trajectory.box.size}] m",
                       param="trajectory.position")


def _modules(spacing: float, modules) -> list[float]:
    if modules is None:
        return [check_positive("spacing", spacing)]
    mods = list(modules) if not isinstance(modules, (int, float)) else [modules]
    if not mods:
        raise BadInput("modules=[]: give at least one spacing (metres), or None", param="modules")
    return [check_positive(f"modules[{i}]", s) for i, s in enumerate(mods)]
