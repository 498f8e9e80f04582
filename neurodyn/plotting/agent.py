"""Figure of an agent's trajectory in its box (optionally with a decoded estimate)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from _runkit import BadInput, BadType

from ..spatial.agent import Trajectory
from . import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_trajectory"]


def plot_trajectory(
    trajectory: Trajectory,
    decoded: np.ndarray | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Plot a trajectory in its box, optionally with a decoded estimate of it.

    Parameters
    ----------
    trajectory : Trajectory
    decoded : array, shape (steps, 2), optional
        Estimated positions in metres, drawn dashed.
    ax : Axes or None
        Matplotlib Axes, optional Axes to draw into; a new figure is created when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``; the caller owns (and closes) it.
    """
    from matplotlib.patches import Rectangle

    if not isinstance(trajectory, Trajectory):
        raise BadType(f"trajectory must be a Trajectory, got {type(trajectory).__name__}",
                      param="trajectory")
    fig, ax = new_axes(ax, (4.5, 4.5))
    size = trajectory.box.size
    ax.add_patch(Rectangle((0, 0), size, size, fill=False, edgecolor="k", linewidth=1.5))
    # with a decoded path, the true one is a wide pale band under it: where they agree both show
    style = ({"color": "0.3", "linewidth": 0.6} if decoded is None else
             {"color": "tab:blue", "linewidth": 4.0, "alpha": 0.3, "solid_capstyle": "round"})
    ax.plot(*trajectory.position.T, label="true", **style)
    if decoded is not None:
        decoded = np.asarray(decoded, dtype=float)
        if decoded.shape != trajectory.position.shape:
            raise BadInput(
                f"decoded must have shape {trajectory.position.shape} like the trajectory, "
                f"got shape {decoded.shape}", param="decoded"
            )
        ax.plot(*decoded.T, color="tab:red", linewidth=0.8, label="decoded")
        ax.legend(loc="upper right", fontsize="small")
    ax.plot(*trajectory.position[0], marker="o", color="tab:green", markersize=5)
    pad = 0.03 * size
    ax.set_xlim(-pad, size + pad)
    ax.set_ylim(-pad, size + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return fig
