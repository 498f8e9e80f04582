"""Learned energy vs the Fourier construction vs a hand-wired classic ring network.

Same task, same metrics, side by side: the Jacobian spectrum at each network's own bump,
restoration from the four perturbation kinds (fraction within 1% of the manifold at 20 tau and
the slowest decay rate), path integration under an Ornstein-Uhlenbeck velocity, and the
profile of the best fixed circulant connectivity of each network
(:func:`neurodyn.analysis.connectivity.fit_circulant`: the network's own ``W`` for the circulant
ones, a least-squares approximation with its field error for SEAL, whose effective connectivity
depends on the state).

- learned: SEAL's fitted Fourier energy (normal attraction at rate kappa = 1/tau);
- Fourier construction: the circulant quadratic energy solved mode-wise from the target bump;
- classic: a circulant Hopfield network ``W(delta) = (J0 + 2 J1 cos delta)/N`` with hand-picked
  ``J0 = -6, J1 = 9``; its bump is whatever the dynamics settle into from the target bump.

Every network gets transport gains fitted to its own bump.

    python demos/energy_comparison.py --out results/energy_comparison [--quick]
"""

from __future__ import annotations

import numpy as np
import torch
from _models import cache_dir, demo_parser, fitted

from _runkit.timing import Stopwatch
from neurodyn.analysis.bump_motion import path_integration
from neurodyn.analysis.connectivity import fit_circulant
from neurodyn.analysis.diagnostics import (
    jacobian_spectrum,
    summarize_spectrum,
)
from neurodyn.analysis.recovery import restoration
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import FourierQuadraticEnergy, QuadraticEnergy
from neurodyn.fitting.core import FitConfig
from neurodyn.io import write_json
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork, Transport
from neurodyn.plotting import new_axes, save_figure


def own_bump(network: HopfieldNetwork, start: torch.Tensor, duration: float = 200.0):
    """Relax ``start`` and return the network with the manifold and transport of its bump."""
    tr = simulate(network, start.unsqueeze(0), duration, 0.1, save_every=2000,
                  diagnostics=False)
    g = network.geometry
    u = tr.u[-1, 0]
    psi = g.decode(network.rates(u))
    u0 = g.shift(u, -psi)  # centre the bump at 0
    manifold = TargetManifold(g, network.activation, u0)
    transport = Transport.fit(g, u0, network.tau, network.activation)
    return HopfieldNetwork(g, network.activation, network.energy_fn, network.bias.detach(),
                           network.tau, transport, manifold)


def main(argv: list[str] | None = None) -> dict:
    """Run the comparison; returns metrics per network."""
    p = demo_parser(__doc__, "energy_comparison")
    p.add_argument("--count", type=int, default=64, help="states per perturbation kind")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    clock = Stopwatch()
    n = 32 if args.quick else 128
    cfg = FitConfig(n=n, steps=2 if args.quick else 8, seed=args.seed)
    learned, _ = fitted(cfg, cache_dir(args.cache, args.out))
    g, act, target = learned.geometry, learned.activation, learned.manifold
    fourier = HopfieldNetwork(g, act, FourierQuadraticEnergy(g, target.fourier_construction()),
                              0.0, 1.0)
    spectrum = torch.zeros(g.spectral_shape, dtype=torch.float64)
    spectrum[0], spectrum[1] = -6.0, 9.0
    classic = HopfieldNetwork(g, act, QuadraticEnergy(g, FourierQuadraticEnergy(
        g, spectrum).dense()), 0.0, 1.0)
    nets = {"learned (SEAL)": learned,
            "Fourier construction": own_bump(fourier, target.u0),
            "classic hand-wired": own_bump(classic, target.u0)}
    count = 6 if args.quick else args.count
    args.out.mkdir(parents=True, exist_ok=True)
    metrics = {}
    fig_s, ax_s = new_axes(figsize=(6.0, 4.0))
    fig_c, ax_c = new_axes(figsize=(6.0, 4.0))
    for name, net in nets.items():
        ev = jacobian_spectrum(net)
        s = summarize_spectrum(ev)
        rest = restoration(net, count=count, seed=args.seed).to_dict()
        pi = path_integration(net, "ou:0.2:10:0.5", runs=8 if args.quick else 32,
                              duration=50.0 if args.quick else 200.0, seed=args.seed).to_dict()
        fixed = fit_circulant(net, seed=args.seed)
        prof = fixed.profile
        kinds = ("noise", "shape", "amplitude", "lesion")
        metrics[name] = {
            "neutral_eigenvalues": s.n_zero, "slowest_decay": s.slowest_nonzero,
            "restored_fraction": {k: rest[k]["fraction_within"] for k in kinds},
            "final_distance_max": max(rest[k]["final_max"] for k in kinds),
            "energy_ok": all(rest[k]["energy"]["ok"] for k in kinds),
            "path_rms_final": pi["rms_final"],
            "w0": prof.at_zero, "zero_crossings": prof.zero_crossings(),
            "fixed_field_error": fixed.field_error,
        }
        ax_s.plot(np.arange(12), ev[:12].numpy(), "o-", ms=3, label=name)
        ax_c.plot(prof.distance.numpy(), prof.weight.numpy() / abs(prof.at_zero), label=name)
    ax_s.axhline(0, color="0.5", lw=0.8)
    ax_s.set_xlabel("eigenvalue index (largest first)")
    ax_s.set_ylabel("Jacobian eigenvalue (1/τ)")
    ax_s.set_title("slowest modes at each network's bump")
    ax_s.legend(frameon=False)
    ax_c.axhline(0, color="0.5", lw=0.8)
    ax_c.set_xlabel("distance between preferred angles (rad)")
    ax_c.set_ylabel("fixed circulant weight / w(0)")
    ax_c.set_title("best fixed circulant W of each network")
    ax_c.legend(frameon=False)
    save_figure(fig_s, args.out / "spectra.png")
    save_figure(fig_c, args.out / "connectivity.png")
    metrics["seconds"] = clock.wall_s
    write_json(metrics, args.out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
