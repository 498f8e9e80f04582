"""Learning attractor energies (the "L" in SEAL).

:func:`fit` fits an energy of the SEAL family (:class:`~neurodyn.energies.seal.SealEnergy`:
spectral + pointwise + phase-locking terms, or the spectral part alone as a control) from states
sampled near and far from the target manifold ``M``:

1. *fixed points on M*: imposed exactly by the spectral slopes (linear in the other parts'
   parameters, solved in closed form at every evaluation), and measured;
2. *linearised normal field*: for probe directions ``d`` (white, smooth, odd about the bump
   centre, amplitude) at random manifold points, ``tau J d = -kappa P d``, with ``P`` the
   oblique projection removing the tangent part along the dynamics' own splitting;
3. *finite restoring field*: for perturbations of relative size up to ``strength``,
   ``tau f(u) = -kappa (u - u*(psi_hat))`` relative to ``kappa ||u - u*||``;
4. *energy*: ``E(u) - E(M) = kappa B(u, psi_hat)`` relative to ``kappa B``, with ``B`` the
   Bregman divergence of the leak and ``psi_hat`` the nearest point in that metric
   (:mod:`neurodyn.manifold`).

Each term is a residual weighted by ``weight_*``. The energy is linear in every learnable
coefficient (per-mode curvatures, the pointwise basis, the locking strengths), so every residual
is affine in them: each step samples a fresh batch (seeded by ``seed`` and the step number),
adds its normal equations to running sums, and the coefficients are their ridge-regularised
least-squares solution. The checkpoint holds those sums, so a resumed fit ends bit-identical to
an uninterrupted one. The transport gains are fitted exactly afterwards.

``config.device`` places the network, the targets and the batched design there; batches are
drawn on the CPU (the same states on every device) and the normal equations are summed and
solved on the CPU, so checkpoints load anywhere and a fit may resume on another device.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from _runkit import RunFailed
from _runkit.files import check_like
from _runkit.results import Result, require_pandas, require_xarray
from _runkit.runtime import with_threads

from ..manifold import (
    PROBES,
    TargetManifold,
    bregman,
    nearest_point,
    oblique_projection,
    probe_directions,
)
from ..network import HopfieldNetwork, Transport
from .checkpoint import checkpointed_steps, load_checkpoint, save_checkpoint, to_device
from .config import FitConfig
from .neural import train_neural
from .plan import FitPlan, build_network, prepare, resolved_config
from .streamed import normal_equations, stream_batch
from .template import train_template

__all__ = ["FitConfig", "FitResult", "FitFailed", "FitInterrupted", "fit", "fit_prepared",
           "TERMS"]

TERMS = ("linear", "field", "energy")


class FitFailed(RunFailed):
    """A fit ended without reaching what it was asked for (exit status 1)."""


class FitInterrupted(KeyboardInterrupt):
    """Ctrl-C during a fit; the message says what the saved checkpoint holds."""


@dataclass
class FitResult(Result):
    """Outcome of :func:`fit`: the network, per-step losses of each term and the wall time.

    ``unfitted`` holds, for the closed-form families (``seal``, ``spectral``), each term's loss
    on the same batches with no learned energy (``theta = 0``): what the fit brought down;
    ``plan`` what the fit was built from (:class:`FitPlan`).
    """

    network: HopfieldNetwork
    config: FitConfig
    history: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0
    resumed_from: int = 0
    unfitted: dict[str, float] = field(default_factory=dict)

    plan: FitPlan | None = field(default=None, repr=False, metadata={"json": False})

    def __post_init__(self) -> None:
        # the network remembers its fit, so save_model records the config with the weights
        self.network.fit_config = (self.plan.resolved() if self.plan
                                   else resolved_config(self.config))

    def __repr__(self) -> str:
        c = self.config
        last = ", ".join(f"{k}={v[-1]:.3g}" for k, v in self.history.items() if v)
        return (f"FitResult({c.geometry} n={self.network.geometry.shape}, family={c.family!r}, "
                f"kappa={c.kappa}, steps={len(next(iter(self.history.values()), []))}, "
                f"final losses: {last or 'none'}, seconds={self.seconds:.3g})")

    def to_pandas(self):
        """Each term's loss per step (``history``) as a DataFrame indexed by ``step``.

        Returns
        -------
        pandas.DataFrame
        """
        pd = require_pandas("FitResult.to_pandas()")
        return pd.DataFrame(self.history).rename_axis("step")

    def to_xarray(self):
        """Each term's loss per step as an ``xarray.Dataset`` (dimension ``step``, one variable
        per term); needs xarray (extra ``xarray``).

        Returns
        -------
        xarray.Dataset
        """
        require_xarray("FitResult.to_xarray()")
        return self.to_pandas().to_xarray()


def _batch(manifold: TargetManifold, config: FitConfig, step: int):
    """The sampled states of one step: probes for the linear term, perturbed states."""
    g = manifold.geometry
    gen = torch.Generator().manual_seed((config.seed * 1_000_003 + step) % 2**64)
    psi = g.random_phase(config.batch * len(PROBES), gen)
    parts = psi.split(config.batch)
    dirs = torch.cat([probe_directions(manifold, p, k, gen) for p, k in zip(parts, PROBES,
                                                                               strict=True)])
    low = 0.1 * config.strength
    s = low + (config.strength - low) * torch.rand(len(psi), generator=gen, dtype=psi.dtype)
    fdirs = torch.cat([probe_directions(manifold, p, k, gen) for p, k in zip(parts, PROBES,
                                                                                strict=True)])
    u = manifold.u_star(psi) + (s * manifold.norm).reshape((-1,) + (1,) * g.dim) * fdirs
    near = nearest_point(manifold, u)
    return {"psi": psi, "dirs": dirs, "u": u, "near": near, "us_near": manifold.u_star(near),
            "bregman": bregman(manifold, u, near)}


def _residuals(net: HopfieldNetwork, manifold: TargetManifold, config: FitConfig, b: dict):
    """Residual vectors of the three terms, each scaled so its sum of squares is its loss."""
    g, act, kappa = net.geometry, net.activation, config.kappa
    out = {}
    us = manifold.u_star(b["psi"])
    d = act.derivative(us)
    dirs = b["dirs"]
    jd = -dirs - net.energy_fn.hvp(act(us), d * dirs)  # tau J d
    tang = manifold.tangents(b["psi"]).flatten(1, -2)
    pd = oblique_projection(dirs.flatten(1), tang, d.flatten(1).unsqueeze(-1) * tang)
    count = dirs.shape[0]
    out["linear"] = ((jd.flatten(1) + kappa * pd) / (kappa * math.sqrt(count))).flatten()
    delta = b["u"] - b["us_near"]
    f = net.field(b["u"]) * net.tau
    norm = delta.flatten(1).norm(dim=-1, keepdim=True)
    out["field"] = ((f + kappa * delta).flatten(1) / (kappa * norm * math.sqrt(count))).flatten()
    rise = net.energy(b["u"]) - net.energy(manifold.u0)
    target = kappa * b["bregman"]
    out["energy"] = (rise - target) / (target * math.sqrt(count))
    del g
    return out


#: elements of one batched state tensor (parameter sets x states x neurons) per vmap chunk
_DESIGN_CHUNK_ELEMENTS = 2**22


def _theta_tensors(net: HopfieldNetwork, theta: torch.Tensor) -> dict[str, torch.Tensor]:
    """The network's learnable tensors with ``theta`` written into their free entries, out of
    place (:meth:`SealEnergy.set_theta` without mutation), by their names in ``net``, plus
    private copies of the spectral anchor buffers that :meth:`SealEnergy.refresh` writes."""
    energy = net.energy_fn
    names = {id(t): k for k, t in (*net.named_parameters(), *net.named_buffers())}
    out, i = {}, 0
    for t, m in energy.free_parameters():
        idx = m.flatten().nonzero().squeeze(-1)
        flat = torch.zeros(t.numel(), dtype=torch.float64,
                           device=t.device).index_copy(0, idx, theta[i:i + idx.numel()])
        out[names[id(t)]] = torch.where(m, flat.reshape(t.shape), t.detach())
        i += idx.numel()
    for buf in ("anchor_x", "anchored"):  # written by refresh, the same for every theta
        t = getattr(energy.spectral, buf)
        out[names[id(t)]] = t.detach().clone()
    t = energy.spectral.anchor_slope  # depends on theta: batched under vmap (+ 0 theta)
    out[names[id(t)]] = t.detach() + 0.0 * theta.sum()
    return out


def _design(net, manifold, config, b):
    """``A, y`` per term with residual ``= A theta - y`` (the residuals are affine in theta).

    The residuals at theta = 0 and at every unit vector e_j are evaluated in one batched pass
    (:func:`torch.func.vmap` over the parameter sets, through
    :func:`torch.func.functional_call`; what does not depend on theta is computed once), in
    chunks of at most ``_DESIGN_CHUNK_ELEMENTS`` state entries. Column j of ``A`` is
    ``residual(e_j) - residual(0)``; the network's own parameters are left untouched.
    """
    energy = net.energy_fn
    p = energy.theta().numel()
    dev = b["u"].device
    thetas = torch.cat([torch.zeros(1, p, dtype=torch.float64, device=dev),
                        torch.eye(p, dtype=torch.float64, device=dev)])

    call = _ResidualCall(net)

    def residuals(theta):
        energy._key = None  # the tensors are replaced: refresh the slopes for them
        tensors = {f"net.{k}": v for k, v in _theta_tensors(net, theta).items()}
        return torch.func.functional_call(call, tensors, (manifold, config, b),
                                          tie_weights=False, strict=False)

    per_set = max(1, b["u"].numel() + b["dirs"].numel())
    chunk = max(1, _DESIGN_CHUNK_ELEMENTS // per_set)
    try:
        with torch.no_grad():
            res = torch.func.vmap(residuals, chunk_size=min(chunk, p + 1))(thetas)
    finally:
        energy._key = None
        energy.spectral._coef_cache = None
    return {k: ((res[k][1:] - res[k][0]).T.contiguous(), -res[k][0]) for k in TERMS}


class _ResidualCall(torch.nn.Module):
    """:func:`_residuals` as a module call (what :func:`torch.func.functional_call` runs)."""

    def __init__(self, net: HopfieldNetwork):
        super().__init__()
        self.net = net

    def forward(self, manifold, config, b):
        return _residuals(self.net, manifold, config, b)


def _weights(config: FitConfig) -> dict[str, float]:
    return {"linear": config.weight_linear, "field": config.weight_field,
            "energy": config.weight_energy}


def _solve(sums: dict, config: FitConfig) -> torch.Tensor:
    w = _weights(config)
    ata = sum(w[k] * sums[k]["ata"] for k in TERMS)
    aty = sum(w[k] * sums[k]["aty"] for k in TERMS)
    p = ata.shape[0]
    if p == 0:
        return torch.zeros(0, dtype=torch.float64)
    lam = config.ridge * float(ata.diagonal().mean()) + 1e-300
    return torch.linalg.solve(ata + lam * torch.eye(p, dtype=ata.dtype), aty)


def _term_losses(sums: dict, theta: torch.Tensor, steps: int) -> dict[str, float]:
    """Mean over steps of each term's loss ``|A theta - y|^2`` on the accumulated batches."""
    out = {}
    for k in TERMS:
        s = sums[k]
        val = theta @ s["ata"] @ theta - 2 * theta @ s["aty"] + s["yty"]
        out[k] = float(val) / max(steps, 1)
    return out


@with_threads
def fit(config: FitConfig | None = None, out_dir: str | Path | None = None,
        progress: bool | None = None, resume: bool = True,
        device: str | torch.device | None = None, design: str = "auto") -> FitResult:
    """Fit a SEAL network to the target manifold of ``config``.

    Parameters
    ----------
    config : FitConfig or None
        The fit configuration (defaults: a 128-neuron ring); checked and built by
        :func:`prepare`, then fitted by :func:`fit_prepared`.
    out_dir : str or Path or None
        Where the checkpoint ``fit_state.pt`` goes (written atomically every ``checkpoint_every``
        steps); an existing one is resumed when its config matches, and refused (``ValueError``
        naming the differing keys) when it does not.
    progress : bool or None
        Show a progress bar (default: only on a terminal).
    resume : bool
        Resume from a checkpoint in ``out_dir`` (``False``: start over).
    device : str or torch.device or None
        Where to fit, as in :func:`~neurodyn.dynamics.simulation.simulate` and :func:`flows.train`
        (None: ``config.device``); the config the result records names it.
    design : str
        How the normal equations of a batch are built: ``"dense"`` (the batched design over
        every parameter), ``"streamed"`` (state by state in the spectral domain,
        :mod:`neurodyn.fitting.streamed`: the same equations to rounding, at the memory of a
        few sheets; SEAL tori on the CPU) or ``"auto"`` (streamed for tori above
        ``DENSE_DESIGN_MAX_NEURONS`` neurons). The families ``mlp`` and ``template`` have
        their own fits.
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    FitResult
        The network (transport fitted, on ``config.device``) and, per step, each term's loss
        at the solution.

    Raises
    ------
    FitInterrupted
        On Ctrl-C, after saving the checkpoint of the completed steps.

    Examples
    --------
    >>> result = fit(FitConfig(n=32, steps=2, batch=4, kappa=2.0))
    >>> result.network.geometry.shape, sorted(result.history)
    ((32,), ['energy', 'field', 'linear'])
    """
    config = config or FitConfig()
    if device is not None:
        config = replace(config, device=str(device))
    return fit_prepared(prepare(config, design), out_dir, progress, resume)


@with_threads
def fit_prepared(plan: FitPlan, out_dir: str | Path | None = None,
                 progress: bool | None = None, resume: bool = True) -> FitResult:
    """:func:`fit` of what :func:`prepare` built: a run checks and builds its fit before it
    claims its directory, and fits what it built. The arguments are :func:`fit`'s (the
    design is the plan's)."""
    config, geometry, manifold = plan.config, plan.geometry, plan.manifold  # on the CPU
    start = time.perf_counter()
    dev = plan.device
    target = manifold.to(dev)
    net = build_network(config, manifold, plan.harmonics).to(dev)
    net.manifold, net.energy_fn._key = target, None  # new tensors: refresh the slopes
    ckpt = Path(out_dir) / "fit_state.pt" if out_dir is not None else None
    if config.family == "template":
        return _fit_template(net, plan, target, ckpt, resume, progress, dev, start)
    if config.family == "mlp":
        return _fit_neural(net, plan, target, ckpt, resume, progress, dev, start)
    sums, history, step0 = _initial_sums(net, config, ckpt, resume)
    streamed = plan.streamed

    def save(step):
        save_checkpoint(ckpt, config, sums=sums, history=history, step=step)

    def step_fn(step):
        if streamed:
            add = normal_equations(net, target, config, stream_batch(manifold, config, step))
            for k in TERMS:
                sums[k] = {q: sums[k][q] + add[k][q] for q in sums[k]}
        else:
            _accumulate(sums, _design(net, target, config,
                                      to_device(_batch(manifold, config, step), dev)))
        losses = _term_losses(sums, _solve(sums, config), step + 1)
        for k in TERMS:
            history[k].append(losses[k])
        if not all(math.isfinite(v) for v in losses.values()):
            raise FitFailed(f"fit: a loss became non-finite at step {step}; check gain, a, c "
                            f"and kappa={config.kappa:g}")
        return {k: f"{v:.2e}" for k, v in losses.items()}

    checkpointed_steps(config, step0, history, step_fn, save, progress=progress, ckpt=ckpt,
                       holds=lambda done: f"the normal equations of steps 0-{done - 1}",
                       interrupted_cls=FitInterrupted)
    net.energy_fn.set_theta(_solve(sums, config))
    with torch.no_grad():
        net.transport = Transport.fit(geometry, target.u0, net.tau, net.activation)
    steps = max(len(history["linear"]), 1)
    unfitted = {k: float(sums[k]["yty"]) / steps for k in TERMS}  # theta = 0: no energy
    return FitResult(net, config, history, time.perf_counter() - start, step0, unfitted, plan)


def _fit_neural(net, plan: FitPlan, target, ckpt: Path | None, resume: bool,
                progress: bool | None, dev: torch.device, start: float) -> FitResult:
    """The ``mlp`` family: Adam on the neural energy (:func:`train_neural`), then the
    transport; ``start`` is the fit's start time (``time.perf_counter``)."""
    config, geometry, manifold = plan.config, plan.geometry, plan.manifold
    history, step0 = train_neural(
        net, manifold, config, ckpt, resume, progress,
        lambda step: to_device(_batch(manifold, config, step), dev),
        lambda b: _residuals(net, target, config, b),
        lambda path: load_checkpoint(path, config), FitInterrupted, FitFailed)
    with torch.no_grad():
        net.transport = Transport.fit(geometry, target.u0, net.tau, net.activation)
    return FitResult(net, config, history, time.perf_counter() - start, step0, plan=plan)


def _fit_template(net, plan: FitPlan, target, ckpt: Path | None, resume: bool,
                  progress: bool | None, dev: torch.device, start: float) -> FitResult:
    """The ``template`` family: Levenberg-Marquardt on the same residuals
    (:func:`~neurodyn.fitting.template.train_template`), then the transport."""
    config, geometry, manifold = plan.config, plan.geometry, plan.manifold
    call = _ResidualCall(net)

    def residuals(tensors, b):
        named = {f"net.energy_fn.{k}": v for k, v in tensors.items()}
        return torch.func.functional_call(call, named, (target, config, b), strict=False)

    history, step0 = train_template(
        net, config, residuals, ckpt, resume, progress,
        lambda step: to_device(_batch(manifold, config, step), dev),
        lambda path: load_checkpoint(path, config), FitInterrupted, FitFailed, target=target)
    with torch.no_grad():
        net.transport = Transport.fit(geometry, target.u0, net.tau, net.activation)
    return FitResult(net, config, history, time.perf_counter() - start, step0, plan=plan)


def _initial_sums(net, config: FitConfig, ckpt: Path | None, resume: bool):
    """``(sums, history, first step)``: zero normal equations ``A^T A``, ``A^T y``, ``y^T y``
    of each term and an empty history, or those of the checkpoint when resuming."""
    p = net.energy_fn.theta().numel()
    zeros = {k: {"ata": torch.zeros(p, p, dtype=torch.float64),
                 "aty": torch.zeros(p, dtype=torch.float64),
                 "yty": torch.zeros((), dtype=torch.float64)} for k in TERMS}
    sums, history, step0 = zeros, {k: [] for k in TERMS}, 0
    if ckpt is not None and resume and ckpt.exists():
        state = load_checkpoint(ckpt, config)
        check_like(state.get("sums"), zeros, "fit checkpoint", ckpt, "sums")
        sums, history, step0 = state["sums"], state["history"], int(state["step"])
    return sums, history, step0


def _accumulate(sums: dict, design: dict) -> None:
    """Add one batch's design ``(A, y)`` of each term to its normal equations (on the CPU)."""
    for k, (a, y) in design.items():
        sums[k] = {"ata": sums[k]["ata"] + (a.T @ a).cpu(),
                   "aty": sums[k]["aty"] + (a.T @ y).cpu(),
                   "yty": sums[k]["yty"] + (y @ y).cpu()}
