"""``neurodyn generate`` as a run: generative models of a fitted network's population
activity, three ways side by side (:func:`neurodyn.generative.compare.compare_generators`).

:func:`generate_run` checks every option, reads the model (and, with ``data``, the recorded
states) and makes the memory estimate before it claims ``out``; then it draws the states,
trains and judges the generators, says whether the ambient flow's samples as generated are an
attractor population (``verdict``; :mod:`neurodyn.generative.verdict`), and writes
``metrics.json``, ``timing.json``, ``generated.png``, ``barcodes.png``, ``verdict.png``,
``states.npy`` and ``generated.npz``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from _runkit import BadInput, RunDir, check_memory
from _runkit.checks import check_installed
from _runkit.files import atomic_save_npy, atomic_savez

from ..datasets import rat_trajectory
from ..generative.compare import compare_generators
from ..generative.methods import RELAX_DT
from ..generative.metrics import ATTRACTOR_BETTI, state_homology
from ..generative.sources import driven_states, recorded_states
from ..generative.states import locate, population_states
from ..generative.verdict import data_verdict, fitted_verdict
from ..io import load_model
from ..plotting.generative import (
    plot_generated,
    plot_generated_barcodes,
    plot_kept_verdict,
    verdict_title,
)

__all__ = ["GenerateConfig", "generate_run"]


@dataclass(frozen=True, kw_only=True)
class GenerateConfig:
    """What ``neurodyn generate`` runs, by the names of its options: the ``model`` (directory
    holding ``model.pt``, or the file), the ``count`` of states and the ``held`` out ones (at
    most a third), their ``noise``, the samplers' midpoint ``steps``, each flow's
    ``train_steps``, method (c)'s ``relax`` time (tau); the states' source: recorded
    ``data`` of a fit-activity model (``window`` bins per state), a ``trajectory``
    (``"none"``, ``"sargolini"``, ``"tanni"``, ``"synthetic"``; ``tau`` seconds per network
    time unit, a torus module's ``spacing`` m) or noise alone; and the ``seed``."""

    model: str
    count: int = 2000
    held: int = 400
    noise: float = 0.2
    steps: int = 5
    train_steps: int = 4500
    relax: float = 4.0
    data: str = ""
    trajectory: str = "none"
    window: int = 5
    tau: float = 0.1
    spacing: float = 0.5
    seed: int = 0



def generate_run(config: GenerateConfig, out: str | Path, arguments: dict | None = None) -> dict:
    """Run ``config`` in the run directory ``out``; return the metrics with ``seconds`` (the
    wall time of each method, written to ``timing.json``). ``config.json`` records
    ``arguments`` (default the config's fields)."""
    network, recorded, data = _checked_inputs(config)
    arguments = dataclasses.asdict(config) if arguments is None else arguments
    with RunDir(out, command="neurodyn generate", config=arguments, seed=config.seed) as run:
        if recorded is not None:
            states = recorded
        elif config.trajectory != "none":
            states = _driven(network, config)
        else:
            states = population_states(network, config.count, config.noise, seed=config.seed)
        if isinstance(data, dict):  # the model folder holds no verdict: fit the counts
            data = fitted_verdict(**data, seed=config.seed)
        samples: dict = {}
        res = compare_generators(network, states, config.held, config.steps,
                                 config.train_steps, config.relax, config.seed,
                                 samples=samples, data=data)
        metrics = res.to_dict()
        seconds = {k: c.pop("seconds") for k, c in metrics["cost"].items()}
        cpu = {k: c.pop("cpu_seconds") for k, c in metrics["cost"].items()}
        run.write_figures({"generated.png": _figure(network, samples),
                           "barcodes.png": _barcodes(network, samples, res.verdict,
                                                     config.seed),
                           "verdict.png": plot_kept_verdict(res.to_dict())})
        _write_states(run, states.rates[config.held:], samples)
        run.write_json("metrics.json", metrics)
        run.write_json("timing.json", {"seconds": seconds, "cpu_seconds": cpu})
    return {**metrics, "seconds": seconds}


def _checked_inputs(config: GenerateConfig):
    """The network, the recorded states with ``data`` (else None) and the data's own
    attractor verdict (None: the states will be the network's own; a dict of
    :func:`~neurodyn.generative.verdict.fitted_verdict`'s arguments where the model folder holds
    none), every option and file checked and the memory estimate made before ``out`` is
    claimed."""
    check_installed("ripser", "topology", "Betti numbers of generated states (neurodyn generate)")
    if 3 * config.held > config.count:
        raise BadInput(f"--held={config.held}: at most a third of --count={config.count}")
    if not math.isfinite(config.relax):
        raise BadInput(f"--relax={config.relax}: must be finite")
    if config.window % 2 == 0:
        raise BadInput(f"--window={config.window}: must be odd")
    if config.data:
        network, states, data = _recorded(config)
    else:
        network, states, data = load_model(config.model, what="--model")[0], None, None
        if network.manifold is None:
            raise BadInput(f"--model={config.model!r}: the network has no target manifold")
    size = network.geometry.size
    # the states, the three flows' copies of them and the held-out distances, float64
    check_memory("--count", 8.0 * config.count * (16.0 * size + config.held))
    # method (c) saves every state of its relaxations (u and r), float64
    check_memory("--relax", 2.0 * 8.0 * (config.relax / RELAX_DT + 2) * config.count * size)
    return network, states, data


def _recorded(config: GenerateConfig):
    """The model folder's network, the counts' states on its neurons and the data's verdict
    (the folder's, or the arguments to fit one from the counts, checked as fit-activity
    checks them)."""
    from ..inference.core import _check_inputs
    from ..inference.recordings import read_activity

    network, states = recorded_states(config.model, config.data, config.count, config.window,
                                      config.seed)
    verdict = data_verdict(config.model)
    if verdict.attractor != "unknown":
        return network, states, verdict
    data = read_activity(config.data, "--data")
    geometry = "ring" if network.geometry.dim == 1 else "torus"
    cov = data.get("heading" if geometry == "ring" else "position")
    _check_inputs(data["counts"], data["dt"], geometry, cov)
    return network, states, {"counts": data["counts"], "dt": data["dt"], "geometry": geometry,
                             "covariate": cov}


def _write_states(run, train, samples: dict) -> None:
    """``states.npy``: the training states (float32, one row per state; ``flows train --data``
    takes it; its sha256 beside it); ``generated.npz``: held-out, generated and control states
    by name."""
    atomic_save_npy(run.path("states.npy"), train.to(torch.float32).numpy())
    atomic_savez(run.path("generated.npz"),
                 **{k: v.to(torch.float32).numpy() for k, v in samples.items()})


def _driven(network, config: GenerateConfig):
    name = "sargolini" if config.trajectory == "synthetic" else config.trajectory
    tr = rat_trajectory(name, dt=0.02, seed=config.seed,
                        synthetic=config.trajectory == "synthetic")
    return driven_states(network, tr, config.count, config.noise, config.tau,
                         spacing=config.spacing, seed=config.seed)


def _barcodes(network, samples: dict, verdict, seed: int):
    homologies = {k: state_homology(r, seed=seed) for k, r in samples.items()}
    return plot_generated_barcodes(homologies, ATTRACTOR_BETTI[network.geometry.dim],
                                   verdict_title(verdict.to_dict()))


def _figure(network, samples: dict):
    phases = {k: locate(network, r)[0] for k, r in samples.items()}
    return plot_generated(samples, phases)
