"""Compile every numba kernel of the library into its on-disk cache (the last step of `make env`).

Each kernel runs once on tiny inputs, in every precision the library and its tests use, so no
run or test afterwards pays a cold compile: numba loads the machine code from the cache folder
keyed on the kernel sources (:mod:`_runkit.kernels`). Then every kernel of the kernel modules
must be in that cache; one that is not is named and the script exits with 1, so a new kernel
cannot be left out silently. Without numba there is nothing to compile (exit 0).

    python -m _runkit.warm_kernels
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time

import numpy as np

from _runkit.kernels import kernel_cache_dir, kernel_files

#: the modules whose kernels must all be compiled (kernel_files() are their sources)
MODULES = ("flows.assignment._bits", "flows.assignment._auction_kernels",
           "flows.assignment._matching_kernels", "neurodyn.dynamics._compiled.kernels",
           "neurodyn.dynamics._compiled.sheet")


def warm_assignment() -> None:
    """The exact assignment in both precisions, its warm start, its helpers as tests call them."""
    from flows.assignment import auction as A
    from flows.assignment._auction_kernels import _best_two, _build_list
    from flows.assignment._bits import scratch
    from flows.assignment.warmstart import PriceMap

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 2)), rng.standard_normal((64, 2))  # 64: the screen runs
    _, prices = A.assignment_and_prices(x, y)  # cost, screen, float32 auction, exact finish
    A.assignment_and_prices(x, y, prices)  # a warm start
    A.auction_assignment(((x[:, None] - y[None]) ** 2).sum(-1))  # the float64 auction
    pairs = [(rng.standard_normal((64, 2)), rng.standard_normal((64, 2))) for _ in range(2)]
    guess = PriceMap.fit(pairs)
    guess(y), guess(y, x)
    n, k = 8, 4
    for ftype, itype in ((np.float64, np.int64), (np.float32, np.int32)):
        c, p = rng.random((1, n)).astype(ftype), np.zeros(n, ftype)
        _best_two(c, p, 0, scratch(n, ftype, itype))
        _build_list(c, p, 0, np.zeros((1, k), np.int64), np.zeros((1, k), ftype), 0.0,
                    scratch(n, ftype, itype), np.empty(n, np.int64), np.empty(k + 1, ftype),
                    np.empty(k + 1, np.int64))


def warm_fastpath() -> None:
    """The compiled fixed-step path of neurodyn in float64 and float32."""
    import torch

    from neurodyn.dynamics.perturbations import perturbed_states
    from neurodyn.dynamics.simulation import simulate
    from neurodyn.fitting.core import FitConfig, fit

    net = fit(FitConfig(n=32, steps=1, check_kappa=False)).network
    u0 = perturbed_states(net.manifold, count=2, kind="noise", strength=0.2, seed=0)
    for dtype in (torch.float64, torch.float32):
        simulate(net, u0, 1.0, 0.1, method="rk4", dtype=dtype, backend="compiled",
                 diagnostics=False)


def warm_sheet() -> None:
    """The compiled RK4 steps of a large sheet in float64 and float32, audited and not."""
    import torch

    from neurodyn.fitting.core import FitConfig
    from neurodyn.fitting.plan import build_manifold, build_network
    from neurodyn.sheet import SheetField, relax

    cfg = FitConfig(geometry="torus", n=(8, 8))
    manifold = build_manifold(cfg)
    net = build_network(cfg, manifold)
    for dtype in (torch.float64, torch.float32):
        for audit in (True, False):
            relax(SheetField(net, dtype), manifold.u0, 1, audit=audit, path="compiled")


def uncompiled() -> list[str]:
    """Kernels of :data:`MODULES` with nothing in the cache folder (helpers inlined into their
    callers excepted). A kernel called only by other kernels is compiled, and cached, with them;
    one loaded from the cache compiles none of its callees, so the cache's index is read, not
    the kernel's list of compiled signatures."""
    from numba.core.registry import CPUDispatcher

    missing = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (isinstance(obj, CPUDispatcher) and obj.__module__ == name
                    and obj.targetoptions.get("inline") != "always"
                    and not os.path.exists(obj._cache._cache_file._index_path)):
                missing.append(f"{name}.{attr}")
    return missing


def main() -> int:
    if importlib.util.find_spec("numba") is None:
        print("numba is not installed: no kernels to compile")
        return 0
    start = time.perf_counter()
    warm_assignment()
    warm_fastpath()
    warm_sheet()
    missing = uncompiled()
    print(f"{len(kernel_files())} kernel files, cache {kernel_cache_dir()}: "
          f"{time.perf_counter() - start:.1f} s")
    if missing:
        print("not compiled by _runkit.warm_kernels (add a call): " + ", ".join(missing),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
