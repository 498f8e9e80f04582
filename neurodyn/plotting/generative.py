"""Figure of generated population states beside held-out data."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from _runkit.notebook import notebook_figure

__all__ = ["plot_generated", "plot_generated_barcodes", "plot_method_table", "method_rows",
           "verdict_title", "plot_kept_verdict"]

_TITLES = {"held": "held-out data", "ambient": "(a) ambient flow",
           "riemannian": "(b) Riemannian flow", "relaxed": "(c) ambient + relaxation",
           "control": "control: shuffled data"}


def _role(name: str) -> str:
    """What a set is to the verdict (:mod:`neurodyn.generative.verdict`)."""
    from ..generative.verdict import JUDGED, MODEL_SHAPED

    if name == JUDGED:
        return "judged, as generated"
    if name in MODEL_SHAPED:
        return "shaped by the model's manifold, not judged"
    return {"held": "the reference", "control": "must not be the attractor"}.get(name, "")


def _title(name: str) -> str:
    return f"{_TITLES[name]}\n{_role(name)}"


def _data_word(value) -> str:
    return {True: "attractor", False: "no attractor"}.get(value, str(value))


def verdict_title(verdict: dict) -> str:
    """One line of a :class:`~neurodyn.generative.verdict.KeptVerdict` (its ``to_dict()``):
    kept or not, the data's own verdict, and (a)'s rate W2 over its floor.

    >>> verdict_title({"kept": False, "data_attractor": "unknown", "rate_w2_ratio": 1.1,
    ...                "w2_tolerance": 1.2}).split(";")[0]
    "attractor population: no (the data's own verdict: unknown)"
    """
    return (f"attractor population: {'yes' if verdict['kept'] else 'no'} (the data's own "
            f"verdict: {_data_word(verdict['data_attractor'])}); (a) as generated: rate W2 "
            f"{verdict['rate_w2_ratio']:.3g}x its floor (at most {verdict['w2_tolerance']:g}x)")


def plot_kept_verdict(comparison: dict) -> Figure:
    """The verdict of one comparison: each set's rate W2 over its floor (real states against
    the held-out ones, 1 by definition) against the tolerance, the judged set apart from the
    sets shaped by the model's manifold, with both conditions and the data's own verdict.

    Parameters
    ----------
    comparison : dict
        :meth:`~neurodyn.generative.compare.GenerationComparison.to_dict`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import textwrap

    v = comparison["verdict"]
    names = ["held", *comparison["methods"], "control"]
    ratios = [1.0, *(m["rate_w2_ratio"] for m in comparison["methods"].values()),
              comparison["control_rate_w2_ratio"]]
    colours = {"held": "0.6", v["judged"]: "tab:blue", "control": "tab:red"}
    fig = Figure(figsize=(9.5, 4.6), layout="constrained")
    ax, text = fig.subplots(1, 2, width_ratios=(1.3, 1))
    y = np.arange(len(names))[::-1]
    ax.barh(y, ratios, color=[colours.get(k, "0.85") for k in names],
            hatch=["//" if k in v["model_shaped"] else "" for k in names], edgecolor="0.3")
    ax.axvline(v["w2_tolerance"], ls="--", c="k", lw=1, label=f"tolerance {v['w2_tolerance']:g}x")
    ax.set_yticks(y, [f"{_TITLES[k]}\n{_role(k)}" for k in names], fontsize=8)
    for yi, r in zip(y, ratios, strict=True):
        ax.text(r, yi, f" {r:.3g}", va="center", fontsize=8)
    ax.set_xlabel("rate W2 to held-out states / floor (real states)")
    ax.set_xlim(0, 1.25 * max(max(ratios), v["w2_tolerance"]))
    ax.legend(fontsize=8, loc="upper right")
    text.axis("off")
    ok = {True: "yes", False: "NO"}
    lines = [f"attractor population: {'YES' if v['kept'] else 'NO'}", "",
             f"1. the data's own verdict is true: {ok[v['data_attractor'] is True]}",
             f"   ({_data_word(v['data_attractor'])}; {v['data_source']})",
             f"2. (a) as generated matches held-out: {ok[v['rate_w2_ratio'] <= v['w2_tolerance']]}",
             f"   rate W2 {v['rate_w2_ratio']:.3g}x floor", "",
             f"reported: Betti (a) {tuple(v['betti'])}, held-out {tuple(v['held_betti'])},",
             f"attractor {tuple(v['attractor_betti'])}"]
    lines += [f"{k}: rate W2 {m['rate_w2_ratio']:.3g}x, Betti {tuple(m['betti'])}"
              for k, m in v["model_shaped"].items()]
    lines += ["", *textwrap.wrap(v["reason"], 48)[:14]]
    text.text(0, 1, "\n".join(lines), va="top", ha="left", fontsize=8, family="monospace",
              transform=text.transAxes)
    return notebook_figure(fig)


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
        ax.set_title(_title(name), fontsize=10)
        ax.set_xlabel("PC 1 of held-out rates")
    np.atleast_1d(axes)[0].set_ylabel("PC 2")
    fig.colorbar(sc, ax=axes, label="decoded coordinate (rad)")
    return notebook_figure(fig)


def plot_generated_barcodes(homologies: dict, expected: tuple, title: str = "") -> Figure:
    """Barcodes of held-out and generated states side by side, one panel per set (every
    dimension stacked, the longest bars, the judge's long-bar threshold dashed), each titled
    with what it is to the verdict (judged, or shaped by the model's manifold) and its Betti
    numbers against the attractor's ``expected`` ones.

    Parameters
    ----------
    homologies : dict
        ``{name: Homology}`` (:func:`neurodyn.generative.metrics.state_homology`), names as in
        :func:`plot_generated`.
    expected : tuple of int
        The attractor's Betti numbers ((1, 1, 0) ring, (1, 2, 1) torus).
    title : str
        Drawn above the panels (:func:`verdict_title`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..analysis.topology import betti_numbers
    from .topology import plot_barcode

    names = [k for k in _TITLES if k in homologies]
    fig = Figure(figsize=(3.2 * len(names), 4.0), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(names)))
    for ax, name in zip(axes, names, strict=True):
        betti = tuple(int(b) for b in betti_numbers(homologies[name]))
        plot_barcode(homologies[name], ax=ax, max_bars=12)
        flag = "" if betti == tuple(expected) else " - not the attractor's"
        ax.set_title(f"{_title(name)}\nBetti {betti}{flag}", fontsize=9)
    for ax in axes[1:]:
        ax.set_ylabel("")
    if title:
        fig.suptitle(title, fontsize=10)
    return notebook_figure(fig)


_SHORT = {"ambient": "(a) ambient", "riemannian": "(b) Riemannian", "relaxed": "(c) relaxed"}


def method_rows(comparison: dict, equal_time: dict) -> list[dict]:
    """Rows of the methods' table: each method at its default training (equal flow
    evaluations) and, for (a) and (b), retrained to the CPU time of (c) (equal cost).

    Parameters
    ----------
    comparison : dict
        :meth:`~neurodyn.generative.compare.GenerationComparison.to_dict` of one comparison.
    equal_time : dict
        From :func:`neurodyn.generative.equal_time` on the same states.

    Returns
    -------
    list of dict
        ``method``, ``budget``, ``nfe``, ``network_evaluations``, ``train_steps`` (None where
        the default), ``cpu_seconds``, ``distance_ratio``, ``betti``, ``rate_w2_ratio``,
        ``w2_ratio``.
    """
    rows = []
    for name, m in comparison["methods"].items():
        c = comparison["cost"][name]
        rows.append({"method": _SHORT[name], "budget": "equal NFE", "nfe": c["nfe"],
                     "network_evaluations": c["network_evaluations"], "train_steps": None,
                     "cpu_seconds": c.get("cpu_seconds"), "distance_ratio": m["distance_ratio"],
                     "betti": tuple(m["betti"]), "rate_w2_ratio": m["rate_w2_ratio"],
                     "w2_ratio": m["w2_ratio"]})
    for name, e in equal_time.items():
        m = e["metrics"]
        rows.append({"method": _SHORT[name], "budget": "equal CPU time", "nfe": e["nfe"],
                     "network_evaluations": 0, "train_steps": e["train_steps"],
                     "cpu_seconds": e["cpu_seconds"], "distance_ratio": m["distance_ratio"],
                     "betti": tuple(m["betti"]), "rate_w2_ratio": m["rate_w2_ratio"],
                     "w2_ratio": m["w2_ratio"]})
    return rows


def plot_method_table(rows: list[dict], title: str = "") -> Figure:
    """The methods' table (:func:`method_rows`) drawn as a figure.

    Parameters
    ----------
    rows : list of dict
        From :func:`method_rows`.
    title : str
        Drawn above the table.

    Returns
    -------
    matplotlib.figure.Figure
    """
    head = ["method", "budget", "flow NFE", "network evals", "train steps", "CPU s",
            "distance / floor", "Betti", "rate W2 / floor", "W2 / floor"]
    cells = [[r["method"], r["budget"], str(r["nfe"]), str(r["network_evaluations"]),
              "default" if r["train_steps"] is None else str(r["train_steps"]),
              "" if r["cpu_seconds"] is None else f"{r['cpu_seconds']:.1f}",
              f"{r['distance_ratio']:.3g}", str(tuple(r["betti"])), f"{r['rate_w2_ratio']:.3g}",
              f"{r['w2_ratio']:.3g}"]
             for r in rows]
    fig = Figure(figsize=(11.5, 0.3 * (len(rows) + 1) + 0.5), layout="constrained")
    ax = fig.subplots()
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=head, cellLoc="center", bbox=(0, 0, 1, 1))
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.auto_set_column_width(list(range(len(head))))
    if title:
        ax.set_title(title, fontsize=10)
    return notebook_figure(fig)
