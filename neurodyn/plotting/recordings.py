"""Figures of a fit of recorded activity (:func:`neurodyn.inference.fit_activity`).

- :func:`plot_tuning`: each cell's tuning curve (points) with its fitted curve, and the shared
  profile;
- :func:`plot_decoded`: the decoded bump against the covariate over time, held out;
- :func:`plot_embedding`: the activity's gain-free cloud
  (:mod:`neurodyn.inference.verdict.topology`) on its two leading components, coloured by the
  heading (wake) or the decoded bump (sleep);
- :func:`plot_sleep`: the sleep-decoded trajectory beside its rolled control;
- :func:`plot_verdict`: every test with its statistic, threshold and status.

Each takes ``ax=None`` (or ``fig=None`` for several panels) and returns the figure.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from _runkit import BadInput
from _runkit.notebook import notebook_figure

from . import new_axes

__all__ = ["plot_tuning", "plot_decoded", "plot_embedding", "plot_sleep", "plot_verdict"]

#: status colours of the verdict panel
COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "inconclusive": "#9e9e9e"}


def _figure(fig, size):
    if fig is not None:
        return notebook_figure(fig, created=False)
    return notebook_figure(Figure(figsize=size, layout="constrained"))


def plot_tuning(fit, cells_shown: int = 8, fig: Figure | None = None) -> Figure:
    """Tuning curves of a ring fit: the binned rates (points) and each cell's fitted curve
    ``b_i + g_i p(c - theta_i)`` for ``cells_shown`` cells spread over the ring, and the
    shared profile ``p`` beside."""
    from ..inference.cells import profile_values

    if fit.geometry != "ring":
        raise BadInput("fit: plot_tuning draws a ring's tuning curves", param="fit")
    fig = _figure(fig, (9.5, 3.6))
    ax, bx = fig.subplots(1, 2, width_ratios=(1.6, 1))
    c = fit.cells
    order = np.argsort(c.preferred)
    shown = order[np.linspace(0, order.size - 1, min(cells_shown, order.size)).astype(int)]
    grid = np.linspace(0, 2 * np.pi, 361)
    for i in shown:
        line = ax.plot(np.degrees(c.centres), c.curves[i], ".", ms=3)[0]
        ax.plot(np.degrees(grid), c.baseline[i] + c.gain[i] * profile_values(
            c.profile, grid - c.preferred[i]), color=line.get_color(), lw=1.2)
    ax.set(xlabel="heading (deg)", ylabel="rate (Hz)", xlim=(0, 360),
           title=f"{len(shown)} of {c.gain.size} cells: binned rates and the fit")
    phi = np.linspace(-np.pi, np.pi, 361)
    bx.plot(np.degrees(phi), profile_values(c.profile, phi), color="k")
    bx.set(xlabel="angle from the preferred (deg)", ylabel="profile p (peak 1)",
           title="shared bump profile")
    return fig


def _angle_trace(ax, t, value, label, **kw):
    """Angles (deg) with the seam at 0/360 cut, so no line crosses the axis."""
    v = np.mod(np.degrees(value), 360)
    jump = np.r_[False, np.abs(np.diff(v)) > 180]
    ax.plot(t, np.where(jump, np.nan, v), label=label, **kw)


def plot_decoded(decoded, covariate, dt: float, seconds: float = 60.0, start: float = 0.0,
                 title: str = "held-out decoding", ax=None) -> Figure:
    """The decoded bump against the heading over ``seconds`` from ``start`` (ring; a torus
    shows its first phase), the seam at 0/360 cut.

    Parameters
    ----------
    decoded, covariate : ndarray, shape (T,) or (T, 2)
        Decoded bump and the covariate's angle or phases (rad).
    dt : float
        Bin width (s).
    seconds, start : float
        The stretch drawn (s).
    title : str
        The axes' title.
    ax : Axes or None
        Draw into it.
    """
    fig, ax = new_axes(ax, (8.0, 3.2))
    lo = int(start / dt)
    hi = min(decoded.shape[0], lo + int(seconds / dt))
    t = np.arange(lo, hi) * dt
    d, c = decoded[lo:hi], covariate[lo:hi]
    if d.ndim == 2:
        d, c = d[:, 0], c[:, 0]
    known = bool(np.isfinite(covariate).any())
    if known:
        _angle_trace(ax, t, c, "covariate", color="k", lw=2.2, alpha=0.45)
    _angle_trace(ax, t, d, "decoded", color="tab:red", lw=0.8)
    err = ""
    if known:
        ok = np.isfinite(covariate) & np.isfinite(decoded)
        miss = np.abs(np.angle(np.exp(1j * (decoded[ok] - covariate[ok]))))
        err = f": median error {np.degrees(np.median(miss)):.1f} deg"
    ax.set(xlabel="time (s)", ylabel="angle (deg)", ylim=(0, 360),
           title=f"{title}{err} over {decoded.shape[0] * dt:.0f} s")
    ax.legend(loc="upper right", fontsize=8)
    return fig


def _cloud_2d(counts, dt, geometry, colour, samples=3000):
    from ..inference.verdict.topology import activity_cloud

    y = activity_cloud(counts, dt, geometry, samples=samples, density=1.0, rounds=1)
    idx = np.linspace(0, counts.shape[0] - 1, y.shape[0]).astype(int)
    return y[:, :2], None if colour is None else colour[idx]


def plot_embedding(counts, dt: float, colour, sleep=None, sleep_colour=None,
                   geometry: str = "ring", fig: Figure | None = None) -> Figure:
    """The activity's gain-free cloud on its two leading components, wake (coloured by
    ``colour``, the heading) and, when given, sleep (coloured by its decoded bump).

    Parameters
    ----------
    counts : ndarray, shape (T, cells)
        Wake counts.
    dt : float
        Bin width (s).
    colour : ndarray, shape (T,) or None
        Angle per bin (rad) colouring the wake cloud.
    sleep : ndarray, shape (T_s, cells) or None
        Sleep counts.
    sleep_colour : ndarray, shape (T_s,) or None
        Angle per sleep bin (NaN: not decoded).
    geometry : {'ring', 'torus'}
        The cloud's preparation.
    fig : Figure or None
        Draw into it.
    """
    panels = 1 if sleep is None else 2
    fig = _figure(fig, (4.2 * panels + 0.8, 4.0))
    axes = np.atleast_1d(fig.subplots(1, panels))
    sets = [("wake, coloured by the heading", counts, colour)]
    if sleep is not None:
        sets.append(("sleep, coloured by the decoded bump", sleep, sleep_colour))
    sc = None
    for ax, (name, x, c) in zip(axes, sets, strict=True):
        y, col = _cloud_2d(x, dt, geometry, c)
        if col is None:
            ax.scatter(y[:, 0], y[:, 1], s=2, color="0.3", alpha=0.5)
        else:
            ok = np.isfinite(col)
            ax.scatter(y[~ok, 0], y[~ok, 1], s=2, color="0.8", alpha=0.4)
            sc = ax.scatter(y[ok, 0], y[ok, 1], s=2, c=np.mod(col[ok], 2 * np.pi),
                            cmap="twilight", vmin=0, vmax=2 * np.pi, alpha=0.7)
        ax.set(xlabel="component 1", ylabel="component 2", title=name, aspect="equal")
    if sc is not None:
        bar = fig.colorbar(sc, ax=list(axes), shrink=0.8)
        bar.set_ticks([0, np.pi, 2 * np.pi])
        bar.set_ticklabels(["0", "180", "360 deg"])
    return fig


def plot_sleep(sleeping, seconds: float = 20.0, fig: Figure | None = None) -> Figure:
    """Sleep's decoded bump over ``seconds`` beside the rolled control's (each cell rolled
    in time), one point per window with at least two spikes.

    Parameters
    ----------
    sleeping : SleepDecoding
        From :func:`neurodyn.inference.verdict.sleep.sleep_decoding`.
    seconds : float
        The stretch drawn (s).
    fig : Figure or None
        Draw into it.
    """
    fig = _figure(fig, (9.5, 3.4))
    ax, bx = fig.subplots(1, 2, sharey=True)
    w = sleeping.window_s
    for a, series, name, step in ((ax, sleeping.decoded[0], "sleep", sleeping.step_deg),
                                  (bx, sleeping.rolled_decoded, "rolled control",
                                   sleeping.rolled_step_deg)):
        n = min(series.shape[0], int(seconds / w))
        v = series[:n] if series.ndim == 1 else series[:n, 0]
        t = np.arange(n) * w
        a.plot(t, np.degrees(np.mod(v, 2 * np.pi)), ".", ms=3, color="tab:purple")
        a.set(xlabel="time (s)", ylim=(0, 360), title=f"{name}: median step {step:.0f} deg")
    ax.set_ylabel(f"decoded bump (deg), {w * 1000:.0f} ms windows")
    return fig


def _cell_text(x) -> str:
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(_cell_text(v) for v in x) + ")"
    if isinstance(x, float):
        return "nan" if math.isnan(x) else f"{x:.3g}"
    return str(x)


def plot_verdict(verdict, fig: Figure | None = None) -> Figure:
    """The verdict as a table: each test, its role, statistic, threshold, p-value or interval
    and status (coloured), under the verdict and its reason."""
    rows = list(verdict.tests.values())
    fig = _figure(fig, (9.5, 0.9 + 0.42 * (len(rows) + 1)))
    ax = fig.add_subplot()
    ax.axis("off")
    cells = []
    for t in rows:
        extra = (f"p = {t.p_value:.2g}" if not math.isnan(t.p_value) else
                 f"[{t.interval[0]:.3g}, {t.interval[1]:.3g}]" if t.interval else "")
        cells.append([t.name, t.role, _cell_text(t.statistic), _cell_text(t.threshold), extra,
                      t.status])
    table = ax.table(cellText=cells, colLabels=["test", "role", "statistic", "threshold",
                                                "p / interval", "status"],
                     loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8.5)
    for i, t in enumerate(rows, start=1):
        table[i, 5].set_text_props(color="white", weight="bold")
        table[i, 5].set_facecolor(COLOURS[t.status])
    reason = verdict.reason if len(verdict.reason) < 110 else verdict.reason[:107] + "..."
    ax.set_title(f"attractor: {verdict.attractor}\n{reason}", fontsize=9)
    return fig
