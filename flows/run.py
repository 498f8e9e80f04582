"""Runs that write their outputs: the library behind ``flows train``, ``eval`` and ``experiment``.

Each ``run_*`` function writes into ``out``: ``config.json`` (what ran), ``metrics.json`` (the
numbers), PNG figures and artifacts, and returns the metrics dict.
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from .checkpoint import atomic_write_json, save_model
from .conditions import evaluate_conditional
from .data import Dataset, Splits, load_array, load_dataset
from .errors import FlowsError, check_positive_int, derive_seed
from .evaluation import evaluate, sliced_w
from .field import FieldSpec, TwoLayerReLUField
from .plotting import (
    plot_digits,
    plot_digits_by_class,
    plot_drift,
    plot_lambda0,
    plot_loss,
    plot_loss_curves,
    plot_metric_vs,
    plot_samples,
    plot_trajectories,
)
from .sample import integrate
from .theory import (
    guaranteed_log_rate,
    kernel_h,
    log_loss_slope,
    sample_sweep,
    width_sweep,
    within_guarantee,
)
from .training import CHECKPOINT as CHECKPOINT_NAME
from .training import TrainConfig, fixed_objective, prepare_data, train


def _save(fig, path: Path) -> str:
    fig.savefig(path, dpi=120)
    return path.name


def sample_field(field: TwoLayerReLUField, source: Dataset, n: int, seed: int,
                 solver: str = "midpoint", steps: int = 20, save_trajectory: bool = False):
    """Draw n source points (seeded) and push them through the flow; see :func:`integrate`."""
    params = list(field.parameters()) if isinstance(field, torch.nn.Module) else []
    x0 = source.sample(check_positive_int("n", n), seed)
    x0 = x0.to(params[0].device) if params else x0
    return integrate(field, x0, method=solver, steps=steps, save_trajectory=save_trajectory)


def evaluate_field(field: TwoLayerReLUField, splits: Splits, source: Dataset, seed: int,
                   solver: str = "midpoint", steps: int = 20) -> dict:
    """W2 (2-D data) or sliced W (higher d) of generated samples to held-out data, with floor.

    The number of generated points equals the number of held-out points, so the value and the
    floor are taken at the same sample sizes.
    """
    n = splits.heldout.shape[0]
    res = sample_field(field, source, n, derive_seed(seed, "eval-samples"), solver, steps)
    res = replace(res, x=res.x.cpu())
    metric = "w2" if splits.heldout.shape[1] <= 3 else "sliced"
    m = evaluate(res.x, splits.heldout, metric, splits.floor,
                 seed=derive_seed(seed, "sliced") % 2**31)
    out = {f"{metric}_heldout": m.value, f"{metric}_floor": m.floor, "n_eval": n,
           "nfe": res.nfe, "solver": solver, "sample_steps": steps}
    if metric == "sliced":
        w = evaluate(res.x, splits.heldout, "w2", splits.floor)
        out["w2_heldout"], out["w2_floor"] = w.value, w.floor
    return out | {"_samples": res.x}


def run_training(config: TrainConfig, out: str | Path, fresh: bool = False,
                 solver: str = "midpoint", sample_steps: int = 20,
                 progress: bool | None = None, workers: int | None = None,
                 device: str = "cpu", guidance: float = 1.0) -> dict:
    """Train (resuming from ``out/checkpoint.pt`` unless ``fresh``), evaluate and draw figures.

    ``workers`` and ``device`` are passed to :func:`flows.training.train`. A class-conditional
    run is evaluated per class at guidance scale ``guidance``
    (:func:`flows.conditions.evaluate_conditional`) and draws its digits by class.

    Writes ``model.pt``, ``config.json``, ``metrics.json``, ``loss.png``, ``samples.png`` and,
    for 2-D data, ``trajectories.png``. Returns the metrics.
    """
    cfg = config.resolved()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if fresh and (out / CHECKPOINT_NAME).exists():
        (out / CHECKPOINT_NAME).unlink()
    atomic_write_json({"command": "train", "train": cfg.to_dict(), "solver": solver,
                       "sample_steps": sample_steps}, out / "config.json")
    splits, source = prepare_data(cfg)
    res = train(cfg, out_dir=out, progress=progress, splits=splits, source=source,
                workers=workers, device=device)
    save_model(out / "model.pt", res.field, cfg.to_dict())
    t0 = time.perf_counter()
    if res.classes:
        ev = evaluate_conditional(res.field, splits, source, cfg.seed, solver, sample_steps,
                                  guidance)
        labels = ev.pop("_labels")
    else:
        ev = evaluate_field(res.field, splits, source, cfg.seed, solver, sample_steps)
    samples = ev.pop("_samples")
    tail = max(1, res.steps_done // 100)
    metrics = {"final_loss": float(res.losses[-tail:].mean()), "last_loss": float(res.losses[-1]),
               "steps": res.steps_done, "train_wall_time_s": res.wall_time,
               "eval_wall_time_s": time.perf_counter() - t0, "n_train": splits.train.shape[0],
               **ev}
    if res.test_loss is not None:
        metrics["test_loss"] = res.test_loss
        metrics["generalization_gap"] = res.test_loss - metrics["last_loss"]
    figs = [_save(plot_loss(res.losses, smooth=max(1, res.steps_done // 200)), out / "loss.png")]
    d = splits.heldout.shape[1]
    if d == 64 and res.classes:
        figs.append(_save(plot_digits_by_class(samples, labels, title="generated digits by "
                                               f"class (guidance {guidance:g})"),
                          out / "samples_by_class.png"))
    if d == 64:
        figs.append(_save(plot_digits(samples, title="generated digits"), out / "samples.png"))
        figs.append(_save(plot_digits(splits.heldout, title="held-out digits"), out / "data.png"))
    elif d >= 2:
        figs.append(_save(plot_samples(samples[:, :2], splits.heldout[:, :2]), out / "samples.png"))
    if d == 2 and not res.classes:
        tr = sample_field(res.field, source, 300, derive_seed(cfg.seed, "traj"), solver,
                          sample_steps, save_trajectory=True)
        figs.append(_save(plot_trajectories(tr.trajectory, tr.times), out / "trajectories.png"))
    metrics["figures"] = figs
    atomic_write_json(metrics, out / "metrics.json")
    return metrics


def reference_for(name: str, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A reference sample of a named dataset and an independent floor sample of the same size.

    Finite datasets give two disjoint random subsets (at most half the rows each).
    """
    ds = load_dataset(name, name="data")
    n = check_positive_int("n", n)
    if ds.pool is None:
        ref = ds.sample(n, derive_seed(seed, "reference"))
        return ref, ds.sample(n, derive_seed(seed, "floor"))
    g = torch.Generator().manual_seed(derive_seed(seed, "reference"))
    perm = torch.randperm(ds.pool.shape[0], generator=g)
    k = min(n, ds.pool.shape[0] // 2)
    return ds.pool[perm[:k]], ds.pool[perm[k:2 * k]]


def run_eval(samples: str | Path, reference: str | Path | None = None, data: str | None = None,
             metric: str = "w2", seed: int = 0, out: str | Path | None = None) -> dict:
    """metric(samples, reference) with, for a named ``data`` reference, its noise floor.

    Exactly one of ``reference`` (a .npy/.csv file) and ``data`` (a dataset name) is required.
    Returns {metric, value, n_samples, n_reference[, floor]}.
    """
    if (reference is None) == (data is None):
        raise FlowsError("give exactly one of reference (a file) and data (a dataset name)")
    x = load_array(samples, name="samples")
    if data is not None:
        ref, floor = reference_for(data, x.shape[0], seed)
    else:
        ref, floor = load_array(reference, name="reference"), None  # type: ignore[arg-type]
    if ref.shape[1] != x.shape[1]:
        raise FlowsError(f"samples have dimension {x.shape[1]} but the reference has "
                         f"{ref.shape[1]}; they must be equal")
    res = evaluate(x, ref, metric, floor, seed=seed).to_dict()
    if out is not None:
        out = Path(out)
        atomic_write_json({"command": "eval", "samples": str(samples), "reference":
                           None if reference is None else str(reference), "data": data,
                           "metric": metric, "seed": seed}, out / "config.json")
        atomic_write_json(res, out / "metrics.json")
    return res


def _theory_base(data: str, n: int, k: int, steps: int, lr: float | None, seed: int,
                 width: int = 1024, n_eval: int = 1000) -> TrainConfig:
    return TrainConfig(data=data, regime="theory", n_train=n, k_draws=k, steps=steps, lr=lr,
                       seed=seed, width=width, n_eval=n_eval)


def run_width_experiment(out: str | Path, widths: list[int], data: str = "moons", n: int = 256,
                         k: int = 4, steps: int = 500, lr: float | None = None, seed: int = 0,
                         sample_steps: int = 20) -> dict:
    """Theory regime at several widths: loss curves, drift vs m, lambda_0, W2 vs m (figures).

    Writes config.json, metrics.json, loss_curves.png, drift_vs_width.png, lambda0.png and
    w2_vs_width.png into ``out``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = _theory_base(data, n, k, steps, lr, seed)
    atomic_write_json({"command": "experiment width", "widths": widths,
                       "base": base.resolved().to_dict()}, out / "config.json")
    res = width_sweep(widths, base, sample_steps=sample_steps, with_lambda=False)
    cfg = base.resolved()
    splits, source = prepare_data(cfg)
    spec = FieldSpec(splits.train.shape[1], 1, "theory", True, cfg.fourier)
    z, _ = fixed_objective(splits.train[:n], source, k, cfg.path, cfg.sigma_min, spec,
                           derive_seed(seed, "objective"))
    ev = torch.linalg.eigvalsh(kernel_h(z)).numpy()
    runs = res["runs"]
    rate = guaranteed_log_rate(float(ev[0]), float(cfg.lr), n * k)  # type: ignore[arg-type]
    late = [log_loss_slope(r["losses"], steps // 5) for r in runs]  # after the fast transient
    metrics = {"widths": widths, "n": n, "k": k, "steps": steps, "lambda_0": float(ev[0]),
               "drift_slope": res.get("drift_slope"),
               "drift": [r["drift"] for r in runs],
               "log_loss_slope": [r["slope"] for r in runs],
               "log_loss_r2": [r["slope_r2"] for r in runs],
               "log_loss_slope_late": [f.slope for f in late],
               "log_loss_r2_late": [f.r2 for f in late],
               "guaranteed_log_rate": rate,
               "below_guarantee": [within_guarantee(r["losses"], rate) for r in runs],
               "final_train_loss": [r["train_loss"] for r in runs],
               "test_loss": [r["test_loss"] for r in runs],
               "w2": [r["w2"] for r in runs], "w2_floor": [r["floor"] for r in runs]}
    np.savez_compressed(out / "losses.npz", **{f"m{r['width']}": np.asarray(r["losses"])
                                               for r in runs})
    figs = [
        _save(plot_loss_curves({f"m={r['width']}": r["losses"] for r in runs},
                               fits=[(steps // 5, f.slope, f.intercept) for f in late],
                               guarantee=rate),
              out / "loss_curves.png"),
        _save(plot_drift(widths, metrics["drift"], metrics["drift_slope"]),
              out / "drift_vs_width.png"),
        _save(plot_lambda0(None, [], eigenvalues=ev), out / "lambda0.png"),
        _save(plot_metric_vs(widths, metrics["w2"], metrics["w2_floor"], "width m"),
              out / "w2_vs_width.png"),
    ]
    metrics["figures"] = figs
    atomic_write_json(metrics, out / "metrics.json")
    return metrics


def run_samples_experiment(out: str | Path, ns: list[int], data: str = "moons",
                           width: int = 4096, k: int = 4, steps: int = 500,
                           lr: float | None = None, seed: int = 0, sample_steps: int = 20) -> dict:
    """Theory regime at several n: generalization gap and W2 (with floor) versus n (figures).

    Writes config.json, metrics.json, gap_vs_n.png and w2_vs_n.png into ``out``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = replace(_theory_base(data, ns[0], k, steps, lr, seed), width=width)
    atomic_write_json({"command": "experiment samples", "ns": ns,
                       "base": asdict(base.resolved())}, out / "config.json")
    runs = sample_sweep(ns, base, sample_steps=sample_steps, with_lambda=False)["runs"]
    metrics = {"ns": ns, "width": width, "k": k, "steps": steps,
               "train_loss": [r["train_loss"] for r in runs],
               "test_loss": [r["test_loss"] for r in runs],
               "generalization_gap": [r["gap"] for r in runs],
               "w2": [r["w2"] for r in runs], "w2_floor": [r["floor"] for r in runs]}
    figs = [
        _save(plot_metric_vs(ns, metrics["generalization_gap"], None, "training points n",
                             "generalization gap"), out / "gap_vs_n.png"),
        _save(plot_metric_vs(ns, metrics["w2"], metrics["w2_floor"], "training points n"),
              out / "w2_vs_n.png"),
    ]
    metrics["figures"] = figs
    atomic_write_json(metrics, out / "metrics.json")
    return metrics


def load_samples_array(path: str | Path) -> np.ndarray:
    """Samples saved by ``flows sample`` (shape (N, d))."""
    return load_array(path, name="samples").numpy()


__all__ = ["run_training", "run_eval", "run_width_experiment", "run_samples_experiment",
           "evaluate_field", "sample_field", "reference_for", "sliced_w"]
