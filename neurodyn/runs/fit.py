"""``neurodyn fit`` as a run: check the whole input, claim the run directory, fit, and write
``model.pt``, ``metrics.json``, ``timing.json`` and the fit report's figures."""

from __future__ import annotations

import functools
from pathlib import Path

from _runkit import RunDir, check_interrupt

from ..analysis.attraction import attraction_report
from ..analysis.recovery import network_report
from ..experiments.capacity import resting_correlation
from ..fitting.checkpoint import check_resumable
from ..fitting.core import FitConfig, FitFailed, FitInterrupted, fit_prepared
from ..fitting.plan import FitPlan, prepare
from ..fitting.profiles import band_edge_content, profile_label
from ..io import save_model, write_json
from ..network import HopfieldNetwork
from ..plotting import plot_bump, plot_connectivity, plot_loss, plot_spectrum, save_figure

__all__ = ["fit_run", "write_network_report", "CHECKPOINT"]

#: the checkpoint of a fit in its run directory
CHECKPOINT = "fit_state.pt"


def fit_run(config: FitConfig, out: str | Path, fresh: bool = False,
            progress: bool | None = None) -> dict:
    """Fit a network in the run directory ``out``: ``model.pt``, ``metrics.json``,
    ``timing.json``, ``config.json`` and the fit report's figures.

    The whole input is checked, and what the fit needs built once
    (:func:`~neurodyn.fitting.plan.prepare`: the sizes against the memory limits, the target
    manifold, the template), and a checkpoint in ``out`` that this config cannot continue is
    refused, before ``out`` is claimed (:class:`_runkit.RunDir`, ``config.json`` holding
    :meth:`~neurodyn.fitting.plan.FitPlan.resolved`), and what was built is fitted
    (:func:`~neurodyn.fitting.core.fit_prepared`).

    Parameters
    ----------
    config : FitConfig
        What to fit.
    out : str or Path
        The run directory; a checkpoint ``fit_state.pt`` there is resumed unless ``fresh``.
    fresh : bool
        Ignore an existing checkpoint and start over.
    progress : bool or None
        Show a progress bar (default: only on a terminal).

    Returns
    -------
    dict
        The metrics written to ``metrics.json``, and ``resumed_from_step`` (the step this
        process resumed from, 0 for a fresh fit), written to ``timing.json`` with the wall time.

    Raises
    ------
    FitFailed
        kappa was missed (``config.check_kappa``): ``metrics.json`` is written, no model.
    """
    plan = prepare(config)
    check = None if fresh else functools.partial(check_resumable, Path(out) / CHECKPOINT,
                                                  config)
    with RunDir(out, command="neurodyn fit", config=plan.resolved(), seed=config.seed,
                fresh=fresh, check=check) as run:
        return _fit_and_report(plan, run.out, fresh, progress)


def _fit_and_report(plan: FitPlan, out: Path, fresh: bool, progress: bool | None) -> dict:
    """Fit ``plan`` (resuming ``out``'s checkpoint unless ``fresh``) and write its files."""
    config = plan.config
    result = fit_prepared(plan, out_dir=out, resume=not fresh, progress=progress)
    if result.network.bias.device.type != "cpu":  # the report and model.pt are on the CPU
        result.network = result.network.cpu()
        result.network.manifold = result.network.manifold.to("cpu")
    # how long and from which step this process ran differ between an interrupted-and-resumed
    # fit and an uninterrupted one, so they go to timing.json, not metrics.json
    write_json({"fit_seconds": result.seconds, "resumed_from_step": result.resumed_from},
               out / "timing.json")
    metrics = {"device": config.device,
               "final_loss": {k: v[-1] for k, v in result.history.items() if v}}
    try:  # the report simulates (numba compiles): a Ctrl-C there may surface only as the flag
        check_interrupt()
        metrics.update(write_network_report(result.network, out, result.history,
                                            family=config.family, unfitted=result.unfitted))
        check_interrupt()
        report = attraction_report(result.network, config.kappa, config.tolerance)
        check_interrupt()
    except KeyboardInterrupt:
        raise FitInterrupted(f"fit interrupted after all {config.steps} steps, while its report "
                             f"was made; checkpoint {out / CHECKPOINT} holds them; rerun the "
                             "same command to write the model and report") from None
    metrics["attraction"] = report.to_dict()
    if config.profile != "cosine":  # the cosine default's metrics.json stays as it was
        metrics["profile"] = _profile_metrics(result.network, config)
    failed = report.failed
    write_json(metrics, out / "metrics.json")
    if failed and config.check_kappa:
        raise FitFailed(f"kappa={config.kappa:g} not reached: " + "; ".join(failed)
                        + f" (no model written; see {out / 'metrics.json'})")
    # the run directory is this command's (claimed under its lock): a rerun replaces its model
    save_model(result.network, out / "model.pt", overwrite=True)  # records the fit config
    return {"resumed_from_step": result.resumed_from, **metrics}


def _profile_metrics(network: HopfieldNetwork, config: FitConfig) -> dict:
    """The fitted profile, the family, its band-edge content
    (:func:`~neurodyn.fitting.profiles.band_edge_content`) and how well the bump the network
    rests in matches the requested rates
    (:func:`~neurodyn.experiments.capacity.resting_correlation`)."""
    out = {"name": profile_label(config.profile), "family": config.family,
           "band_edge_content": band_edge_content(network.geometry, network.manifold.u0)}
    if config.family == "template":
        out["harmonics"] = network.energy_fn.harmonics
        out["leak"] = float(network.energy_fn.leak)
    out["rate_correlation"] = resting_correlation(network)
    return out


def write_network_report(network: HopfieldNetwork, out: str | Path,
                         history: dict | None = None, zero_tol: float = 1e-3,
                         family: str = "seal", unfitted: dict | None = None) -> dict:
    """Draw :func:`~neurodyn.analysis.recovery.network_report` into ``out``.

    Writes ``jacobian_spectrum.png``, ``connectivity.png``, ``bump.png`` (ring) and, given a
    loss ``history``, ``fit_loss.png`` (:func:`~neurodyn.plotting.plot_loss` with the fit's
    ``family`` and ``unfitted`` losses).

    Returns
    -------
    dict
        The report's numbers (:meth:`~neurodyn.analysis.recovery.NetworkReport.to_dict`).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = network_report(network, zero_tol)
    save_figure(plot_spectrum(report.eigenvalues, zero_tol), out / "jacobian_spectrum.png")
    save_figure(plot_connectivity(report.connectivity), out / "connectivity.png")
    if network.geometry.dim == 1:
        save_figure(plot_bump(network), out / "bump.png")
    if history:
        save_figure(plot_loss(history, family=family, unfitted=unfitted), out / "fit_loss.png")
    return report.to_dict()
