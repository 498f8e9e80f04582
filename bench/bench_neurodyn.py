"""Speed of the ring attractor, measured side by side in one run and reported as ratios.

1. 1,024 trajectories of N = 128 for 1,000 RK4 steps (target: <= 10 s), in float32 and
   float64, against the same network with its interaction as a dense matrix.
2. The learned Fourier energy's gradient at N = 4,096 against the dense-matrix gradient of the
   identical quadratic interaction (target: >= 10x faster).

Usage: python bench/bench_neurodyn.py [--out DIR] [--threads T] [--quick]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from _runkit.timing import timed
from neurodyn.activation import Logistic
from neurodyn.dynamics.perturbations import perturb
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import FourierQuadraticEnergy, LearnedFourierEnergy, QuadraticEnergy
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.geometry.populations import Ring
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork


def _best(fn, repeat):
    return min(timed(fn)[1].wall_s for _ in range(repeat))


def bench_simulation(batch: int, steps: int, repeat: int) -> dict:
    net = fit(FitConfig(n=128, steps=200, seed=0)).network
    gen = torch.Generator().manual_seed(0)
    u0 = perturb(net.manifold, net.geometry.random_phase(batch, gen), "noise", 0.3, gen)
    dense = HopfieldNetwork(net.geometry, net.activation,
                            QuadraticEnergy(net.geometry, -net.interaction_hessian(
                                net.manifold.u0).detach()), net.bias.detach(), net.tau)

    def run(network, dtype):
        with torch.no_grad():
            simulate(network, u0, steps * 0.1, 0.1, method="rk4", save_every=steps,
                     diagnostics=False, dtype=dtype)

    out = {"batch": batch, "n": 128, "rk4_steps": steps, "target_seconds": 10.0}
    for name, dtype in (("float32", torch.float32), ("float64", torch.float64)):
        fourier = _best(lambda dtype=dtype: run(net, dtype), repeat)
        dense_s = _best(lambda dtype=dtype: run(dense, dtype), repeat)
        out[name] = {"seconds": fourier, "dense_seconds": dense_s,
                     "target_over_measured": 10.0 / fourier,
                     "dense_over_fourier": dense_s / fourier, "meets_target": fourier <= 10.0}
    return out


def bench_gradient(n: int, batch: int, repeat: int) -> dict:
    """Learned Fourier gradient vs the dense N x N matrix product of a Hopfield network.

    The dense baseline holds the circulant of the Fourier construction; the spectral gradient of
    that same quadratic energy is checked against it (``max_abs_difference``), and the learned
    energy (bandwidth 4, degree 3, anchored at the target) is timed on the same rates.
    """
    g = Ring(n)
    m = TargetManifold.bump(g, Logistic())
    w = m.fourier_construction()
    spectral = FourierQuadraticEnergy(g, w)
    dense = QuadraticEnergy(g, spectral.dense())
    learned = LearnedFourierEnergy(g, bandwidth=4, degree=3, scale=g.power(m.r_star(
        torch.zeros(1, dtype=torch.float64))).clamp(min=1e-6))
    learned.anchor(g.power(m.r_star(torch.zeros(1, dtype=torch.float64))), 0.5 * w)
    r = torch.rand(batch, n, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        err = float((spectral.grad(r) - dense.grad(r)).abs().max())
        t_learned = _best(lambda: learned.grad(r), repeat)
        t_spectral = _best(lambda: spectral.grad(r), repeat)
        t_dense = _best(lambda: dense.grad(r), repeat)
    return {"n": n, "batch": batch, "learned_seconds": t_learned,
            "fourier_quadratic_seconds": t_spectral, "dense_seconds": t_dense,
            "speedup": t_dense / t_learned, "max_abs_difference": err,
            "meets_target": t_dense / t_learned >= 10.0}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (1 is fastest at these sizes on a shared 2-core machine)")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.quick:
        result = {"simulation": bench_simulation(64, 50, 1), "gradient": bench_gradient(512, 8, 3)}
    else:
        result = {"simulation": bench_simulation(1024, 1000, 1),
                  "gradient": bench_gradient(4096, 32, 5)}
    result["threads"] = args.threads
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_neurodyn.json").write_text(text + "\n")
    return result


if __name__ == "__main__":
    main()
