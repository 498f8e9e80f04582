"""The figures of the flows runs, built from their results (no files written here).

Each function returns ``{file name: Figure}``; :mod:`flows.runs.run` and
:mod:`flows.runs.experiments` write them into the run directory.
"""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from ..runs.measure import SamplesExperiment, WidthExperiment
from .figures import (
    plot_digits,
    plot_digits_by_class,
    plot_drift,
    plot_lambda0,
    plot_loss,
    plot_loss_curves,
    plot_metric_vs,
    plot_samples,
    plot_trajectories,
)

__all__ = ["training_figures", "class_figures", "width_figures", "samples_figures"]


def training_figures(losses: torch.Tensor, samples: torch.Tensor, heldout: torch.Tensor,
                     trajectory: tuple[torch.Tensor, torch.Tensor] | None = None,
                     step: str = "step") -> dict[str, Figure]:
    """loss.png; samples.png (and data.png for 8x8 digits); trajectories.png when given.

    Parameters
    ----------
    losses : torch.Tensor, shape (steps,)
    samples, heldout : torch.Tensor, shapes (n, d)
    trajectory : (states of shape (T, N, 2), times of shape (T,)), optional
    step : str
        What one training step is (the loss plot's x-axis).
    """
    steps = losses.shape[0]
    figs = {"loss.png": plot_loss(losses, smooth=max(1, steps // 200), step=step,
                                  title="flow-matching loss")}
    d = heldout.shape[1]
    if d == 64:
        figs["samples.png"] = plot_digits(samples, title=f"generated digits after {steps} steps")
        figs["data.png"] = plot_digits(heldout, title="held-out digits")
    elif d >= 2:
        figs["samples.png"] = plot_samples(samples[:, :2], heldout[:, :2],
                                           title=f"{samples.shape[0]} samples after {steps} "
                                                 "steps over held-out data" +
                                                 (" (first 2 coordinates)" if d > 2 else ""))
    if trajectory is not None:
        figs["trajectories.png"] = plot_trajectories(*trajectory)
    return figs


def width_figures(res: WidthExperiment) -> dict[str, Figure]:
    """loss_curves.png, drift_vs_width.png, lambda0.png and w2_vs_width.png."""
    return {
        "loss_curves.png": plot_loss_curves({f"m={m}": res.losses[m] for m in res.widths},
                                            fits=res.fits, guarantee=res.guaranteed_log_rate),
        "drift_vs_width.png": plot_drift(res.widths, res.drift, res.drift_slope),
        "lambda0.png": plot_lambda0(None, [], eigenvalues=res.eigenvalues),
        "w2_vs_width.png": plot_metric_vs(res.widths, res.w2, res.w2_floor, "width m"),
    }


def samples_figures(res: SamplesExperiment) -> dict[str, Figure]:
    """gap_vs_n.png (the raw gap, its floor and the corrected gap) and w2_vs_n.png."""
    if res.gap_corrected is None:
        gap = plot_metric_vs(res.ns, res.generalization_gap, None, "training points n",
                             "generalization gap (raw: no closed-form floor for these data)")
    else:
        gap = plot_metric_vs(res.ns, res.gap_corrected, res.gap_floor, "training points n",
                             "gap - floor (excess test - excess train)")
        gap.axes[0].plot(res.ns, res.generalization_gap, "s:", color="#fde725",
                         label="raw gap (test - train objective)")
        gap.axes[0].legend(fontsize=8)
    w2 = plot_metric_vs(res.ns, res.w2, res.w2_floor, "training points n")
    if res.w2_floor_std is not None:
        lo = [f - s for f, s in zip(res.w2_floor, res.w2_floor_std, strict=True)]
        hi = [f + s for f, s in zip(res.w2_floor, res.w2_floor_std, strict=True)]
        w2.axes[0].fill_between(res.ns, lo, hi, color="0.8", label="floor +- std")
        w2.axes[0].legend(fontsize=8)
    return {"gap_vs_n.png": gap, "w2_vs_n.png": w2}


def class_figures(samples: torch.Tensor, labels: torch.Tensor, guidance: float
                  ) -> dict[str, Figure]:
    """samples_by_class.png: generated 8x8 digits by class (a class-conditional digits run).

    Parameters
    ----------
    samples : torch.Tensor, shape (n, 64)
    labels : torch.Tensor, shape (n,)
        The class of each sample.
    guidance : float
        The guidance scale they were drawn at (in the title).
    """
    return {"samples_by_class.png": plot_digits_by_class(
        samples, labels, title=f"generated digits by class (guidance {guidance:g})")}
