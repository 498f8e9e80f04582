"""The kernel (NTK) regime of the theory: predicted loss curves, empirical kernels, widths.

Setting (the "theory" regime of :mod:`flows.training.loop`): v(z) = m^{-1/2} A^T relu(W z), A in
{-1, +1}^{m x d} fixed, z on the unit sphere, full-batch gradient descent W <- W - lr dL/dW on

    L(W) = (1/N) sum_i ||v(z_i) - u_i||^2        (N = n k fixed draws, as the code computes it).

Derivation of the predicted curve. With residuals R = V - U (N x d), dL/dV = (2/N) R and, to
first order in the step, V_{t+1} - V_t = -lr (2/N) Theta R_t, where the tangent kernel is
Theta_{(i,l),(j,l')} = sum_r dv_il/dw_r . dv_jl'/dw_r
                     = (1/m) sum_r A_rl A_rl' (z_i . z_j) 1[w_r.z_i > 0] 1[w_r.z_j > 0].
As m -> infinity with W at its initialisation (rows ~ N(0, I)), A_rl^2 = 1 gives the same-output
blocks E = H_ij = z_i.z_j (pi - angle(z_i, z_j)) / (2 pi), and the cross-output blocks average
to zero (A_rl A_rl' = +-1 independent of W). Hence every output column follows

    R_t = (I - c lr H / N)^t R_0,   c = 2,   L_t = (1/N) ||R_t||_F^2
        = (1/N) sum_k (1 - c lr lambda_k / N)^{2t} ||q_k^T R_0||^2

(H = sum_k lambda_k q_k q_k^T), on the same fixed draws and the same initial residuals R_0.
:func:`ntk_loss_curve` computes it; a very wide network at small lr follows it (tested), and
c = 1 or c = 4 do not. The slowest mode decays like exp(-2 c lr lambda_0 t / N).

The check judges the whole curve, not its end. Over every step t = 1..T-1 of the horizon,

    ratio(t)     = L_obs(t) / L_NTK(t),
    deviation(t) = ||R_obs(t) - R_NTK(t)||_F / ||R_NTK(t) - R_0||_F,

the second the part of the kernel's predicted change of the network's outputs (on the training
draws) that the run got wrong. The run ``passes`` when the worst of each over the horizon is
within 10%: max_t max(ratio, 1 / ratio) <= r = END_RATIO = 1.1 and max_t deviation <=
CURVE_DEVIATION = 0.1. The loss ratio alone is not enough: over 10 or 15 steps the loss has
barely moved, and a 16-neuron network whose kernel at initialisation is 20-40% off the limit
(moons, n = 64, k = 4, lr 2) stays within 1.06 of the kernel's loss while 10-20% of its
activations flip; its deviation reads 0.20-0.39 from the first step, where it is the kernel's
error along R_0, ||(Theta(W_0) - I (x) H) R_0|| / ||(I (x) H) R_0||. R_obs(t) is recomputed
by replaying the run's gradient descent from W_0 (:func:`residual_path`), whose loss curve must
equal the run's.

The end-ratio rule, L_obs(T) / L_NTK(T) in [1 / r, r] (``end_ratio``), and the earlier rule,
max_t |L_obs - L_NTK| / L_obs(0) <= 4 / sqrt(m) (``within``), are kept for reference: the first
passed m = 16 at 15 steps, the second passed runs far from the regime (its tolerance is 1 at
m = 16).

What this is. Not a bound: a check of the kernel-regime prediction at practical widths. The
curve is the leading term of Arora, Du, Hu, Li and Wang (2019), "Fine-grained analysis of
optimization and generalization for overparameterized two-layer neural networks" (ICML),
Theorem 4.1: ||y - u(k)|| = (sum_i (1 - eta lambda_i)^{2k} (v_i^T y)^2)^{1/2} +- eps for
m = Omega(N^7 / (lambda_0^4 kappa^2 delta^4 eps^2)), eta = O(lambda_0 / N^2) and a small
initialisation kappa; with our O(1) initialisation R_0 takes the place of -y. The
theorem's constants are not given, so no width here is certified to be in its regime.

Width requirement (Du, Zhai, Poczos and Singh, 2019, "Gradient descent provably optimizes
over-parameterized neural networks" (ICLR), Theorem 4.1; scalar output, loss (1/2) sum (f - y)^2,
step eta): with m = Omega(N^6 / (lambda_0^4 delta^3)) and eta = O(lambda_0 / N^2), with
probability 1 - delta, ||u(k) - y||^2 <= (1 - eta lambda_0 / 2)^k ||u(0) - y||^2. Our step
corresponds to eta = 2 lr / N. :func:`theorem_requirements` evaluates both with unit constants
(the theorem hides them) for failure probability delta: an ESTIMATE of the order of magnitude,
not a certified width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from _runkit import Result

from ..errors import FlowsError, check_positive, check_positive_int, derive_seed
from ..field import TwoLayerReLUField
from ..training.loop import build_model, fixed_objective, prepare_data
from ..training.steps import theory_step
from .kernel import kernel_h

__all__ = ["CurveCheck", "NTKComparison", "curve_check", "empirical_ntk", "end_ratio_passes",
           "ntk_comparison", "ntk_loss_curve"]

C_GD = 2.0
"""The constant c of (I - c lr H / N)^t for the loss normalisation (1/N) sum ||v - u||^2."""


def ntk_loss_curve(h: torch.Tensor, r0: torch.Tensor, lr: float, steps: int,
                   c: float = C_GD, eig: tuple | None = None) -> np.ndarray:
    """Infinite-width prediction L_t = (1/N) ||(I - c lr H / N)^t R_0||_F^2, t = 0..steps-1.

    Parameters
    ----------
    h : torch.Tensor, shape (N, N)
        Kernel H (:func:`flows.theory.kernel.kernel_h` of the features).
    r0 : torch.Tensor, shape (N, d)
        Initial residuals v_0(z_i) - u_i of the network on the same draws.
    lr : float
    steps : int
    c : float
        2 for this loss normalisation (see the module docstring).
    eig : (torch.Tensor, torch.Tensor) or None
        ``torch.linalg.eigh`` of H in float64, when already computed.

    Returns
    -------
    numpy.ndarray, shape (steps,)

    Examples
    --------
    >>> curve = ntk_loss_curve(torch.eye(2), torch.ones(2, 1), lr=0.5, steps=3)
    >>> [round(float(v), 6) for v in curve]  # (1 - 2 * 0.5 / 2)^(2t)
    [1.0, 0.25, 0.0625]
    """
    h = torch.as_tensor(h, dtype=torch.float64)
    r0 = torch.as_tensor(r0, dtype=torch.float64)
    n = h.shape[0]
    if h.shape != (n, n) or r0.ndim != 2 or r0.shape[0] != n:
        raise FlowsError(f"h has shape {tuple(h.shape)} and r0 {tuple(r0.shape)}; (N, N) and "
                         "(N, d) are required")
    lr = check_positive("lr", lr)
    steps = check_positive_int("steps", steps)
    lam, q = torch.linalg.eigh(h) if eig is None else eig
    energy = (q.T @ r0).square().sum(1)  # ||q_k^T R_0||^2
    factor = (1.0 - c * lr * lam / n).square()
    t = torch.arange(steps, dtype=torch.float64)[:, None]
    return ((factor[None, :] ** t) * energy[None, :]).sum(1).numpy() / n


def activation_pattern(w: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """M_ir = 1[w_r . z_i > 0], boolean (N, m), for W (m, p) and z (N, p)."""
    return (z.double() @ w.double().T) > 0


def empirical_ntk(w: torch.Tensor, a: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Tangent kernel of v = m^{-1/2} A^T relu(W z) with respect to W, shape (N d, N d).

    Theta_{(i,l),(j,l')} = (1/m) (z_i . z_j) sum_r A_rl A_rl' M_ir M_jr, ordered output-major
    (block (l, l') is Theta[l N:(l+1) N, l' N:(l'+1) N]). W (m, p), A (m, d), z (N, p).
    """
    m_pat = activation_pattern(w, z).double()
    a = a.double()
    gram = z.double() @ z.double().T
    m, d = a.shape
    blocks = [[(m_pat * (a[:, i] * a[:, j])[None, :]) @ m_pat.T * gram / m for j in range(d)]
              for i in range(d)]
    return torch.cat([torch.cat(row, 1) for row in blocks], 0)


@dataclass(frozen=True)
class KernelDrift(Result):
    """Empirical NTK at the start and end of training against the infinite-width kernel.

    Attributes
    ----------
    start_vs_limit : float
        ||Theta(W_0) - I_d (x) H||_F / ||I_d (x) H||_F.
    end_vs_start : float
        ||Theta(W_T) - Theta(W_0)||_F / ||Theta(W_0)||_F.
    lambda_min_start, lambda_min_end : float
        Smallest eigenvalue of Theta(W_0) and Theta(W_T) (lambda_0 of H in the limit).
    flipped : float
        Fraction of the N m activations 1[w_r . z_i > 0] that differ between W_0 and W_T.
    """

    start_vs_limit: float
    end_vs_start: float
    lambda_min_start: float
    lambda_min_end: float
    flipped: float


def kernel_drift(w0: torch.Tensor, w_end: torch.Tensor, a: torch.Tensor,
                 z: torch.Tensor) -> KernelDrift:
    """Compare Theta(W_0), Theta(W_T) and I_d (x) H on features z (N, p); W (m, p), A (m, d)."""
    h = kernel_h(z)
    limit = torch.block_diag(*([h] * a.shape[1]))
    k0, k1 = empirical_ntk(w0, a, z), empirical_ntk(w_end, a, z)
    flipped = (activation_pattern(w0, z) != activation_pattern(w_end, z)).double().mean()
    return KernelDrift(float((k0 - limit).norm() / limit.norm()),
                       float((k1 - k0).norm() / k0.norm()),
                       float(torch.linalg.eigvalsh(k0)[0]), float(torch.linalg.eigvalsh(k1)[0]),
                       float(flipped))


def curve_gap(observed: np.ndarray | list, predicted: np.ndarray | list) -> float:
    """Largest gap between an observed and a predicted loss curve, relative to the start.

    gap = max_t |L_obs(t) - L_pred(t)| / L_obs(0), both of shape (T,).
    """
    obs = np.asarray(observed, dtype=np.float64)
    pred = np.asarray(predicted, dtype=np.float64)
    if obs.shape != pred.shape or obs.size == 0:
        raise FlowsError(f"observed {obs.shape} and predicted {pred.shape} curves must have one "
                         "equal, non-empty shape")
    return float(np.max(np.abs(obs - pred)) / obs[0])


@dataclass(frozen=True)
class TheoremRequirements(Result):
    """Width and step size the convergence theorem asks for, with unit constants.

    Attributes
    ----------
    width : float
        N^6 / (lambda_0^4 delta^3).
    lr : float
        lambda_0 / (2 N): eta = 2 lr / N <= lambda_0 / N^2.
    delta : float
        Failure probability.
    """

    width: float
    lr: float
    delta: float


def theorem_requirements(n_points: int, lambda0: float, delta: float = 0.1) -> TheoremRequirements:
    """Du et al. (2019)'s width m >= N^6 / (lambda_0^4 delta^3) and step lr <= lambda_0 / (2 N).

    Examples
    --------
    >>> r = theorem_requirements(10, 0.01, delta=0.1)
    >>> f"{r.width:.0e}", r.lr
    ('1e+17', 0.0005)
    """
    n = check_positive_int("n_points", n_points)
    lam = check_positive("lambda0", lambda0)
    delta = check_positive("delta", delta)
    return TheoremRequirements(float(n) ** 6 / (lam**4 * delta**3), lam / (2 * n), delta)


@dataclass(frozen=True)
class NTKComparison(Result):
    """A theory-regime run beside its infinite-width prediction on the same draws.

    Attributes
    ----------
    width : int
    n_points : int
        N = n k.
    lambda_0 : float
    observed, predicted : list of float
        Training loss per step, and L_t of :func:`ntk_loss_curve` (c = 2).
    gap : float
        :func:`curve_gap` of the two.
    tolerance : float
        :func:`ntk_tolerance` at this width.
    within : bool
        gap <= tolerance (the earlier rule, vacuous at small m; see the module docstring).
    drift : KernelDrift
    requirements : TheoremRequirements
    end_ratio : float
        L_obs(T) / L_NTK(T) at the last recorded step (the end-ratio rule, for reference).
    passes : bool
        The check on the whole curve (``curve.passes``; module docstring).
    curve : CurveCheck
        Its worst loss ratio and worst deviation over the horizon.
    """

    width: int
    n_points: int
    lambda_0: float
    observed: list
    predicted: list
    gap: float
    tolerance: float
    within: bool
    drift: KernelDrift
    requirements: TheoremRequirements
    end_ratio: float = float("nan")
    passes: bool | None = None
    curve: CurveCheck | None = None


END_RATIO = 1.1
"""r of the check max_t max(L_obs / L_NTK, L_NTK / L_obs) <= r (:func:`curve_check`), and of
the end-ratio rule (:func:`end_ratio_passes`)."""

CURVE_DEVIATION = 0.1
"""tau of the check max_t ||R_obs - R_NTK|| / ||R_NTK - R_0|| <= tau (:func:`curve_check`)."""


@dataclass(frozen=True)
class ResidualPath(Result):
    """Residuals and losses of full-batch gradient descent (:func:`residual_path`).

    Attributes
    ----------
    residuals : torch.Tensor, shape (T + 1, N, d)
        R_t = v_t(z) - u, float64, before update t (R_T: the trained field).
    losses : torch.Tensor, shape (T + 1,)
        (1 / N) ||R_t||_F^2 as the training loop computes it (float32 arithmetic).
    weights : torch.Tensor, shape (m, p)
        W after the T updates.
    """

    residuals: torch.Tensor
    losses: torch.Tensor
    weights: torch.Tensor


def residual_path(field: TwoLayerReLUField, z: torch.Tensor, u: torch.Tensor, lr: float,
                  steps: int) -> ResidualPath:
    """Replay ``steps`` updates of the theory regime's gradient descent from ``field``'s W (on a
    copy; :func:`flows.training.steps.theory_step`, the training loop's own step) and record
    the residuals on the draws z (N, p), u (N, d).

    Examples
    --------
    >>> from flows.field import FieldSpec
    >>> f = TwoLayerReLUField(FieldSpec(2, 32, "theory", True), seed=0)
    >>> z = torch.nn.functional.normalize(torch.randn(8, 4), dim=1)
    >>> p = residual_path(f, z, torch.randn(8, 2), lr=1.0, steps=5)
    >>> p.residuals.shape, bool(p.losses[-1] < p.losses[0])
    (torch.Size([6, 8, 2]), True)
    """
    steps = check_positive_int("steps", steps)
    copy = TwoLayerReLUField(field.spec, seed=0)
    with torch.no_grad():
        copy.W.copy_(field.W)
        copy.A.copy_(field.A)
    step = theory_step(copy, z, u, check_positive("lr", lr))
    residuals, losses = [], []
    for s in range(steps + 1):
        with torch.no_grad():
            residuals.append(copy.forward_z(z).double() - u.double())
        losses.append(float(step(s)) if s < steps else
                      float(copy.loss_and_grads(z, u, grad_a=False)[0]))
        if not np.isfinite(losses[-1]):
            raise FlowsError(f"the training loss is {losses[-1]} at step {s} (lr={lr}); "
                             "lower lr")
    return ResidualPath(torch.stack(residuals), torch.tensor(losses, dtype=torch.float64),
                        copy.W.detach().clone())


@dataclass(frozen=True)
class CurveCheck(Result):
    """The NTK check over the whole horizon (module docstring; :func:`curve_check`).

    Attributes
    ----------
    worst_ratio : float
        max over t = 1..T of max(L_obs / L_NTK, L_NTK / L_obs).
    worst_ratio_step : int
        The t where it is reached.
    deviation : float
        max over t = 1..T of ||R_obs(t) - R_NTK(t)||_F / ||R_NTK(t) - R_0||_F.
    deviation_step : int
    passes : bool
        worst_ratio <= ``ratio_threshold`` and deviation <= ``deviation_threshold``.
    ratio_threshold, deviation_threshold : float
        :data:`END_RATIO` and :data:`CURVE_DEVIATION`.
    """

    worst_ratio: float
    worst_ratio_step: int
    deviation: float
    deviation_step: int
    passes: bool
    ratio_threshold: float = END_RATIO
    deviation_threshold: float = CURVE_DEVIATION


def curve_check(h: torch.Tensor, residuals: torch.Tensor, lr: float, c: float = C_GD,
                r: float = END_RATIO, tau: float = CURVE_DEVIATION,
                eig: tuple | None = None) -> CurveCheck:
    """Judge the observed residuals R_t (T + 1, N, d) against R_NTK(t) = (I - c lr H / N)^t R_0.

    Both sides are taken in the eigenbasis of H (N, N) (an orthogonal change of basis), so no
    (N, N) power is formed; ``eig`` is ``torch.linalg.eigh`` of H in float64 when already
    computed.

    Examples
    --------
    >>> h = torch.eye(2)
    >>> r0 = torch.ones(2, 1, dtype=torch.float64)
    >>> exact = torch.stack([r0 * 0.5**t for t in range(4)])  # (1 - 2 * 0.5 / 2)^t
    >>> ok = curve_check(h, exact, lr=0.5)
    >>> ok.passes, ok.worst_ratio, ok.deviation
    (True, 1.0, 0.0)
    >>> slow = curve_check(h, torch.stack([r0 * 0.6**t for t in range(4)]), lr=0.5)
    >>> slow.passes, round(slow.deviation, 3), slow.deviation_step
    (False, 0.2, 1)
    """
    res = torch.as_tensor(residuals, dtype=torch.float64)
    n = res.shape[1]
    if res.ndim != 3 or res.shape[0] < 2 or tuple(h.shape) != (n, n):
        raise FlowsError(f"residuals {tuple(res.shape)} and h {tuple(h.shape)}: (T + 1, N, d) "
                         "with T >= 1 and (N, N) are required")
    lam, q = torch.linalg.eigh(torch.as_tensor(h, dtype=torch.float64)) if eig is None else eig
    proj = torch.einsum("nk,tnd->tkd", q, res)  # Q^T R_t
    t = torch.arange(res.shape[0], dtype=torch.float64)
    pred = (1.0 - c * lr * lam / n)[None, :, None] ** t[:, None, None] * proj[:1]
    l_obs, l_pred = proj.square().sum((1, 2))[1:], pred.square().sum((1, 2))[1:]
    ratio = torch.where(l_pred > 0, l_obs / l_pred.clamp_min(1e-300), torch.inf)
    two_sided = torch.maximum(ratio, 1.0 / ratio)
    wrong = (proj - pred).flatten(1).norm(dim=1)[1:]
    moved = (pred - pred[:1]).flatten(1).norm(dim=1)[1:]
    dev = torch.where(moved > 0, wrong / moved.clamp_min(1e-300),
                      torch.where(wrong > 0, torch.inf, 0.0))
    i, j = int(two_sided.argmax()), int(dev.argmax())
    worst, deviation = float(two_sided[i]), float(dev[j])
    return CurveCheck(worst, i + 1, deviation, j + 1, bool(worst <= r and deviation <= tau),
                      r, tau)


def end_ratio_passes(observed: np.ndarray | list, predicted: np.ndarray | list,
                     r: float = END_RATIO) -> tuple[float, bool]:
    """(L_obs(T) / L_NTK(T), whether it lies in [1 / r, r]) for two loss curves of shape (T,).

    Examples
    --------
    >>> end_ratio_passes([4.0, 2.1], [4.0, 2.0]), end_ratio_passes([4.0, 3.0], [4.0, 2.0])
    ((1.05, True), (1.5, False))
    """
    obs = np.asarray(observed, dtype=np.float64)
    pred = np.asarray(predicted, dtype=np.float64)
    if obs.shape != pred.shape or obs.size == 0:
        raise FlowsError(f"observed {obs.shape} and predicted {pred.shape} curves must have one "
                         "equal, non-empty shape")
    ratio = float(obs[-1] / pred[-1]) if pred[-1] > 0 else float("inf")
    return ratio, bool(1.0 / r <= ratio <= r)


NTK_TOLERANCE = 4.0
"""K of the check gap <= K / sqrt(m) (:func:`ntk_tolerance`)."""


def ntk_tolerance(width: int, k: float = NTK_TOLERANCE) -> float:
    """K / sqrt(m): the kernel's fluctuation at initialisation and its drift are O(m^{-1/2}),
    so a run in the kernel regime keeps its loss curve within K m^{-1/2} of the prediction."""
    return k / float(check_positive_int("width", width)) ** 0.5


def ntk_comparison(config, splits=None, source=None, result=None) -> NTKComparison:
    """Run a theory-regime config's gradient descent and compare it with the NTK curve.

    The run is replayed from its initialisation with its residuals recorded
    (:func:`residual_path`); a given ``result`` of the same config is checked against the
    replay (its initial W and loss curve).

    Parameters
    ----------
    config : flows.training.loop.TrainConfig
        regime "theory".
    splits, source : optional
        :func:`flows.training.loop.prepare_data` output.
    result : flows.training.loop.TrainResult, optional
        An already trained run of ``config`` (checked against the replay).

    Returns
    -------
    NTKComparison
    """
    cfg = config.resolved()
    if cfg.regime != "theory":
        raise FlowsError(f"regime={cfg.regime!r} is not allowed here; the NTK curve needs "
                         "'theory'")
    if splits is None or source is None:
        splits, source = prepare_data(cfg)
    start = build_model(cfg, splits.train.shape[1])
    if result is not None and not torch.equal(start.W, result.initial_W):
        raise FlowsError("result was not trained from this config's initialisation")
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, start.spec, derive_seed(cfg.seed, "objective"))
    path = residual_path(start, z, u, float(cfg.lr), cfg.steps)
    obs = path.losses[:-1].numpy()
    if result is not None and not np.allclose(obs, result.losses.double().numpy(),
                                              rtol=1e-5, atol=1e-12):
        raise FlowsError("result's loss curve is not the replay of this config's gradient "
                         "descent")
    h = kernel_h(z).double()
    eig = torch.linalg.eigh(h)
    lam0 = float(eig[0][0])
    pred = ntk_loss_curve(h, path.residuals[0], float(cfg.lr), obs.size, eig=eig)
    gap = curve_gap(obs, pred)
    tol = ntk_tolerance(cfg.width)
    drift = kernel_drift(start.W.detach(), path.weights, start.A.detach(), z)
    curve = curve_check(h, path.residuals, float(cfg.lr), eig=eig)
    return NTKComparison(cfg.width, z.shape[0], lam0, obs.tolist(), pred.tolist(), gap, tol,
                         gap <= tol, drift,
                         theorem_requirements(z.shape[0], max(lam0, 1e-300)),
                         end_ratio_passes(obs, pred)[0], curve.passes, curve)
