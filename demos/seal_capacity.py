"""Capacity of the learned-template family: error against the number of learned parameters.

For von Mises (K = 5), flat-top (W = 0.6) and asymmetric (S = 0.5) target profiles on the ring
(N = 128, kappa = 2): the template family fitted at increasing capacity (harmonics per axis),
measured by the worst normal-eigenvalue error and the worst restoring-field error on held-out
perturbations of relative size 0.03-0.3; the ablation with the learned template zeroed; the
per-mode SEAL family (family seal) on the same targets as the control.

    python demos/seal_capacity.py --out results/seal_capacity [--quick]
"""

from __future__ import annotations

import torch
from _models import demo_parser, finish

from _runkit.timing import Stopwatch
from neurodyn.experiments.capacity import capacity_study
from neurodyn.fitting.config import FitConfig
from neurodyn.plotting import save_figure

PROFILES = ("von-mises:5", "flat-top:0.6", "asymmetric:0.5")


def plot(result, kappa: float):
    """Field error (log) against learned parameters, per profile: fitted, zeroed template, and
    the seal family's level."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colours = dict(zip(PROFILES, ("C0", "C1", "C2"), strict=True))
    for prof, col in colours.items():
        rows = sorted((r for r in result.rows if r["profile"] == prof),
                      key=lambda r: r["parameters"])
        if not rows:
            continue
        p = [r["parameters"] for r in rows]
        axes[0].semilogy(p, [r["field_error"] for r in rows], "o-", color=col, label=prof)
        axes[0].semilogy(p, [r["ablated_field_error"] for r in rows], "x:", color=col,
                         label=f"{prof}, template zeroed")
        axes[1].semilogy(p, [max(r["spectrum_error"], 1e-16) for r in rows], "o-", color=col,
                         label=prof)
        for c in result.control:
            if c["profile"] == prof:
                axes[0].axhline(c["field_error"], color=col, ls="--", lw=0.8)
                axes[1].axhline(max(c["spectrum_error"], 1e-16), color=col, ls="--", lw=0.8)
    axes[0].set(xlabel="learned parameters", ylabel="worst field error (0.03-0.3)",
                title=f"restoring field, kappa = {kappa:g} (dashed: family seal)")
    axes[1].set(xlabel="learned parameters", ylabel="worst |lambda tau + kappa| / kappa",
                title="normal spectrum (dashed: family seal)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> dict:
    """Run the study; returns the metrics written to OUT/metrics.json."""
    args = demo_parser(__doc__, "seal_capacity", cache=False).parse_args(argv)
    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    clock = Stopwatch()
    kappa = 2.0
    n = 32 if args.quick else 128
    harmonics = (2, 4) if args.quick else (2, 4, 6, 8)
    res = capacity_study(FitConfig(n=n, kappa=kappa, seed=args.seed), PROFILES, harmonics)
    save_figure(plot(res, kappa), out / "capacity.png")
    steps = {}
    for prof in PROFILES:
        curve = res.curve(prof)
        steps[prof] = [a[1] / b[1] for a, b in zip(curve, curve[1:], strict=False)]
    summary = {f"{prof.split(':')[0].replace('-', '_')}_fall_per_step": steps[prof]
               for prof in PROFILES}
    summary["ablation_min_ratio"] = min(r["ablated_field_error"] / r["field_error"]
                                        for r in res.rows)
    summary.update({f"control_{c['profile'].split(':')[0].replace('-', '_')}_spectrum_error":
                    c["spectrum_error"] for c in res.control})
    metrics = {"n": n, "kappa": kappa, "rows": res.rows, "control": res.control,
               "summary": summary,
               "field_error_fall_per_step": steps,
               "ablation_ratio": {r["profile"] + f" K={r['harmonics']}":
                                  r["ablated_field_error"] / r["field_error"] for r in res.rows},
               "figures": ["capacity.png"], "wall_time_s": clock.wall_s}
    return finish(metrics, out)


if __name__ == "__main__":
    main()
