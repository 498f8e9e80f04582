"""Connectivity as it is: a state-dependent effective connectivity, and the best fixed
circulant network, whose profile shows local excitation and surround inhibition.

``W_eff = -d^2 F / dr^2`` at a manifold point is reported by its rank and singular spectrum:
for the exact SEAL solution it is a diagonal plus a rank-one (ring) or rank-two (torus) matrix
built from the tangents, which rotates with the bump, so its diagonal average (the tangent's
autocorrelation) is no evidence of a connectivity profile. The "local excitation, surround
inhibition" claim is judged on the fixed symmetric circulant ``W`` that best reproduces the
recurrent input on states on and near the manifold (least squares), with its errors on held-out
states. Drawn for the ring and, on the sheet's own geometry (axes at 120 degrees), for the hex
torus.

    python demos/connectivity.py --out results/connectivity [--quick]
"""

from __future__ import annotations

import math

import torch
from _models import attractor_configs, cache_dir, demo_parser, fitted
from matplotlib.figure import Figure

from _runkit.timing import Stopwatch
from neurodyn.analysis.connectivity import (
    EffectiveConnectivity,
    effective_connectivity,
    fit_circulant,
    shell_spread,
)
from neurodyn.io import write_json
from neurodyn.plotting import plot_connectivity, save_figure
from neurodyn.plotting.gridcells import plot_connectivity_sheet


def plot_singular_values(eff: EffectiveConnectivity, name: str) -> Figure:
    """The largest singular values of ``W_eff`` at one manifold point (log scale)."""
    fig = Figure(figsize=(5.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    sv = eff.singular_values
    ax.semilogy(range(1, len(sv) + 1), sv, "o-", color="tab:purple")
    ax.set_xlabel("singular value index (largest first)")
    ax.set_ylabel("singular value of $W_\\mathrm{eff} = -\\nabla^2 F$")
    ax.set_title(f"{name}: effective connectivity at one state\nrank {eff.rank} "
                 f"(rtol {eff.rtol:g}), top share {eff.top_share:.3f}", fontsize="small")
    return fig


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns the fixed circulant's profile and the effective connectivity's
    rank and spectrum for ring and torus."""
    p = demo_parser(__doc__, "connectivity")
    p.add_argument("--torus-n", type=int, default=16)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    args.out.mkdir(parents=True, exist_ok=True)
    configs = attractor_configs(args.quick, args.seed, args.torus_n)
    metrics = {}
    for name, cfg in configs.items():
        net, _ = fitted(cfg, cache_dir(args.cache, args.out))
        eff = effective_connectivity(net)
        fixed = fit_circulant(net, seed=args.seed)
        fig = plot_connectivity(fixed)
        fig.axes[0].set_title(f"{name}: best fixed circulant W (field error "
                              f"{fixed.field_error:.2f})", fontsize="small")
        save_figure(fig, args.out / f"{name}_profile.png")
        save_figure(plot_singular_values(eff, name), args.out / f"{name}_effective.png")
        crossings = [z for z in fixed.zero_crossings if 0 < z < math.pi]
        metrics[name] = {"w0": fixed.w0, "min_beyond_pi_over_3": fixed.min_far,
                         "zero_crossings": crossings,
                         "local_excitation_surround_inhibition":
                             fixed.w0 > 0 and fixed.min_far < 0,
                         "fixed_relative_error": fixed.relative_error,
                         "fixed_field_error": fixed.field_error,
                         "shell_spread": shell_spread(fixed.profile.kernel, net.geometry),
                         "effective": eff.to_dict()}
        if name == "torus":
            fig = plot_connectivity_sheet(fixed.profile.kernel.numpy(), net.geometry.lattice,
                                          label="fixed circulant weight $w(\\delta)$")
            save_figure(fig, args.out / "torus_sheet.png")
    metrics["seconds"] = clock.wall_s
    write_json(metrics, args.out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
