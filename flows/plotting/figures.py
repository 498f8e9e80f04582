"""Figures. Every function takes ``ax=None`` (a new figure is made without pyplot) and returns
the figure; no global matplotlib state is touched. Save with ``fig.savefig(path)``. In a Jupyter
notebook the returned figure shows once, as a PNG, whether the function made it or drew into
the caller's axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from _runkit.notebook import notebook_figure

CMAP = "viridis"


def _axes(ax: Axes | None, figsize: tuple[float, float] = (5.0, 4.0)) -> tuple[Figure, Axes]:
    """``(figure, axes)``: the given axes' figure, or a new one; either shows once in a
    notebook (:func:`_runkit.notebook.notebook_figure`)."""
    if ax is not None:
        return notebook_figure(ax.figure, created=False), ax  # type: ignore[return-value]
    fig = notebook_figure(Figure(figsize=figsize, layout="constrained"))
    return fig, fig.add_subplot()


def _np(x: torch.Tensor | np.ndarray) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def plot_samples(samples: torch.Tensor | np.ndarray, data: torch.Tensor | np.ndarray,
                 ax: Axes | None = None, title: str = "") -> Figure:
    """Scatter of generated samples (N, 2) over data points (n, 2)."""
    fig, ax = _axes(ax)
    d, s = _np(data), _np(samples)
    ax.scatter(d[:, 0], d[:, 1], s=3, alpha=0.35, color="0.55", label="data")
    ax.scatter(s[:, 0], s[:, 1], s=3, alpha=0.6, color="#3b528b", label="samples")
    ax.set(xlabel="$x_1$", ylabel="$x_2$", title=title, aspect="equal")
    ax.legend(loc="upper right", markerscale=4, fontsize=8)
    return fig


def plot_trajectories(trajectory: torch.Tensor | np.ndarray, times: torch.Tensor | np.ndarray,
                      ax: Axes | None = None, max_paths: int = 300) -> Figure:
    """Paths x(t) of shape (T, N, 2) coloured by t (viridis); start and end points marked."""
    fig, ax = _axes(ax)
    tr, tt = _np(trajectory)[:, :max_paths], _np(times)
    for j in range(tr.shape[1]):
        ax.plot(tr[:, j, 0], tr[:, j, 1], color="0.7", lw=0.4, zorder=1)
    pts = tr.reshape(-1, 2)
    sc = ax.scatter(pts[:, 0], pts[:, 1], c=np.repeat(tt, tr.shape[1]), cmap=CMAP, s=1.5, zorder=2)
    ax.scatter(tr[-1, :, 0], tr[-1, :, 1], s=4, color="#fde725", edgecolor="k", lw=0.2, zorder=3)
    fig.colorbar(sc, ax=ax, label="t")
    ax.set(xlabel="$x_1$", ylabel="$x_2$", title="trajectories", aspect="equal")
    return fig


def plot_loss(losses: Sequence[float] | torch.Tensor, ax: Axes | None = None, label: str = "",
              logy: bool = True, smooth: int = 1, step: str = "step",
              title: str = "training loss") -> Figure:
    """Training loss per step (optionally a running mean over ``smooth`` steps), log scale.

    ``step`` names what one step is (the x-axis: "Adam step (minibatch of 256)", say) and
    ``title`` the curve; a running mean is said in the title.
    """
    fig, ax = _axes(ax)
    y = _np(torch.as_tensor(losses, dtype=torch.float64))
    smoothed = smooth > 1 and y.size >= smooth
    if smoothed:
        y = np.convolve(y, np.ones(smooth) / smooth, mode="valid")
    ax.plot(np.arange(y.size) + (smooth - 1 if smoothed else 0), y, lw=1, label=label or None)
    ax.set(xlabel=step, ylabel="training loss", yscale="log" if logy else "linear",
           title=title + (f" (running mean over {smooth} steps)" if smoothed else ""))
    if label:
        ax.legend(fontsize=8)
    return fig


def plot_loss_curves(curves: dict[str, Sequence[float]], ax: Axes | None = None,
                     fits: Sequence[tuple[int, float, float]] | None = None,
                     guarantee: float | None = None) -> Figure:
    """Several loss curves (label -> losses) on a log scale, coloured with viridis.

    ``fits``: per curve, (start, slope, intercept) of a line log L = intercept + slope t, drawn
    dotted from ``start`` on. ``guarantee``: draw, dashed grey, L_0 exp(-guarantee t) from the
    first curve's L_0 (the decay the kernel regime guarantees).
    """
    fig, ax = _axes(ax)
    colors = _colors(len(curves))
    for i, ((label, y), c) in enumerate(zip(curves.items(), colors, strict=True)):
        y = np.asarray(y, dtype=float)
        t = np.arange(len(y))
        ax.plot(t, y, lw=1.2, color=c, label=label)
        if fits is not None:
            start, slope, intercept = fits[i]
            ax.plot(t[start:], np.exp(intercept + slope * t[start:]), ":", lw=1.0, color=c)
    if guarantee is not None and curves:
        y0 = np.asarray(next(iter(curves.values())), dtype=float)
        t = np.arange(len(y0))
        ax.plot(t, y0[0] * np.exp(-guarantee * t), "--", lw=1.0, color="0.5",
                label="guaranteed decay")
    ax.set(xlabel="gradient-descent step", ylabel="training objective", yscale="log")
    ax.legend(fontsize=8)
    return fig


def _colors(n: int) -> list:
    from matplotlib import colormaps
    cmap = colormaps[CMAP]
    return [cmap(v) for v in np.linspace(0.0, 0.85, max(n, 1))][:n]


def plot_metric_vs(x: Sequence[float], values: Sequence[float], floors: Sequence[float] | None,
                   xlabel: str, ylabel: str = "$W_2$", ax: Axes | None = None,
                   logx: bool = True) -> Figure:
    """A metric versus a size (n or m), with its noise floor as a dashed line."""
    fig, ax = _axes(ax)
    ax.plot(x, values, "o-", color="#21918c", label=ylabel)
    if floors is not None:
        ax.plot(x, floors, "--", color="0.4", label="noise floor")
    ax.set(xlabel=xlabel, ylabel=ylabel, xscale="log" if logx else "linear")
    ax.legend(fontsize=8)
    return fig


def plot_drift(widths: Sequence[int], drifts: Sequence[float], slope: float | None = None,
               ax: Axes | None = None) -> Figure:
    """Relative weight drift ||W_T - W_0|| / ||W_0|| versus width m (log-log) with m^{-1/2}."""
    fig, ax = _axes(ax)
    w, d = np.asarray(widths, float), np.asarray(drifts, float)
    ax.loglog(w, d, "o-", color="#440154", label="measured" + (f" (slope {slope:.2f})"
                                                                if slope is not None else ""))
    ax.loglog(w, d[0] * np.sqrt(w[0] / w), "--", color="0.5", label="$m^{-1/2}$")
    ax.set(xlabel="width m", ylabel="relative weight drift")
    ax.legend(fontsize=8)
    return fig


def plot_lambda0(widths: Sequence[int] | None, lambdas: Sequence[float],
                 eigenvalues: np.ndarray | None = None, ax: Axes | None = None) -> Figure:
    """The spectrum of H (sorted eigenvalues, log scale) with lambda_0 marked."""
    fig, ax = _axes(ax)
    if eigenvalues is not None:
        ev = np.sort(np.asarray(eigenvalues))
        ax.semilogy(np.arange(1, ev.size + 1), np.clip(ev, 1e-16, None), color="#31688e")
        ax.axhline(ev[0], ls="--", color="0.4", label=f"$\\lambda_0$ = {ev[0]:.3g}")
        ax.set(xlabel="index", ylabel="eigenvalue of H")
    else:
        ax.plot(widths, lambdas, "o-", color="#31688e")
        ax.set(xlabel="width m", ylabel="$\\lambda_0$", xscale="log")
    ax.legend(fontsize=8) if eigenvalues is not None else None
    return fig


def plot_digits(images: torch.Tensor | np.ndarray, ax: Axes | None = None, rows: int = 6,
                cols: int = 10, title: str = "") -> Figure:
    """A grid of 8x8 digits; images of shape (N, 64) in [-1, 1] (clipped), grey scale."""
    fig, ax = _axes(ax, (cols * 0.6, rows * 0.6 + 0.4))
    im = np.clip(_np(images)[: rows * cols], -1, 1).reshape(-1, 8, 8)
    grid = np.full((rows * 9 + 1, cols * 9 + 1), -1.0)
    for k in range(im.shape[0]):
        r, c = divmod(k, cols)
        grid[1 + 9 * r:9 + 9 * r, 1 + 9 * c:9 + 9 * c] = im[k]
    ax.imshow(grid, cmap="gray_r", vmin=-1, vmax=1)
    ax.set(xticks=[], yticks=[], title=title)
    return fig


def plot_digits_by_class(images: torch.Tensor | np.ndarray, labels: torch.Tensor | np.ndarray,
                         per_class: int = 10, ax: Axes | None = None,
                         title: str = "") -> Figure:
    """8x8 digits one row per class: the first ``per_class`` images of each label.

    images of shape (N, 64) in [-1, 1], labels of shape (N,) in 0..K-1; rows with fewer
    images are left blank.
    """
    im, lab = _np(images), np.asarray(_np(labels)).astype(int).reshape(-1)
    classes = int(lab.max()) + 1 if lab.size else 0
    grid = np.full((classes * per_class, im.shape[1]), -1.0)
    for k in range(classes):
        rows = im[lab == k][:per_class]
        grid[k * per_class:k * per_class + rows.shape[0]] = rows
    fig = plot_digits(grid, ax=ax, rows=classes, cols=per_class, title=title)
    axis = fig.axes[0] if ax is None else ax
    axis.set(yticks=[4.5 + 9 * k for k in range(classes)], yticklabels=[str(k) for k in
                                                                       range(classes)])
    return fig
