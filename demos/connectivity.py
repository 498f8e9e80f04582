"""Connectivity: the learned energies induce local excitation and surround inhibition.

The effective connectivity is ``W_eff = -d^2 F / dr^2`` at the manifold, averaged along
diagonals into a profile ``w(delta)``: positive near zero, negative further out, with one zero
crossing. Drawn for the ring and, on the sheet's own geometry, for the hex torus.

    python demos/connectivity.py --out results/connectivity [--quick]
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _models import attractor_configs, cache_dir, demo_parser, fitted  # noqa: E402

from neurodyn.analysis.diagnostics import connectivity_profile
from neurodyn.io import write_json
from neurodyn.plotting import plot_connectivity, save_figure
from neurodyn.plotting.gridcells import plot_connectivity_sheet


def main(argv: list[str] | None = None) -> dict:
    """Run the demo; returns the profile numbers for ring and torus."""
    p = demo_parser(__doc__, "connectivity")
    p.add_argument("--torus-n", type=int, default=16)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    configs = attractor_configs(args.quick, args.seed, args.torus_n)
    metrics = {}
    for name, cfg in configs.items():
        net, _ = fitted(cfg, cache_dir(args.cache, args.out))
        prof = connectivity_profile(net)
        fig = plot_connectivity(prof)
        fig.axes[0].set_title(f"{name}: learned connectivity $-\\nabla^2 F$")
        save_figure(fig, args.out / f"{name}_profile.png")
        crossings = [z for z in prof.zero_crossings() if 0 < z < math.pi]
        metrics[name] = {"w0": prof.at_zero, "min_beyond_pi_over_3": prof.min_beyond(math.pi / 3),
                         "zero_crossings": crossings,
                         "local_excitation_surround_inhibition":
                             prof.at_zero > 0 and prof.min_beyond(math.pi / 3) < 0}
        if name == "torus":
            fig = plot_connectivity_sheet(prof.kernel.numpy(), net.geometry.lattice)
            save_figure(fig, args.out / "torus_sheet.png")
    metrics["seconds"] = time.perf_counter() - start
    write_json(metrics, args.out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
