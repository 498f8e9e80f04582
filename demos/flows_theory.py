"""The over-parameterized theory's claims as numbers that can fail.

- width: observed training-loss curves beside the infinite-width NTK prediction on the same
  draws, the check on L_obs(T) / L_NTK(T) (within 10%), the gap against the earlier tolerance
  K m^{-1/2}, the empirical kernel's drift and flipped activations, the theorem's width beside
  the widths used;
- samples: excess risk (objective - population minimum) for train and test against n with
  95% intervals over seeds, its log-log slope beside the bound's n^{-1/2}, and the computed
  generalization bound beside the measured excess gap and L* (``vacuous`` above it);
- the Groenwall W2 bound (global factor and factor along the trajectories) beside the measured
  W2, its floor and W2(source, data), against m and n;
- memorization against n and against time in the reverse process.

    python demos/flows_theory.py --out results/flows_theory [--quick | --full]

The default sizes (``make demo``) keep every width and the eight seeds, and take three of the
six sample sizes n (32, 128, 512) and 1,500 instead of 3,000 Adam steps per memorization run;
``--full`` is the complete sweep bench/README.md quotes (all six n).
"""

from __future__ import annotations

from pathlib import Path

import torch
from _models import demo_parser, finish, size

from _runkit.files import atomic_save_figure
from flows.plotting.theory import (
    plot_excess_vs_n,
    plot_generalization_bound,
    plot_memorization,
    plot_ntk_curves,
    plot_ntk_gap,
    plot_w2_bound,
)
from flows.theory.sweeps import memorization_sweep, ntk_width_sweep, risk_sweep
from flows.training.loop import TrainConfig

FULL = {"widths": [256, 1024, 4096, 16384], "n": 64, "k": 4, "steps": 500, "width_lr": 0.5,
        "ns": [32, 64, 128, 256, 512, 1024], "seeds": [1, 2, 3, 4, 5, 6, 7, 8], "risk_width": 1024,
        "risk_lr": 2.0, "mem_ns": [8, 32, 128, 512, 2048], "mem_steps": 3000,
        "point": {}}
DEMO = {**FULL, "ns": [32, 128, 512], "mem_steps": 1500}
QUICK = {"widths": [64, 256], "n": 16, "k": 2, "steps": 30, "width_lr": 0.5, "ns": [16, 32],
         "seeds": [1, 2], "risk_width": 64, "risk_lr": 2.0, "mem_ns": [8, 64],
         "mem_steps": 100, "point": {"n_test": 2000, "n_samples": 200, "bound_steps": 8,
                                      "pairs": 50, "floor_pairs": 2}}


def _save(fig, out: Path, name: str) -> str:
    atomic_save_figure(fig, out / name, dpi=120)
    return name


def main(argv: list[str] | None = None) -> dict:
    """Run the sweeps; returns their metrics (also written to OUT/metrics.json)."""
    p = demo_parser(__doc__, "flows_theory", cache=False)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    c = {"quick": QUICK, "demo": DEMO, "full": FULL}[size(a)]
    a.out.mkdir(parents=True, exist_ok=True)
    base = TrainConfig(data="moons", regime="theory", n_train=c["n"], k_draws=c["k"],
                       steps=c["steps"], lr=c["width_lr"], seed=a.seed)
    wid = ntk_width_sweep(c["widths"], base, **c["point"])
    rb = TrainConfig(data="moons", regime="theory", width=c["risk_width"], k_draws=c["k"],
                     steps=c["steps"], lr=c["risk_lr"], seed=a.seed)
    risk = risk_sweep(c["ns"], rb, c["seeds"], **c["point"])
    mem = memorization_sweep(c["mem_ns"], steps=c["mem_steps"], seed=a.seed,
                             n_samples=c["point"].get("n_samples", 1000))
    wr, rr = wid.runs, risk.runs
    mean_by_n = {n: [r for r in rr if r.n == n] for n in risk.ns}

    def avg(key):
        return [sum(getattr(r.samples, key) for r in rs) / len(rs) for rs in mean_by_n.values()]

    def each(key):
        return [getattr(r.samples, key) for r in wr]

    curves = dict(mem.vs_time)
    t = curves.pop("t")
    figs = [
        _save(plot_ntk_curves(wr), a.out, "ntk_curves.png"),
        _save(plot_ntk_gap(wid.widths, wid.ntk_gap, [r.ntk_tolerance for r in wr],
                           [r.kernel.flipped for r in wr]), a.out, "ntk_gap.png"),
        _save(plot_excess_vs_n(risk.ns, risk.excess_test, risk.excess_test_ci95,
                               risk.excess_train, risk.excess_slope,
                               gap=risk.excess_gap, gap_halfs=risk.excess_gap_ci95),
              a.out, "excess_vs_n.png"),
        _save(plot_generalization_bound(risk.ns, risk.excess_gap, risk.excess_gap_ci95,
                                        risk.gen_bound, risk.population_minimum.value),
              a.out, "generalization_bound_vs_n.png"),
        _save(plot_w2_bound(risk.ns, avg("w2"), avg("w2_floor"), avg("w2_bound"),
                            avg("w2_coupling"), "training points n",
                            trajectory=avg("w2_bound_trajectory"), source=avg("w2_source")),
              a.out, "w2_bound_vs_n.png"),
        _save(plot_w2_bound(wid.widths, each("w2"), each("w2_floor"), each("w2_bound"),
                            each("w2_coupling"), "width m",
                            trajectory=each("w2_bound_trajectory"), source=each("w2_source")),
              a.out, "w2_bound_vs_width.png"),
        _save(plot_memorization(mem.ns, {
            "trained field": mem.memorized_trained,
            "empirical optimum": mem.memorized_empirical_optimal},
            sum(mem.iid_baseline) / len(mem.iid_baseline)), a.out, "memorization_vs_n.png"),
        _save(plot_memorization(t, curves, None, "time t of the reverse process",
                                log_x=False), a.out, "memorization_vs_time.png"),
    ]
    ratios = [r.samples.w2_bound_ratio for r in wr + rr]
    out = {"config": {k: v for k, v in c.items()}, "widths": wid.widths,
           "lambda_0": wr[0].lambda_0, "ntk_gap": wid.ntk_gap,
           "ntk_tolerance": [r.ntk_tolerance for r in wr],
           "ntk_within": [r.ntk_within for r in wr], "ntk_gap_monotone": wid.gap_monotone,
           "kernel_flipped": [r.kernel.flipped for r in wr],
           "kernel_start_vs_limit": [r.kernel.start_vs_limit for r in wr],
           "kernel_end_vs_start": [r.kernel.end_vs_start for r in wr],
           "required_width": wr[0].required_width, "required_lr": wr[0].required_lr,
           "final_loss": [r.final_loss for r in wr],
           "final_ntk_loss": [r.final_ntk_loss for r in wr],
           "population_minimum": risk.population_minimum.to_dict(),
           "ns": risk.ns, "excess_test": risk.excess_test,
           "excess_test_ci95": risk.excess_test_ci95, "excess_train": risk.excess_train,
           "excess_intervals_separate": risk.intervals_separate,
           "excess_endpoints_separate": risk.endpoints_separate,
           "excess_slope": risk.excess_slope, "excess_slope_ci95": risk.excess_slope_ci95,
           "excess_gap": risk.excess_gap, "excess_gap_ci95": risk.excess_gap_ci95,
           "excess_gap_slope": risk.excess_gap_slope,
           "excess_gap_slope_ci95": risk.excess_gap_slope_ci95,
           "gap_floor": risk.gap_floor, "bound_rate": risk.bound_rate,
           "ntk_horizon": c["width_lr"] * c["steps"],
           "generalization_gap": risk.generalization_gap,
           "generalization_gap_ci95": risk.generalization_gap_ci95,
           "w2_vs_n": avg("w2"), "w2_floor_vs_n": avg("w2_floor"),
           "w2_bound_vs_n": avg("w2_bound"), "w2_vs_width": each("w2"),
           "w2_bound_vs_width": each("w2_bound"),
           "w2_bound_holds_all": wid.w2_bound_holds_all and risk.w2_bound_holds_all,
           "w2_bound_looseness_min": min(ratios), "w2_bound_looseness_max": max(ratios),
           "ntk_end_ratio": [r.ntk_end_ratio for r in wr],
           "ntk_passes": [r.ntk_passes for r in wr],
           "gen_bound": risk.gen_bound, "gen_bound_ratio": risk.gen_bound_ratio,
           "gen_bound_vacuous_fraction": risk.gen_bound_vacuous_fraction,
           "gen_bound_holds_all": risk.gen_bound_holds_all,
           "w2_source_vs_n": avg("w2_source"),
           "w2_bound_vs_source": risk.w2_bound_vs_source,
           "w2_bound_vacuous_fraction": risk.w2_bound_vacuous_fraction,
           "w2_bound_trajectory_vs_n": risk.w2_bound_trajectory,
           "w2_bound_trajectory_vs_source": risk.w2_bound_trajectory_vs_source,
           "w2_bound_trajectory_vacuous_fraction": risk.w2_bound_trajectory_vacuous_fraction,
           "w2_bound_trajectory_holds_all": risk.w2_bound_trajectory_holds_all and all(
               r.samples.w2_bound_trajectory_holds for r in wr),
           "w2_bound_trajectory_vs_width": each("w2_bound_trajectory"),
           "w2_source_vs_width": each("w2_source"),
           "memorization": {**mem.to_dict(), "vs_time": curves}, "figures": figs}
    return finish(out, a.out)


if __name__ == "__main__":
    main()
