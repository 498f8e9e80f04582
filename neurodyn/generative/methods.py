"""Three ways to generate population states from data, each returning :class:`Generated`.

(a) :func:`generate_ambient`: flow matching on the standardised rates in ``R^N`` (the flows
    package's practice-regime two-layer ReLU field, exact minibatch OT), sampled with ``steps``
    midpoint steps from ``N(0, I)``. It knows nothing of the manifold.
(b) :func:`generate_riemannian`: Riemannian flow matching on the decoded coordinate (the circle
    or flat torus, :mod:`flows.riemannian`), mapped to states through the network's manifold
    ``u*(psi)`` plus a learned normal variability: the residuals ``u - u*(psi)`` moved to the
    bump's frame (an exact spectral shift by ``-psi``), modelled as a Gaussian (mean, the
    leading principal components, an isotropic rest) and shifted back to each generated
    ``psi``.
(c) :func:`relax_states`: states from (a) relaxed by the network's own dynamics for a time
    ``relax`` (tau), so they are pulled onto the attractor; the energy along every relaxation is
    returned for the descent audit.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from _runkit import check_int
from _runkit.results import Result
from _runkit.seeds import derive_seed

from ..network import HopfieldNetwork
from .states import PopulationStates, _rate_range

__all__ = ["Generated", "generate_ambient", "generate_riemannian", "relax_states", "RELAX_DT"]


@dataclass(frozen=True)
class Generated(Result):
    """Generated states.

    Attributes
    ----------
    rates : torch.Tensor, shape (n, N)
    nfe : int
        Evaluations of the learned flow's field per sample path.
    network_evaluations : int
        Evaluations of the network's own field per state (relaxation; 0 otherwise).
    seconds : float
        Wall time of training and sampling.
    cpu_seconds : float
        CPU time of this process for the same (the comparable cost on shared cores).
    energy_rise : float
        Largest rise of the network energy between saved steps of a relaxation, relative to the
        energy's range (nan without relaxation); <= 1e-9 means descent held.
    """

    rates: torch.Tensor
    nfe: int
    network_evaluations: int = 0
    seconds: float = 0.0
    energy_rise: float = math.nan
    cpu_seconds: float = 0.0


def generate_ambient(states: PopulationStates, n: int, steps: int = 5, train_steps: int = 4500,
                     width: int = 512, seed: int = 0) -> Generated:
    """(a) Flow matching on the standardised rates, ``steps`` midpoint steps (``2 steps``
    field evaluations)."""
    import flows
    from flows.data import Splits, source_for

    t0, c0 = time.perf_counter(), time.process_time()
    x = states.rates.to(torch.float32)
    mean, scale = x.mean(0), x.std(0).mean().clamp_min(1e-12)
    z = (x - mean) / scale
    half = max(2, len(z) // 5)
    splits = Splits(z[half:], z[:half], z[:half])
    # the step size and warm-up this generator was measured with (flows' practice defaults
    # before they became 0.1 with a warm-up)
    cfg = flows.TrainConfig(data="normal", width=width, steps=train_steps, batch=256,
                            coupling="ot", seed=derive_seed(seed, "ambient") % 2**63,
                            n_eval=half, lr=0.03, warmup=0)
    res = flows.train(cfg, splits=splits, source=source_for(None, z.shape[1]), progress=False)
    g = torch.Generator().manual_seed(derive_seed(seed, "ambient-source") % 2**63)
    z0 = torch.randn(check_int("n", n, lo=1), z.shape[1], generator=g)
    out = flows.integrate(res.field, z0, method="midpoint", steps=steps)
    rates = (out.x * scale + mean).to(torch.float64)
    return Generated(rates, out.nfe, 0, time.perf_counter() - t0,
                     cpu_seconds=time.process_time() - c0)


def _residual_model(network: HopfieldNetwork, states: PopulationStates, rank: int):
    """Mean, principal directions (scaled), and isotropic sigma of the residuals in the bump's
    frame."""
    g, m = network.geometry, network.manifold
    lo, hi = _rate_range(network)
    eps = 1e-6 * (hi - lo)
    u = network.activation.inverse(states.rates.clamp(lo + eps, hi - eps))
    u = u.reshape(-1, *g.shape)
    res = g.shift(u - m.u_star(states.phases), -states.phases).reshape(len(u), -1)
    mean = res.mean(0)
    c = res - mean
    _, s, vt = torch.linalg.svd(c, full_matrices=False)
    k = min(rank, len(s) - 1)
    var = s ** 2 / (len(c) - 1)
    rest = float(var[k:].sum() / max(1, c.shape[1] - k))
    return mean, vt[:k] * var[:k, None].sqrt(), math.sqrt(max(rest, 0.0))


def _normal_part(network: HopfieldNetwork, res: torch.Tensor) -> torch.Tensor:
    """Residuals ``(n, N)`` in the bump's frame without their component along the manifold's
    tangents at ``psi = 0``: the data's residuals are orthogonal to them (the nearest point), and
    a tangent part would move the generated state's coordinate away from the sampled one."""
    dim = network.geometry.dim
    t = network.manifold.tangents(torch.zeros(dim, dtype=torch.float64)).reshape(-1, dim)
    q, _ = torch.linalg.qr(t)
    return res - (res @ q) @ q.T


def generate_riemannian(network: HopfieldNetwork, states: PopulationStates, n: int,
                        steps: int = 5, train_steps: int = 1000, rank: int = 16,
                        seed: int = 0) -> Generated:
    """(b) Riemannian flow matching on the decoded coordinate, mapped through the manifold with
    the learned normal variability (its tangent part removed, so each state decodes to its
    sampled coordinate)."""
    from flows.riemannian import sample_torus_flow, train_torus_flow

    t0, c0 = time.perf_counter(), time.process_time()
    flow = train_torus_flow(states.phases, steps=train_steps, batch=128,
                            seed=derive_seed(seed, "riemannian") % 2**63)
    psi, nfe = sample_torus_flow(flow, n, steps=steps, seed=derive_seed(seed, "rfm-source"))
    psi = psi.to(torch.float64)
    mean, comps, rest = _residual_model(network, states, rank)
    g = torch.Generator().manual_seed(derive_seed(seed, "residual") % 2**63)
    z = torch.randn(n, comps.shape[0], generator=g, dtype=torch.float64)
    e = torch.randn(n, comps.shape[1], generator=g, dtype=torch.float64)
    res = _normal_part(network, mean + z @ comps + rest * e).reshape(n, *network.geometry.shape)
    u = network.manifold.u_star(psi) + network.geometry.shift(res, psi)
    rates = network.activation(u).reshape(n, -1)
    return Generated(rates, nfe, 0, time.perf_counter() - t0,
                     cpu_seconds=time.process_time() - c0)


#: the step (tau) of method (c)'s relaxation: it saves every step
RELAX_DT = 0.1


def relax_states(network: HopfieldNetwork, generated: Generated, relax: float = 2.0,
                 dt: float = RELAX_DT) -> Generated:
    """(c) Generated states relaxed by the network's dynamics (rk4) for ``relax`` tau; the
    energy is audited along every relaxation."""
    from ..dynamics.simulation import simulate

    t0, c0 = time.perf_counter(), time.process_time()
    lo, hi = _rate_range(network)
    eps = 1e-6 * (hi - lo)
    u0 = network.activation.inverse(generated.rates.clamp(lo + eps, hi - eps))
    u0 = u0.reshape(-1, *network.geometry.shape)
    tr = simulate(network, u0, relax, dt, method="rk4", save_every=1, progress=False,
                  diagnostics=False)  # only the energy is read (lazily): no manifold distances
    e = tr.energy  # (T, n)
    span = (e.max(0).values - e.min(0).values).clamp_min(1e-300)
    rise = float(((e[1:] - e[:-1]).clamp_min(0) / span).max())
    steps = int(round(relax / dt))
    return Generated(tr.r[-1].reshape(len(u0), -1).to(torch.float64), generated.nfe, 4 * steps,
                     generated.seconds + time.perf_counter() - t0, rise,
                     generated.cpu_seconds + time.process_time() - c0)
