"""SEAL learning matters: kappa sweep (ring, torus), capacity sweep and ablation.

- kappa sweep: the normal spectrum and simulated decay of small perturbations against the
  prescribed rate, for the full family and for the power spectrum alone (the control, whose
  phase directions stay at the leak rate 1/tau whatever kappa it is fitted to);
- capacity sweep: which parts of the family are needed for the spectrum, the restoring field
  and the energy (ring, kappa = 2);
- ablation: Fourier construction, a hand-wired classic CANN, spectral SEAL and full SEAL on the
  same perturbations at prescribed kappa = 2;
- fitted MLP energies (ring, kappa 0.5 and 2) with the MLP or the learned leak coefficient
  removed;
- the spectral variable on the hex torus: polynomials in |z_k| against |z_k|^2, per
  perturbation kind (shrunken and grown bumps).

    python demos/seal_learning.py --out results/seal_learning [--quick]
"""

from __future__ import annotations

import torch
from _models import demo_parser

from _runkit.timing import Stopwatch
from neurodyn.analysis.diagnostics import jacobian_spectrum
from neurodyn.experiments.seal import (
    CAPACITY,
    ablation,
    capacity_sweep,
    kappa_sweep,
    mlp_sweep,
    variable_control,
)
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.io import write_json
from neurodyn.plotting import save_figure
from neurodyn.plotting.seal import (
    plot_ablation,
    plot_capacity,
    plot_kappa_sweep,
    plot_normal_spectra,
)


def _summary(sweep) -> dict:
    rows = sweep.families["seal"].values()
    return {"worst_spectrum_relative": max(r.worst_relative for r in rows),
            "worst_decay_relative": max(r.decay_worst_relative for r in rows),
            "worst_field_error": max(r.field_error for r in rows),
            "worst_energy_error": max(r.energy_error for r in rows),
            "slowest_fit_seconds": max(r.fit_seconds for r in rows),
            "spectral_only_max_eigenvalue": {k: r.spectrum_max
                                             for k, r in sweep.families["spectral"].items()}}


def main(argv: list[str] | None = None) -> dict:
    """Run the experiments; returns their metrics (typed results, as written to
    OUT/metrics.json by their ``to_dict()``)."""
    p = demo_parser(__doc__, "seal_learning", cache=False)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    clock = Stopwatch()
    n_ring = 32 if args.quick else 128
    n_torus = (12, 12) if args.quick else (32, 32)
    ring_k = (2.0,) if args.quick else (0.25, 0.5, 1.0, 2.0, 4.0)
    torus_k = (2.0,) if args.quick else (0.5, 1.0, 2.0)
    metrics = {}
    ring = kappa_sweep("ring", ring_k, n_ring, seed=args.seed)
    save_figure(plot_kappa_sweep(ring, title=f"ring N={n_ring}"), out / "kappa_sweep_ring.png")
    torus = kappa_sweep("torus", torus_k, n_torus, seed=args.seed)
    save_figure(plot_kappa_sweep(torus, title=f"hex torus {n_torus[0]}x{n_torus[1]}"),
                out / "kappa_sweep_torus.png")
    metrics["kappa_sweep"] = {"ring": ring, "torus": torus, "ring_summary": _summary(ring),
                              "torus_summary": _summary(torus)}
    variants = None
    if args.quick:
        variants = {k: CAPACITY[k] for k in ("spectral only", "pointwise x^1..x^4",
                                             "phi^-1 + x^1..x^3 (default)")}
    cap = capacity_sweep(2.0, n_ring, variants, seed=args.seed)
    save_figure(plot_capacity(cap), out / "capacity.png")
    metrics["capacity"] = cap
    abl = ablation(2.0, n_ring, seed=args.seed)
    save_figure(plot_ablation(abl), out / "ablation.png")
    metrics["ablation"] = abl
    spectra = {}
    for family in ("seal", "spectral"):
        net = fit(FitConfig(n=n_ring, kappa=2.0, family=family, seed=args.seed)).network
        spectra[family] = (jacobian_spectrum(net) * net.tau).tolist()
    save_figure(plot_normal_spectra(spectra, 2.0), out / "spectra_kappa2.png")
    mlp = mlp_sweep((0.5, 2.0), 32 if args.quick else 64, 10 if args.quick else 120,
                    8 if args.quick else 16, seed=args.seed)
    metrics["mlp"] = mlp
    metrics["variable_control"] = variable_control("torus", 2.0, n_torus, seed=args.seed)
    metrics["mlp_summary"] = {
        "worst_spectrum_relative": {f"kappa {k}": r.worst_relative
                                    for k, r in mlp.kappas.items()},
        "c0": {f"kappa {k}": r.c0 for k, r in mlp.kappas.items()},
        "without_c0_worst_spectrum_relative": {f"kappa {k}": r.without_c0.worst_relative
                                               for k, r in mlp.kappas.items()},
        "without_mlp_worst_spectrum_relative": {
            f"kappa {k}": r.without_mlp.worst_relative for k, r in mlp.kappas.items()}}
    metrics["wall_time_s"] = clock.wall_s
    write_json(metrics, out / "metrics.json")
    return metrics


if __name__ == "__main__":
    main()
