"""Learning attractor energies (the "L" in SEAL).

:func:`fit` fits the learned Fourier energy ``F_theta`` of a Hopfield-compatible network with
uniform input ``b`` so that

1. every point of the target manifold is a fixed point, ``-u* - grad F(r*) + b = 0``. The
   condition is linear in the energy's coefficients, so it is imposed exactly (the linear
   coefficient of each mode is solved from the others); its residual is still measured;
2. near the manifold the field restores along the normal directions at the rate ``kappa``
   (learned normal attraction): for sampled perturbations ``delta`` (white noise, band-limited
   shape, amplitude) the linearised field matches ``J delta = -(kappa / tau) P delta``, where
   ``P`` removes the tangent component along the dynamics' own (oblique) splitting, and finite
   perturbations relax toward their nearest manifold point at the same rate;

then fits the transport gains so that velocity input moves the bump at exactly the input velocity.
The energy starts from the Fourier construction, and Adam does the rest.

Note on ``kappa``: perturbations that are odd under reflection about the bump centre relax at the
leak rate ``1/tau`` whatever the energy of the power spectrum; ``kappa = 1`` is therefore the rate
the whole normal space can share.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .activation import Logistic
from .energy import LearnedFourierEnergy
from .geometry import Geometry, Ring, Torus
from .io import atomic_torch_save
from .manifold import TargetManifold
from .network import HopfieldNetwork, Transport
from .perturbations import perturb, perturbation_direction
from .progress import progress

__all__ = ["FitConfig", "FitResult", "fit", "build_geometry", "build_manifold"]


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit; unknown keys raise in :meth:`from_dict`.

    Attributes
    ----------
    geometry : ``"ring"`` or ``"torus"``.
    n : neurons of the ring, or ``(n1, n2)`` of the torus (``None``: 128 / (32, 32)).
    lattice : torus lattice, ``"hex"`` or ``"square"``.
    gain, rmax : logistic rate function ``phi(u) = rmax / (1 + exp(-gain u))``.
    a, c : target bump ``u*(theta) = a + c p(theta)``.
    tau : time constant (time unit of everything else).
    kappa : prescribed normal attraction rate, in ``1/tau``.
    bandwidth, degree, cross_hidden : learned energy family (see ``LearnedFourierEnergy``).
    steps, lr, batch : Adam steps, learning rate (cosine-annealed), perturbations per step.
    linear_scale : relative size of the perturbations of the linearised fit.
    nonlinear_weight, nonlinear_strength : weight and maximum relative size of the finite
        perturbations (drawn uniformly from a tenth of it up to it).
    bias : uniform input ``b``. It is redundant with the mode-0 energy (only their combination
        enters the fixed points and the linearised dynamics), so it is set, not learned.
    seed : seeds every random draw of the fit.
    checkpoint_every : steps between checkpoints (when an output directory is given).
    """

    geometry: str = "ring"
    n: int | tuple[int, int] | None = None
    lattice: str = "hex"
    gain: float = 1.0
    rmax: float = 1.0
    a: float = -2.0
    c: float = 4.0
    tau: float = 1.0
    kappa: float = 1.0
    bandwidth: int = 4
    degree: int = 3
    cross_hidden: int = 0
    steps: int = 600
    lr: float = 0.05
    batch: int = 32
    linear_scale: float = 1e-3
    nonlinear_weight: float = 0.1
    nonlinear_strength: float = 0.5
    bias: float = 0.0
    seed: int = 0
    checkpoint_every: int = 100

    def __post_init__(self):
        if self.geometry not in ("ring", "torus"):
            raise ValueError(f"geometry={self.geometry!r}: choose one of ('ring', 'torus')")
        positive = ("gain", "rmax", "c", "tau", "kappa", "lr", "linear_scale",
                "nonlinear_strength")
        for key in positive:
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{key}={v!r}: must be a finite number > 0")
        for key in ("steps", "batch", "checkpoint_every"):
            v = getattr(self, key)
            if not (isinstance(v, int) and v >= 1) and not (key == "steps" and v == 0):
                raise ValueError(f"{key}={v!r}: must be a positive integer")
        if self.nonlinear_weight < 0:
            raise ValueError(f"nonlinear_weight={self.nonlinear_weight}: must be >= 0")

    @classmethod
    def from_dict(cls, d: dict) -> FitConfig:
        """Build from a dict; unknown keys raise ``ValueError`` listing the allowed ones."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(
                f"fit config: unknown keys {sorted(unknown)}; allowed: {sorted(names)}")
        d = dict(d)
        if isinstance(d.get("n"), list):
            d["n"] = tuple(d["n"])
        return cls(**d)

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)


@dataclass
class FitResult:
    """Outcome of :func:`fit`: the network, the loss history and summary numbers."""

    network: HopfieldNetwork
    config: FitConfig
    history: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0
    resumed_from: int = 0


def build_geometry(config: FitConfig) -> Geometry:
    """The geometry a config asks for."""
    if config.geometry == "ring":
        n = 128 if config.n is None else config.n
        if not isinstance(n, int):
            raise ValueError(f"n={n!r}: a ring needs one integer")
        return Ring(n)
    n = (32, 32) if config.n is None else config.n
    if isinstance(n, int):
        n = (n, n)
    if len(n) != 2:
        raise ValueError(f"n={n!r}: a torus needs two sizes (n1, n2)")
    return Torus(int(n[0]), int(n[1]), config.lattice)


def build_manifold(config: FitConfig, geometry: Geometry | None = None) -> TargetManifold:
    """The target manifold of a config."""
    geometry = geometry or build_geometry(config)
    act = Logistic(config.gain, config.rmax)
    return TargetManifold.bump(geometry, act, config.a, config.c)


def _initial_energy(config: FitConfig, manifold: TargetManifold) -> LearnedFourierEnergy:
    g = manifold.geometry
    p_star = g.power(manifold.r_star(torch.zeros(g.dim, dtype=torch.float64)))
    nonzero = g.wavevectors().abs().sum(0) > 0
    floor = 1e-2 * float(p_star[nonzero].max())
    scale = p_star.clamp(min=floor)
    energy = LearnedFourierEnergy(g, config.bandwidth, config.degree, scale, config.cross_hidden,
                                  config.seed)
    w = manifold.fourier_construction(bias=config.bias)
    energy.anchor(p_star, 0.5 * w)
    return energy


def _oblique_projection(delta, tangents, left):
    """``delta - T (L^T T)^{-1} L^T delta`` for flat ``delta (B, N)``, ``T, L (B, N, dim)``."""
    gram = left.transpose(-1, -2) @ tangents
    coef = torch.linalg.solve(gram, left.transpose(-1, -2) @ delta.unsqueeze(-1))
    return delta - (tangents @ coef).squeeze(-1)


def _losses(net: HopfieldNetwork, manifold: TargetManifold, config: FitConfig, gen):
    g = net.geometry
    act = net.activation
    b = config.batch
    psi = g.random_phase(b, gen)
    us = manifold.u_star(psi)
    rs = act(us)
    norm2 = manifold.norm**2
    # 1. fixed points
    res = net.field(us) * net.tau
    fixed = (res**2).flatten(1).sum(-1).mean() / norm2
    # 2. linear normal attraction, J delta = -(kappa/tau) P delta
    kinds = ("noise", "shape", "amplitude")
    dirs = torch.cat([perturbation_direction(manifold, psi[i::3], kinds[i], gen)
                      for i in range(3)])
    psi_k = torch.cat([psi[i::3] for i in range(3)])
    us_k = manifold.u_star(psi_k)
    rs_k = act(us_k)
    dirs = dirs / dirs.flatten(1).norm(dim=-1).reshape((-1,) + (1,) * g.dim)
    d = act.derivative(us_k)
    jd = -dirs - net.energy_fn.hvp(rs_k, d * dirs)  # tau * J delta
    tang = manifold.tangents(psi_k).flatten(1, -2)
    left = (d.flatten(1).unsqueeze(-1) * tang)
    pd = _oblique_projection(dirs.flatten(1), tang, left)
    linear = ((jd.flatten(1) + config.kappa * pd) ** 2).sum(-1).mean()
    # 3. finite perturbations relax toward the nearest manifold point at the same rate
    nonlinear = torch.zeros((), dtype=us.dtype)
    if config.nonlinear_weight > 0:
        # strengths away from zero: the relative error below is ill-conditioned at tiny sizes
        low = 0.1 * config.nonlinear_strength
        strength = low + (config.nonlinear_strength - low) * torch.rand(
            len(psi_k), generator=gen, dtype=us.dtype)
        kind = kinds[int(torch.randint(3, (1,), generator=gen))]
        u = perturb(manifold, psi_k, kind, strength, gen)
        with torch.no_grad():
            near = manifold.u_star(manifold.distance(u).psi)
        f = net.field(u) * net.tau
        target = -config.kappa * (u - near)
        scale = ((u - near) ** 2).flatten(1).sum(-1).clamp(min=1e-12)
        nonlinear = (((f - target) ** 2).flatten(1).sum(-1) / scale).mean()
    del rs
    return fixed, linear, nonlinear


def fit(config: FitConfig | None = None, out_dir: str | Path | None = None,
        progress_bar: bool | None = None, resume: bool = True) -> FitResult:
    """Fit a SEAL network to the target manifold of ``config``.

    Parameters
    ----------
    config : the fit configuration (defaults: a 128-neuron ring).
    out_dir : where checkpoints go (``fit_state.pt``, written atomically every
        ``checkpoint_every`` steps); an existing checkpoint with the same config is resumed.
    progress_bar : show a progress bar (default: only on a terminal).
    resume : resume from a checkpoint in ``out_dir`` when one exists.

    Returns
    -------
    FitResult
        The trained network (with transport fitted), the loss history and the wall time.

    Examples
    --------
    >>> result = fit(FitConfig(n=32, steps=5))
    >>> result.network.geometry.shape
    (32,)
    """
    config = config or FitConfig()
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(config.seed)
    geometry = build_geometry(config)
    manifold = build_manifold(config, geometry)
    energy = _initial_energy(config, manifold)
    net = HopfieldNetwork(geometry, manifold.activation, energy, bias=config.bias,
                          tau=config.tau, manifold=manifold)
    params = list(energy.parameters())
    opt = torch.optim.Adam(params, lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(config.steps, 1),
                                                       eta_min=config.lr * 0.01)
    history: dict[str, list[float]] = {"loss": [], "fixed": [], "linear": [], "nonlinear": []}
    step0 = 0
    ckpt = Path(out_dir) / "fit_state.pt" if out_dir is not None else None
    if ckpt is not None and resume and ckpt.exists():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        if state.get("config") == config.to_dict():
            energy.load_state_dict(state["energy"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            gen.set_state(state["generator"])
            history = state["history"]
            step0 = state["step"]

    def save(step):
        if ckpt is None:
            return
        atomic_torch_save({"config": config.to_dict(), "energy": energy.state_dict(),
                           "optimizer": opt.state_dict(),
                           "scheduler": sched.state_dict(), "generator": gen.get_state(),
                           "history": history, "step": step}, ckpt)

    bar = progress(total=config.steps, desc="fit", enabled=progress_bar, initial=step0)
    try:
        for step in range(step0, config.steps):
            opt.zero_grad()
            fixed, linear, nonlinear = _losses(net, manifold, config, gen)
            loss = 1e4 * fixed + linear + config.nonlinear_weight * nonlinear
            if not torch.isfinite(loss):
                raise FloatingPointError(f"fit: loss became non-finite at step {step}")
            loss.backward()
            opt.step()
            sched.step()
            for key, v in (("loss", loss), ("fixed", fixed), ("linear", linear),
                           ("nonlinear", nonlinear)):
                history[key].append(float(v.detach()))
            bar.update(1)
            if (step + 1) % config.checkpoint_every == 0:
                save(step + 1)
    finally:
        bar.close()
    save(config.steps)
    with torch.no_grad():
        bump = manifold.u0
        net.transport = Transport.fit(geometry, bump, net.tau, net.activation)
    return FitResult(net, config, history, time.perf_counter() - start, step0)
