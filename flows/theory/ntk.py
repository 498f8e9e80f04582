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

The check. The run is in the kernel regime when it ends where the kernel says:

    L_obs(T) / L_NTK(T) in [1 / r, r],   r = END_RATIO = 1.1,

the loss left after T steps matched to 10% (``passes``). It is read at the end, where a finite
network that leaves the kernel regime falls behind the prediction and does not catch up, and it
does not shrink with the size of the initial loss. The earlier rule, max_t |L_obs - L_NTK| /
L_obs(0) <= 4 / sqrt(m) (``within``), is kept for reference: its tolerance is 1 at m = 16 and
its gap is relative to L_obs(0), so it passed runs far from the regime (moons, n = 64, m = 16:
gap 0.10, end ratio 1.21; 8x8 digits, n = 16, k = 2, m = 256: end ratio 23 to 10^5).

Width requirement (Du, Zhai, Poczos and Singh, 2019, Theorem 4.1; scalar output, loss
(1/2) sum (f - y)^2, step eta): m = Omega(N^6 / (lambda_0^4 delta^3)) and eta = O(lambda_0 / N^2).
Our step corresponds to eta = 2 lr / N. :func:`theorem_requirements` evaluates both with unit
constants (the theorem hides them) for failure probability delta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from _runkit import Result

from ..errors import FlowsError, check_positive, check_positive_int, derive_seed
from ..field import TwoLayerReLUField
from ..training.loop import fixed_objective, prepare_data, train
from .kernel import kernel_h

C_GD = 2.0
"""The constant c of (I - c lr H / N)^t for the loss normalisation (1/N) sum ||v - u||^2."""


def ntk_loss_curve(h: torch.Tensor, r0: torch.Tensor, lr: float, steps: int,
                   c: float = C_GD) -> np.ndarray:
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
    lam, q = torch.linalg.eigh(h)
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
        L_obs(T) / L_NTK(T) at the last step.
    passes : bool
        The check: 1 / END_RATIO <= end_ratio <= END_RATIO.
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


END_RATIO = 1.1
"""r of the check L_obs(T) / L_NTK(T) in [1 / r, r] (:func:`end_ratio_passes`)."""


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
    """Train (or take ``result`` of) a theory-regime run and compare it with the NTK curve.

    Parameters
    ----------
    config : flows.training.loop.TrainConfig
        regime "theory".
    splits, source : optional
        :func:`flows.training.loop.prepare_data` output.
    result : flows.training.loop.TrainResult, optional
        An already trained run of ``config`` (its initial W and losses are used).

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
    if result is None:
        result = train(cfg, splits=splits, source=source, progress=False)
    field = result.field
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, field.spec, derive_seed(cfg.seed, "objective"))
    start = TwoLayerReLUField(field.spec, seed=derive_seed(cfg.seed, "init"))
    if not torch.equal(start.W, result.initial_W):
        raise FlowsError("result was not trained from this config's initialisation")
    with torch.no_grad():
        r0 = start.forward_z(z).double() - u.double()
    h = kernel_h(z)
    lam0 = float(torch.linalg.eigvalsh(h)[0])
    obs = result.losses.double().numpy()
    pred = ntk_loss_curve(h, r0, float(cfg.lr), obs.size)
    gap = curve_gap(obs, pred)
    tol = ntk_tolerance(cfg.width)
    drift = kernel_drift(result.initial_W, field.W.detach(), field.A.detach(), z)
    return NTKComparison(cfg.width, z.shape[0], lam0, obs.tolist(), pred.tolist(), gap, tol,
                         gap <= tol, drift,
                         theorem_requirements(z.shape[0], max(lam0, 1e-300)),
                         *end_ratio_passes(obs, pred))
