"""Large sheets: the 1,024 x 1,024 hex torus end to end, throughput against the numpy FFT floor,
float32 against float64, and where canns' CANN2D stops.

Sections (all by default; pick with ``--only``):

- ``acceptance``: :func:`neurodyn.sheet.large_torus` at ``--n`` (1,024): memory estimate, the
  streamed fit, ``--steps`` (1,000) float32 RK4 steps with the energy audited at every step,
  the zero modes at the fitted bump; CPU and wall seconds of each phase, the peak resident
  memory (``ru_maxrss``) beside the estimate, and the load average.
- ``throughput``: neuron-updates per second (neurons x RK4 steps / second) of
  :class:`neurodyn.sheet.SheetField` in float32 at 32^2, 64^2, ..., 1,024^2, stepped as
  :func:`neurodyn.sheet.relax` steps it (:func:`neurodyn.sheet.rk4_steps`, the compiled path
  where it applies) and by the torch reference (:func:`neurodyn.sheet.relaxation._rk4_step`),
  against the numpy FFT floor: a plain ``numpy.fft.rfft2`` + ``irfft2`` of the same float32
  sheet per RK4 stage (four per step), the three timed alternately in the same run; reported as
  ratios of times (``ratio``: ours / floor, ``reference_ratio``: the reference / floor). The
  network is the built one (anchored slopes, unfitted coefficients): a step's operations do not
  depend on the coefficients' values.
- ``float32``: a 64 x 64 fit (streamed design), 1,000 RK4 steps from the same perturbed state
  in float32 and float64: the largest difference of the final states relative to the
  state's range, of the decoded positions, and each run's audit.
- ``canns``: canns' ``CANN2D`` (dense ``N x N`` recurrent matrix) at lengths 32, 64, 128, ...:
  its matrix's memory checked against what is available before it is built, Euler steps timed
  where it fits (neuron-updates per second), alternately with the sheet's RK4 steps at the same
  size (``sheet_over_canns``: the sheet's time per neuron update over canns'; an RK4 step is
  four field evaluations, canns' Euler step one), and the size where it stops.

Each timing is the best of ``repeat`` wall-clock runs; the process's CPU seconds of the same runs
are reported beside (``cpu_ratio``), less sensitive to a loaded machine.

Usage: python bench/bench_sheet.py [--out DIR] [--n 1024] [--steps 1000]
       [--only SECTION[,SECTION] ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
from pathlib import Path

import numpy as np
import torch

from _runkit import BadInput, check_memory
from _runkit.timing import timed
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.fitting.plan import build_manifold, build_network
from neurodyn.fitting.streamed import nearest_point_local
from neurodyn.manifold import probe_directions
from neurodyn.sheet import SheetField, large_torus, relax, rk4_steps

SECTIONS = ("acceptance", "throughput", "float32", "canns")


def acceptance(n: int, steps: int) -> dict:
    """The large torus end to end (see the module docstring)."""
    rep = large_torus(n, steps=steps)
    run, modes = rep.run, rep.modes
    return {"n": list(rep.n), "seconds_cpu_wall": rep.seconds,
            "total_cpu": sum(c for c, _ in rep.seconds.values()),
            "total_wall": sum(w for _, w in rep.seconds.values()),
            "peak_rss_mb": rep.peak_rss_mb,
            "estimate_mb": {k: v / 2**20 for k, v in rep.estimate.items()},
            "energy_first_last": [float(run.energy[0]), float(run.energy[-1])],
            "audit_max_rise": run.max_rise, "audit_rtol": run.rtol, "audit_ok": run.ok,
            "distance_start_end": list(rep.distance),
            "tangent_eigenvalues": list(modes.tangent_eigenvalues),
            "tangent_residuals": list(modes.tangent_residuals),
            "normal_range": list(modes.normal_range), "zero_modes": modes.count(1e-6),
            "lanczos_iterations": modes.iterations, "load_average": os.getloadavg()}


def _alternated(fns: dict, repeat: int) -> dict:
    """Best wall and CPU seconds of each function, the functions alternated ``repeat`` times
    after one warm-up call each (so that all see the same load)."""
    for fn in fns.values():
        fn()
    best = {k: [math.inf, math.inf] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            clock = timed(fn)[1]
            best[k] = [min(best[k][0], clock.wall_s), min(best[k][1], clock.cpu_s)]
    return best


def _sheet(n: int):
    """The built float32 ``n x n`` field and a state off its bump."""
    cfg = FitConfig(geometry="torus", n=(n, n))
    manifold = build_manifold(cfg)
    field = SheetField(build_network(cfg, manifold), torch.float32)
    return field, (manifold.u0 + 0.1).to(torch.float32)


def _stepper(field, u, steps: int, path: str = "auto"):
    def run():
        rk4_steps(field, u, steps, path=path)
    return run


def _floor(x, steps):
    def run():
        for _ in range(4 * steps):  # one rfft2 + irfft2 per RK4 stage
            np.fft.irfft2(np.fft.rfft2(x), s=x.shape)
    return run


def _steps(n: int) -> int:
    return max(1, int(5 * (1024 // n) ** 2 // 64))  # similar work per size


def throughput(sizes, repeat: int = 3) -> list[dict]:
    """Neuron-updates per second against the numpy FFT floor, side by side per size."""
    out = []
    for n in sizes:
        field, u = _sheet(n)
        reps = _steps(n)
        t = _alternated({"ours": _stepper(field, u, reps),
                         "reference": _stepper(field, u, reps, "torch"),
                         "floor": _floor(u.numpy().copy(), reps)}, repeat)
        updates = n * n * reps
        out.append({"n": n, "steps": reps, "updates_per_s": updates / t["ours"][0],
                    "reference_updates_per_s": updates / t["reference"][0],
                    "floor_updates_per_s": updates / t["floor"][0],
                    "ratio": t["ours"][0] / t["floor"][0],
                    "reference_ratio": t["reference"][0] / t["floor"][0],
                    "cpu_ratio": t["ours"][1] / t["floor"][1]})
    return out


def float32_vs_64(n: int = 64, steps: int = 1000) -> dict:
    """The same relaxation in float32 and float64 on a fitted 64 x 64 torus."""
    net = fit(FitConfig(geometry="torus", n=(n, n)), design="streamed", progress=False).network
    m = net.manifold
    gen = torch.Generator().manual_seed(1)
    psi = net.geometry.random_phase(1, gen)
    u0 = m.u_star(psi[0]) + 0.3 * m.norm * probe_directions(m, psi, "smooth", gen)[0]
    runs = {dt: relax(SheetField(net, dt), u0, steps) for dt in (torch.float32, torch.float64)}
    a, b = runs[torch.float32].u.double(), runs[torch.float64].u
    pa, pb = nearest_point_local(m, a), nearest_point_local(m, b)
    dpsi = torch.remainder(pa - pb + math.pi, 2 * math.pi) - math.pi
    return {"n": n, "steps": steps,
            "max_abs_diff_relative": float((a - b).abs().max() / (b.max() - b.min())),
            "position_diff_rad": float(dpsi.abs().max()),
            "audit": {str(dt).split(".")[-1]: {"max_rise": r.max_rise, "rtol": r.rtol,
                                                "ok": r.ok} for dt, r in runs.items()}}


def _canns_run(bm, jnp, model, steps: int):
    """``steps`` of canns' own update, jitted (compiled by the first call)."""
    inp = jnp.zeros(model.u.value.shape)

    def step(i):
        model.update(inp)

    @bm.jit
    def loop(i):
        bm.for_loop(step, i, progress_bar=False)
        return model.u.value

    idx = jnp.arange(steps)
    return lambda: loop(idx).block_until_ready()


def canns_limit(lengths=(32, 64, 128, 256, 512, 1024), steps: int = 20,
                repeat: int = 3) -> list[dict]:
    """canns' CANN2D where its dense matrix fits, timed beside the sheet (module docstring)."""
    try:
        import brainpy.math as bm
        import jax.numpy as jnp
        from canns.models.basic import CANN2D
    except ImportError as err:
        return [{"skipped": f"canns is not installed ({err}); pip install canns"}]
    bm.set_dt(0.1)
    out = []
    for length in lengths:
        need = float(length) ** 4 * 4 * 2  # the float32 N x N matrix and one work copy
        try:
            check_memory("length", need)
            model = CANN2D(length=length)
        except (BadInput, MemoryError, RuntimeError, ValueError) as err:
            out.append({"length": length, "neurons": length**2, "stopped": str(err)})
            break
        field, u = _sheet(length)
        sheet_steps = max(steps, _steps(length))
        t = _alternated({"canns": _canns_run(bm, jnp, model, steps),
                         "sheet": _stepper(field, u, sheet_steps)}, repeat)
        canns_per, sheet_per = t["canns"][0] / steps, t["sheet"][0] / sheet_steps
        out.append({"length": length, "neurons": length**2,
                    "updates_per_s": length**2 / canns_per, "matrix_mb": need / 2 / 2**20,
                    "sheet_updates_per_s": length**2 / sheet_per,
                    "sheet_over_canns": sheet_per / canns_per,
                    "sheet_over_canns_cpu": (t["sheet"][1] / sheet_steps)
                    / (t["canns"][1] / steps)})
        del model
    return out


def _sections(values: list[str]) -> list[str]:
    """``--only`` values, each one section or several joined by commas."""
    names = [v for value in values for v in value.split(",") if v]
    bad = sorted(set(names) - set(SECTIONS))
    if bad:
        raise SystemExit(f"--only: unknown sections {bad}; choose from {SECTIONS}")
    return names


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--only", nargs="*", default=list(SECTIONS),
                   help=f"sections, by name or joined by commas: {', '.join(SECTIONS)}")
    args = p.parse_args(argv)
    args.only = _sections(args.only)
    torch.set_num_threads(1)
    res = {}
    if "acceptance" in args.only:  # first: its peak memory is the process's
        res["acceptance"] = acceptance(args.n, args.steps)
        print(json.dumps(res["acceptance"], indent=1), flush=True)
    if "throughput" in args.only:
        res["throughput"] = throughput([2**k for k in range(5, int(math.log2(args.n)) + 1)])
        for row in res["throughput"]:
            print(f"{row['n']:5d}^2  ours {row['updates_per_s']:.3g}/s  reference "
                  f"{row['reference_updates_per_s']:.3g}/s  floor "
                  f"{row['floor_updates_per_s']:.3g}/s  ratio {row['ratio']:.2f} "
                  f"(reference {row['reference_ratio']:.2f}, cpu {row['cpu_ratio']:.2f})",
                  flush=True)
    if "float32" in args.only:
        res["float32"] = float32_vs_64()
        print(json.dumps(res["float32"], indent=1), flush=True)
    if "canns" in args.only:
        res["canns"] = canns_limit()
        print(json.dumps(res["canns"], indent=1), flush=True)
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "bench_sheet.json").write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
