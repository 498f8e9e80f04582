"""What the demos share: fitted models (fit once per configuration, then loaded from the model
cache of :func:`neurodyn.io.fit_or_load`), their common arguments and the writing of their
metrics. Their timer is :class:`_runkit.timing.Stopwatch`."""

from __future__ import annotations

from pathlib import Path

from neurodyn.fitting.core import FitConfig
from neurodyn.io import fit_or_load

DEFAULT_CACHE = Path("results") / "models"


def fitted(config: FitConfig, cache: str | Path | None = DEFAULT_CACHE):
    """The network of ``config`` from the model cache the demos and benchmarks share
    (:func:`neurodyn.io.fit_or_load`): ``(network, info)``."""
    return fit_or_load(config, cache)


def cache_dir(option: str | None, out: str | Path) -> Path | None:
    """The model cache of a demo: ``option`` if given ('' disables it), else ``OUT/../models``."""
    if option is None:
        return Path(out).resolve().parent / "models"
    return Path(option) if option else None


def demo_parser(doc: str, name: str, cache: bool = True):
    """Arguments every demo shares: ``--out``, ``--quick``, ``--seed`` and, for demos that fit
    attractor models (``cache``), ``--cache``."""
    import argparse

    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results") / name, help="output directory")
    sizes = p.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="tiny sizes, for the tests")
    sizes.add_argument("--full", action="store_true",
                       help="the sizes of the measurements bench/README.md quotes (long; "
                            "bench/demos_full.py runs them; default: the sizes that carry the "
                            "claims within make demo's 15 minutes)")
    if cache:
        p.add_argument("--cache", default=None,
                       help="model cache (default: OUT/../models; '' for none)")
    p.add_argument("--seed", type=int, default=0)
    return p


def size(args) -> str:
    """The size a demo runs at: ``"quick"``, ``"demo"`` (the default) or ``"full"``."""
    return "quick" if args.quick else "full" if getattr(args, "full", False) else "demo"


def finish(metrics: dict, out: Path) -> dict:
    """Write ``metrics`` to ``OUT/metrics.json``, say what was written and return them."""
    from flows.training.checkpoint import atomic_write_json

    atomic_write_json(metrics, Path(out) / "metrics.json")
    print(written(out))
    return metrics


def written(out: str | Path) -> str:
    """The line a demo prints when it is done: its figures and where its numbers are."""
    out = Path(out)
    figures = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.png"))
    shown = ", ".join(figures[:4]) + (f" and {len(figures) - 4} more" if len(figures) > 4 else "")
    return (f"wrote {out}/: {len(figures)} figures ({shown}); every number in "
            f"{out / 'metrics.json'}")


def attractor_configs(quick: bool, seed: int, torus_n: int = 16) -> dict[str, FitConfig]:
    """The ring (N = 128) and hex torus (``torus_n`` squared) the demos share, at default fit
    settings; ``quick`` gives tiny versions for the tests."""
    if quick:
        return {"ring": FitConfig(n=32, steps=2, seed=seed),
                "torus": FitConfig(geometry="torus", n=(10, 10), steps=2, seed=seed)}
    return {"ring": FitConfig(n=128, seed=seed),
            "torus": FitConfig(geometry="torus", n=(torus_n, torus_n), seed=seed)}
