"""Figures of an :class:`~neurodyn.analysis.embedding.Embedding`: 2-D and 3-D scatter plots."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from _runkit import BadInput, BadType
from _runkit.notebook import notebook_figure

from ..analysis.embedding import Embedding

__all__ = ["plot_embedding_2d", "plot_embedding_3d"]


def _axis_labels(emb: Embedding, k: int, units: str | None) -> list[str]:
    base = "PC" if emb.method == "pca" else emb.method.capitalize() + " "
    unit = f" [{units}]" if units else ""
    labels = []
    for i in range(k):
        pct = 100.0 * float(emb.explained_variance_ratio[i])
        labels.append(f"{base}{i + 1} ({pct:.1f}%){unit}")
    return labels


def _colour_args(
    color: np.ndarray | None, n: int, cyclic: bool, cmap: str | None
) -> tuple[dict, str | None]:
    """Keyword arguments for scatter and the colour map actually used."""
    if color is None:
        return {"color": "0.3"}, None
    c = np.asarray(color, dtype=np.float64).reshape(-1)
    if c.shape[0] != n:
        raise BadInput(f"color has {c.shape[0]} values; it must have one per sample ({n})",
                       param="color")
    if cyclic:
        name = cmap or "twilight"
        return {"c": np.mod(c, 2 * np.pi), "cmap": name, "vmin": 0.0, "vmax": 2 * np.pi}, name
    name = cmap or "viridis"
    return {"c": c, "cmap": name}, name


def _add_colorbar(fig: Figure, ax: Axes, mappable, cyclic: bool, label: str) -> None:
    cbar = fig.colorbar(mappable, ax=ax, shrink=0.75, pad=0.1)
    cbar.set_label(label)
    if cyclic:
        cbar.set_ticks([0.0, np.pi, 2 * np.pi])
        cbar.set_ticklabels(["0", "π", "2π"])


def _check_embedding(emb: Embedding, k: int, fn: str) -> np.ndarray:
    if not isinstance(emb, Embedding):
        raise BadType(f"{fn}: emb must be an Embedding; got {type(emb).__name__}")
    if emb.coords.shape[1] < k:
        raise BadInput(
            f"{fn}: emb has {emb.coords.shape[1]} coordinates; at least {k} are needed"
        )
    return emb.coords[:, :k]


def plot_embedding_3d(
    emb: Embedding,
    color: np.ndarray | None = None,
    ax: Axes | None = None,
    color_label: str = "decoded angle (rad)",
    cyclic: bool = True,
    cmap: str | None = None,
    units: str | None = "a.u.",
    s: float = 4.0,
) -> Figure:
    """Scatter the first three embedded coordinates in 3-D.

    ``(coords[:, 0], coords[:, 1], coords[:, 2])``, coloured by ``color`` (samples,)

    Parameters
    ----------
    emb : Embedding
        With at least 3 coordinates.
    color : array_like, shape (samples,), optional
        Value per sample (e.g. the decoded bump angle). Without it the points are grey.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        A 3-D axes to draw into; by default a new ``Figure`` with one 3-D axes is created.
    color_label : str
        Colour bar label, with units.
    cyclic : bool
        Treat ``color`` as an angle in radians: wrap it to [0, 2 pi) and use the cyclic
        ``twilight`` map. Otherwise ``viridis`` on the data range.
    cmap : str, optional
        Override the colour map (choose a perceptually uniform one).
    units : str, optional
        Units of the embedded coordinates, appended to the axis labels.
    s : float
        Marker area in points^2.

    Returns
    -------
    matplotlib.figure.Figure
    """
    xyz = _check_embedding(emb, 3, "plot_embedding_3d")
    if ax is None:
        fig = notebook_figure(Figure(figsize=(5.5, 4.5)))
        ax = fig.add_subplot(projection="3d")
    else:
        fig = ax.get_figure()
        if getattr(ax, "name", "") != "3d":
            raise BadInput("plot_embedding_3d: ax must be a 3-D axes (projection='3d')")
    kwargs, _ = _colour_args(color, xyz.shape[0], cyclic, cmap)
    sc = ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], s=s, linewidths=0, **kwargs)
    labels = _axis_labels(emb, 3, units)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_zlabel(labels[2])
    if color is not None:
        _add_colorbar(fig, ax, sc, cyclic, color_label)
    return fig


def plot_embedding_2d(
    emb: Embedding,
    color: np.ndarray | None = None,
    ax: Axes | None = None,
    color_label: str = "decoded angle (rad)",
    cyclic: bool = True,
    cmap: str | None = None,
    units: str | None = "a.u.",
    s: float = 4.0,
    dims: tuple[int, int] = (0, 1),
) -> Figure:
    """Scatter two embedded coordinates.

    ``(coords[:, dims[0]], coords[:, dims[1]])``, coloured by ``color`` (samples,)

    Parameters
    ----------
    emb : Embedding
        With more than ``max(dims)`` coordinates.
    color : array_like, shape (samples,), optional
        Value per sample; without it the points are grey.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new ``Figure`` is created.
    color_label : str
        Colour bar label, with units.
    cyclic : bool
        Treat ``color`` as an angle in radians (``twilight`` on [0, 2 pi)); otherwise ``viridis``.
    cmap : str, optional
        Override the colour map (choose a perceptually uniform one).
    units : str, optional
        Units of the embedded coordinates, appended to the axis labels.
    s : float
        Marker area in points^2.
    dims : tuple of int
        The two coordinates to draw.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if len(dims) != 2 or min(dims) < 0:
        raise BadInput(f"dims={dims!r} is not allowed; give two non-negative coordinate indices",
                       param="dims")
    coords = _check_embedding(emb, max(dims) + 1, "plot_embedding_2d")
    if ax is None:
        fig = notebook_figure(Figure(figsize=(5.0, 4.2)))
        ax = fig.add_subplot()
    else:
        fig = ax.get_figure()
    kwargs, _ = _colour_args(color, coords.shape[0], cyclic, cmap)
    sc = ax.scatter(coords[:, dims[0]], coords[:, dims[1]], s=s, linewidths=0, **kwargs)
    labels = _axis_labels(emb, max(dims) + 1, units)
    ax.set_xlabel(labels[dims[0]])
    ax.set_ylabel(labels[dims[1]])
    ax.set_aspect("equal", adjustable="datalim")
    if color is not None:
        _add_colorbar(fig, ax, sc, cyclic, color_label)
    return fig
