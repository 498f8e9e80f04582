"""``neurodyn fit-activity`` and ``neurodyn decode`` as runs: SEAL from recorded activity.

:func:`fit_activity_run` reads and checks the recording, its covariate, the sleep recordings,
the options against them and the memory of the learned network before it claims ``out``; then
it judges the activity (:func:`~neurodyn.inference.core.fit_activity`), draws its figures and,
when the cells are tuned (and, with ``require_attractor``, the verdict is ``attractor: true``),
learns the energy and writes ``model.pt`` and ``cells.npz``. :func:`decode_run` decodes a
recording with the cells of such a model.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _runkit import BadInput, RunDir, RunFailed, check_memory
from _runkit.files import atomic_save_npy

from ..fitting.config import FitConfig
from ..fitting.plan import fit_bytes
from ..inference.core import _check_inputs, fit_activity
from ..inference.decode import wrapped
from ..inference.energy import learn_energy
from ..inference.files import decode_file, load_cells, save_cells
from ..inference.recordings import read_activity
from ..io import save_model
from ..plotting import save_figure
from ..plotting.recordings import (
    plot_decoded,
    plot_embedding,
    plot_sleep,
    plot_tuning,
    plot_verdict,
)

__all__ = ["FitActivityConfig", "DecodeConfig", "fit_activity_run", "decode_run"]


@dataclass(frozen=True, kw_only=True)
class _Recording:
    """How a recording is read: the file, its ``epoch`` (None: the only one), the ``bin``
    width (s) of spike times, and the ``window`` of bins pooled per decoded bin (odd)."""

    data: str
    epoch: str | None = None
    bin: float | None = None
    window: int = 5



@dataclass(frozen=True, kw_only=True)
class FitActivityConfig(_Recording):
    """What ``neurodyn fit-activity`` runs, by the names of its options: the ``manifold``
    (``"ring"`` or ``"torus"``), the recording (:class:`_Recording`'s fields), the ``sleep``
    recordings and their ``sleep_epoch``, the ``hold_out`` fraction, ``require_attractor``,
    ``no_covariate``, ``no_topology``, ``tau`` (s), the learned ring's ``n``, the torus's
    ``spacing`` (m) and ``orientation`` (rad) (both or neither), and the ``seed``."""

    manifold: str = "ring"
    sleep: list[str] | None = None
    sleep_epoch: str | None = None
    hold_out: float = 0.0
    require_attractor: bool = False
    no_covariate: bool = False
    no_topology: bool = False
    tau: float = 0.1
    n: int = 64
    spacing: float | None = None
    orientation: float | None = None
    seed: int = 0


@dataclass(frozen=True, kw_only=True)
class DecodeConfig(_Recording):
    """What ``neurodyn decode`` runs: the fit-activity ``model`` folder (``cells.npz``) and the
    recording (:class:`_Recording`'s fields)."""

    model: str


def fit_activity_run(config: FitActivityConfig, out: str | Path,
                     arguments: dict | None = None) -> dict:
    """Judge the activity of ``config``'s recording and learn its energy in the run directory
    ``out``; return the metrics (``metrics.json``).

    Raises :class:`_runkit.RunFailed` (``metrics.json`` written, no model) when the cells are
    not tuned, or, with ``require_attractor``, when the verdict is not ``attractor: true``.
    ``config.json`` records ``arguments`` (default the config's fields).
    """
    data, cov, sleeps = _inputs(config)
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn fit-activity", config=arguments,
                seed=config.seed) as run:
        start = time.perf_counter()
        fit = fit_activity(data["counts"], data["dt"], config.manifold, cov, sleep=sleeps,
                           hold_out=config.hold_out, window=config.window, tau=config.tau,
                           spacing=config.spacing, orientation=config.orientation,
                           topology=not config.no_topology, seed=config.seed)
        metrics = fit.metrics()
        _figures(fit, data, sleeps, run)
        refusal = _refusal(fit, config)
        if refusal:
            metrics["model"] = None
            run.write_json("metrics.json", metrics)
            raise RunFailed(refusal)
        metrics["energy"] = _learn(fit, run, config)
        metrics["model"] = "model.pt"
        run.write_json("metrics.json", metrics)
        run.write_json("timing.json", {"seconds": time.perf_counter() - start})
    return metrics


def _inputs(config: FitActivityConfig) -> tuple[dict, object, list]:
    """Everything read and checked before ``out`` is claimed: the recording, its covariate,
    the sleep recordings, the options against them and the memory of the learned network."""
    data = read_activity(config.data, "--data", config.epoch, config.bin)
    cov = _covariate(config, data)
    if (config.spacing is None) != (config.orientation is None):
        raise BadInput("--spacing, --orientation: give both or neither")
    if config.orientation is not None and not math.isfinite(config.orientation):
        raise BadInput(f"--orientation={config.orientation!r}: must be finite")
    _check_inputs(data["counts"], data["dt"], config.manifold, cov)
    _check_window(config.window, data)
    end = int(round(config.hold_out * data["counts"].shape[0]))
    if config.hold_out and (data["counts"].shape[0] - end < 100 or end < 10):
        raise BadInput(f"--hold-out={config.hold_out}: leaves {data['counts'].shape[0] - end} "
                       f"bins to fit and {end} to decode; need >= 100 and >= 10")
    if config.manifold == "ring":
        check_memory("--n", fit_bytes(FitConfig(n=config.n)))
    return data, cov, _sleeps(config, data)


def _covariate(config: FitActivityConfig, data: dict):
    if config.no_covariate:
        if config.manifold == "torus":
            raise BadInput("--no-covariate: a torus is fitted with the positions only")
        return None
    key = "heading" if config.manifold == "ring" else "position"
    if key not in data:
        if config.manifold == "torus":
            raise BadInput(f"--data={config.data!r}: a torus needs 'position' (T, 2) in the "
                           "file")
        return None
    return data[key]


def _check_window(window: int, data: dict, name: str = "--data") -> None:
    if window > data["counts"].shape[0]:
        raise BadInput(f"--window={window}: longer than the recording "
                       f"({data['counts'].shape[0]} bins in {name})")


def _sleeps(config: FitActivityConfig, data: dict) -> list:
    out = []
    for k, path in enumerate(config.sleep or ()):
        s = read_activity(path, f"--sleep={path!r}", config.sleep_epoch, config.bin)
        if abs(s["dt"] - data["dt"]) > 1e-9 * data["dt"]:
            raise BadInput(f"--sleep={path!r}: bins of {s['dt']:g} s; the wake recording's are "
                           f"{data['dt']:g} s (give both at one bin width)")
        if s["counts"].shape[1] != data["counts"].shape[1]:
            raise BadInput(f"--sleep={path!r}: {s['counts'].shape[1]} cells; --data has "
                           f"{data['counts'].shape[1]}")
        out.append(s["counts"])
        if k == 0 and s["counts"].shape[0] * s["dt"] < 60:
            raise BadInput(f"--sleep={path!r}: {s['counts'].shape[0] * s['dt']:.0f} s of sleep; "
                           "its tests need >= 60 s")
    return out


def _refusal(fit, config: FitActivityConfig) -> str:
    """Why no model is written, or '' (one is)."""
    if not fit.tuned:
        return f"no model: {fit.verdict.reason} ({fit.tests['tuning'].reason})"
    if config.require_attractor and fit.attractor is not True:
        return (f"no model (--require-attractor): attractor is {fit.attractor!r}: "
                f"{fit.verdict.reason}")
    return ""


def _figures(fit, data, sleeps, run) -> None:
    save_figure(plot_verdict(fit.verdict), run.path("verdict.png"))
    if fit.cells is None:
        return
    if fit.geometry == "ring":
        save_figure(plot_tuning(fit), run.path("tuning.png"))
    if fit.held_out_reference is not None:
        save_figure(plot_decoded(fit.held_out_decoded, fit.held_out_reference, fit.dt),
                    run.path("decoded.png"))
    colour = fit.reference if fit.geometry == "ring" else None
    fitted = data["counts"][: fit.reference.shape[0], fit.used]
    slept = fit.sleep
    save_figure(plot_embedding(fitted, fit.dt, colour, sleeps[0][:, fit.used] if sleeps else
                               None, _per_bin(slept, fit.dt) if slept else None, fit.geometry),
                run.path("embedding.png"))
    if slept is not None:
        save_figure(plot_sleep(slept), run.path("sleep.png"))


def _per_bin(slept, dt):
    """The first sleep recording's decoded bump per bin (each window's value repeated)."""
    per = max(1, int(round(slept.window_s / dt)))
    return np.repeat(slept.decoded[0], per, axis=0)


def _learn(fit, run, config: FitActivityConfig) -> dict:
    network, info = learn_energy(fit, n=config.n, seed=config.seed)
    save_model(network, run.path("model.pt"), extra={"fit_activity": {
        "kappa": info["kappa"], "kappa_source": info["kappa_source"],
        "profile_used": info["profile_used"]}})
    save_cells(run.path("cells.npz"), fit)
    return {k: v for k, v in info.items() if k != "config"}


def decode_run(config: DecodeConfig, out: str | Path, arguments: dict | None = None) -> dict:
    """Decode ``config``'s recording with the cells of its model into the run directory
    ``out``: ``decoded.npy``, ``decoded.png`` (ring) and ``metrics.json``; the model and the
    recording are read and checked against each other before ``out`` is claimed."""
    cells, info = load_cells(config.model)
    data = read_activity(config.data, "--data", config.epoch, config.bin)
    if data["counts"].shape[1] != info["used"].size:
        raise BadInput(f"--data: {data['counts'].shape[1]} cells; the model was fitted to "
                       f"{info['used'].size}")
    if abs(data["dt"] - info["dt"]) > 1e-9 * info["dt"]:
        raise BadInput(f"--data: bins of {data['dt']:g} s; the model's cells were fitted in bins "
                       f"of {info['dt']:g} s")
    _check_window(config.window, data)
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn decode", config=arguments) as run:
        decoded = decode_file(cells, info, data, config.window)
        atomic_save_npy(run.path("decoded.npy"), decoded)
        metrics = {"geometry": info["geometry"], "bins": int(decoded.shape[0]),
                   "seconds": float(decoded.shape[0] * data["dt"])}
        if info["geometry"] == "ring" and "heading" in data:
            err = np.abs(wrapped(decoded - data["heading"]))
            metrics["median_error_deg"] = math.degrees(float(np.median(err)))
            save_figure(plot_decoded(decoded, data["heading"], data["dt"], title="decoding"),
                        run.path("decoded.png"))
        elif info["geometry"] == "ring":
            save_figure(plot_decoded(decoded, np.full(decoded.shape, np.nan), data["dt"],
                                     title="decoded without a covariate"),
                        run.path("decoded.png"))
        run.write_json("metrics.json", metrics)
    return metrics
