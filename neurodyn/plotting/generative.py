"""Figure of generated population states beside held-out data."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from _runkit.cli import notebook_figure

__all__ = ["plot_generated"]

_TITLES = {"held": "held-out data", "ambient": "(a) ambient flow",
           "riemannian": "(b) Riemannian flow", "relaxed": "(c) ambient + relaxation",
           "control": "control: shuffled data"}


def plot_generated(samples: dict, phases: dict) -> Figure:
    """States projected on the two leading principal components of the held-out data, one
    panel per set, coloured by each state's decoded (first) coordinate.

    Parameters
    ----------
    samples : dict
        ``{name: rates (n, N)}`` with ``"held"`` among the names.
    phases : dict
        ``{name: decoded coordinates (n, dim)}``, radians.

    Returns
    -------
    matplotlib.figure.Figure
    """
    held = samples["held"].to(torch.float64).numpy()
    mean = held.mean(0)
    _, _, vt = np.linalg.svd(held - mean, full_matrices=False)
    names = [k for k in _TITLES if k in samples]
    fig = Figure(figsize=(3.0 * len(names), 3.2), layout="constrained")
    axes = fig.subplots(1, len(names), sharex=True, sharey=True)
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        xy = (samples[name].to(torch.float64).numpy() - mean) @ vt[:2].T
        sc = ax.scatter(xy[:, 0], xy[:, 1], s=4, c=phases[name][:, 0].numpy(), cmap="hsv",
                        vmin=0, vmax=2 * np.pi)
        ax.set_title(_TITLES[name], fontsize=10)
        ax.set_xlabel("PC 1 of held-out rates")
    np.atleast_1d(axes)[0].set_ylabel("PC 2")
    fig.colorbar(sc, ax=axes, label="decoded coordinate (rad)")
    return notebook_figure(fig)
