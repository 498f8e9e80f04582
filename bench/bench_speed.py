"""Simulation speed side by side in one run: neurodyn, canns and a numpy FFT floor, as ratios.

Sizes: the ring at N = 128 and 512, the hex torus at 32 x 32 and 64 x 64, each at B = 1 and
B = 256 states. Sides, alternated in order over rounds (the reported numbers are medians of
per-round ratios; the machine may be shared, so only ratios within a round are meaningful):

- ``neurodyn_rk4``: :func:`neurodyn.dynamics.simulation.simulate`, RK4, float64, the learned Fourier
  energy (bandwidth 4, degree 3, anchored at the target bump) with its fitted transport, auto
  backend (compiled when numba is installed).
- ``neurodyn_euler32``: the same network, Euler in float32.
- ``numpy_floor``: the same float32 Euler step written in numpy (logistic rates, ``rfft``,
  the learned filter on the band, ``irfft``), vectorised over the batch: what one step costs
  with no framework at all.
- ``canns_euler``: canns' ``CANN1D`` / ``CANN2D`` (default dense recurrent input). At B = 1 its
  own ``update`` in a jitted ``brainpy.math.for_loop``; its models hold one state, so at
  B = 256 the same update (divisive normalisation, canns' ``irec_backend``, Euler) is mapped
  over the batch with ``jax.vmap``. Skipped, with the reason, when canns is not installed.

Per-step times are what is compared: ``steps`` is 1,000 except where one run of a side would
take far longer than the others (canns' dense 64 x 64 torus at B = 256), where fewer steps are
timed and the count is reported.

``--threads T`` runs neurodyn's compiled path on T threads (blocks of states at B = 256; one
state stays on one thread); the default is 1. canns runs with its own (JAX) threading.

Usage: python bench/bench_speed.py [--out DIR] [--rounds R] [--quick] [--threads T]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
from pathlib import Path

import numpy as np
import torch

from _runkit.timing import timed
from neurodyn.activation import Logistic
from neurodyn.dynamics.simulation import simulate
from neurodyn.energies import LearnedFourierEnergy
from neurodyn.geometry.populations import Ring, Torus
from neurodyn.manifold import TargetManifold
from neurodyn.network import HopfieldNetwork, Transport

DT = 0.1


def make_network(geometry) -> HopfieldNetwork:
    """The learned Fourier network of the benchmark (no fit: the cost does not depend on it)."""
    act = Logistic()
    m = TargetManifold.bump(geometry, act)
    p = geometry.power(m.r_star(torch.zeros(1, geometry.dim, dtype=torch.float64)))[0]
    e = LearnedFourierEnergy(geometry, bandwidth=4, degree=3, scale=p.clamp(min=1e-3))
    e.anchor(p, m.fourier_construction())
    return HopfieldNetwork(geometry, act, e, 0.0, 1.0, Transport.fit(geometry, m.u0, 1.0, act), m)


def start(net, batch):
    gen = torch.Generator().manual_seed(0)
    u = net.manifold.u_star(net.geometry.random_phase(batch, gen))
    return u + 0.1 * torch.randn(u.shape, generator=gen, dtype=torch.float64)


def neurodyn_side(net, u0, steps, method, dtype):
    def run():
        simulate(net, u0, steps * DT, DT, method=method, save_every=steps, diagnostics=False,
                 progress=False, dtype=dtype)
    return run


def numpy_floor(net, u0, steps):
    """float32 Euler of the same field in numpy, vectorised over the batch."""
    g, e = net.geometry, net.energy_fn
    axes = tuple(range(-g.dim, 0))
    band = (e.mask.numpy() > 0)
    with torch.no_grad():
        coef = e.effective_coef().numpy()[band]  # (M, D)
    xs = e.anchor_x.numpy()[band]
    gs, gam = xs / (1 + xs), 1 / (1 + xs) ** 2
    hc = np.concatenate([coef[:, :1], coef[:, 1:] / gam[:, None]], axis=1).astype(np.float32)
    s = e.scale.numpy()[band].astype(np.float32)
    gs, gam = gs.astype(np.float32), gam.astype(np.float32)
    idx = np.nonzero(band.reshape(-1))[0]
    u_start = u0.numpy().astype(np.float32)
    dt = np.float32(DT)

    def run():
        u = u_start.copy()
        for _ in range(steps):
            r = 1 / (1 + np.exp(-u))
            z = np.fft.rfftn(r, axes=axes, norm="forward")
            zf = z.reshape(z.shape[0], -1)
            zb = zf[:, idx]
            x = (zb.real ** 2 + zb.imag ** 2) / s
            gx = x / (1 + x)
            y = (gx - gs) / gam
            acc = hc[:, -1]
            for d in range(hc.shape[1] - 2, -1, -1):
                acc = acc * y + hc[:, d]
            w = np.zeros_like(zf)
            w[:, idx] = 2 / (1 + x) ** 2 * acc * zb
            inter = np.fft.irfftn(w.reshape(z.shape), s=g.shape, axes=axes, norm="forward")
            u += dt * (-u + inter)
        return u
    return run


def canns_side(kind, size, batch, steps):
    """canns' Euler loop (see the module docstring); ``None`` if canns is absent."""
    import brainpy.math as bm
    import jax
    import jax.numpy as jnp
    from canns.models.basic import CANN1D, CANN2D

    bm.set_dt(DT)
    model = CANN1D(num=size) if kind == "ring" else CANN2D(length=size)
    shape = model.u.value.shape
    inp = jnp.zeros(shape)
    idx = jnp.arange(steps)
    if batch == 1:
        def step(i):
            model.update(inp)

        @bm.jit
        def loop(i):
            bm.for_loop(step, i, progress_bar=False)
            return model.u.value

        def run():
            model.u.value = jnp.full(shape, 0.1)
            loop(idx).block_until_ready()
    else:
        irec, k, tau = model.irec_backend, model.k, model.tau

        def one(u):
            def body(u, _):
                r1 = u * u
                r = r1 / (1.0 + k * jnp.sum(r1))
                rec = irec(r.reshape(-1)).reshape(shape)
                return u + (-u + rec + inp) / tau * DT, None
            return jax.lax.scan(body, u, idx)[0]

        loop = jax.jit(jax.vmap(one))
        u0 = jnp.full((batch,) + shape, 0.1)

        def run():
            loop(u0).block_until_ready()
    run()  # compile
    return run


CONFIGS = [("ring", 128, 1), ("ring", 128, 256), ("ring", 512, 1), ("ring", 512, 256),
           ("torus", 32, 1), ("torus", 32, 256), ("torus", 64, 1), ("torus", 64, 256)]


def bench_config(kind, size, batch, steps, rounds, with_canns):
    geometry = Ring(size) if kind == "ring" else Torus(size, size, "hex")
    net = make_network(geometry)
    u0 = start(net, batch)
    canns_steps = steps if not (kind == "torus" and size == 64 and batch > 1) else steps // 50
    sides = {"neurodyn_rk4": (neurodyn_side(net, u0, steps, "rk4", torch.float64), steps),
             "neurodyn_euler32": (neurodyn_side(net, u0, steps, "euler", torch.float32), steps),
             "numpy_floor": (numpy_floor(net, u0, steps), steps)}
    if with_canns:
        sides["canns_euler"] = (canns_side(kind, size, batch, canns_steps), canns_steps)
    for fn, _ in sides.values():  # warm up (compilation, caches)
        fn()
    per_round = []
    names = list(sides)
    for rnd in range(rounds):
        order = names if rnd % 2 == 0 else names[::-1]
        per_round.append({name: timed(sides[name][0])[1].wall_s / sides[name][1] for name in order})
    med = {name: statistics.median(r[name] for r in per_round) for name in names}
    out = {"geometry": kind, "n": size if kind == "ring" else [size, size], "batch": batch,
           "steps": {name: sides[name][1] for name in names},
           "seconds_per_step_median": med,
           "neurodyn_rk4_1000_steps_s": 1000 * med["neurodyn_rk4"],
           "euler32_over_numpy_floor": statistics.median(
               r["neurodyn_euler32"] / r["numpy_floor"] for r in per_round)}
    if with_canns:
        out["rk4_over_canns_euler_per_step"] = statistics.median(
            r["neurodyn_rk4"] / r["canns_euler"] for r in per_round)
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="two small sizes, 50 steps, 2 rounds")
    p.add_argument("--threads", type=int, default=1,
                   help="threads of neurodyn's compiled runs (blocks of states; default 1)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    with_canns = importlib.util.find_spec("canns") is not None
    configs = [("ring", 128, 1), ("torus", 32, 1)] if args.quick else CONFIGS
    steps, rounds = (50, 2) if args.quick else (1000, args.rounds)
    result = {"threads": args.threads, "canns": "installed" if with_canns else
              "skipped: canns is not installed (pip install canns)", "rows": []}
    for kind, size, batch in configs:
        row = bench_config(kind, size, batch, steps, rounds, with_canns)
        result["rows"].append(row)
        print(json.dumps(row), flush=True)
    rows = {(r["geometry"], r["batch"], str(r["n"])): r for r in result["rows"]}
    acc = {}
    ring = rows.get(("ring", 1, "128"))
    if ring is not None and not args.quick:
        acc["ring128_b1_rk4_1000_steps_s"] = ring["neurodyn_rk4_1000_steps_s"]
        acc["ring128_b1_rk4_1000_le_20ms"] = ring["neurodyn_rk4_1000_steps_s"] <= 0.02
        if with_canns:
            acc["ring128_b1_rk4_1000_le_canns_euler_1000"] = (
                ring["rk4_over_canns_euler_per_step"] <= 1.0)
            acc["rk4_per_step_le_4x_canns_everywhere"] = all(
                r["rk4_over_canns_euler_per_step"] <= 4.0 for r in result["rows"])
        big = rows.get(("ring", 256, "512"))
        if big is not None:
            acc["ring512_b256_euler32_over_floor"] = big["euler32_over_numpy_floor"]
            acc["ring512_b256_euler32_le_1.5x_floor"] = big["euler32_over_numpy_floor"] <= 1.5
    result["acceptance"] = acc
    result["rounds"] = rounds
    text = json.dumps(result, indent=2)
    print(json.dumps(acc))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_speed.json").write_text(text + "\n")
    return result


if __name__ == "__main__":
    main()
