"""The irreducible part of the conditional flow-matching objective and the excess risk.

For the linear path x_t = (1 - t) x0 + t x1, x0 ~ N(0, I), t ~ U(0, 1), the objective
E ||v(x_t, t) - (x1 - x0)||^2 has the minimum over all fields

    L* = E_t E_{x_t} Var(x1 - x0 | x_t, t) > 0        (u = x1 - x0 is not a function of x_t),

reached by u*(x, t) = E[x1 - x0 | x_t = x]; every field's objective is L* + E ||v - u*||^2, so

    excess risk = objective - L* = E_t E_{x_t} ||v(x_t, t) - u*(x_t, t)||^2.

Closed forms: a target that is a finite mixture sum_k pi_k N(mu_k, s_k^2 I) has, given x_t = x
and component k, x_t ~ N(t mu_k, sigma_k^2 I), sigma_k^2 = (1 - t)^2 + t^2 s_k^2,

    E[u | x, k] = mu_k + (t s_k^2 - (1 - t)) / sigma_k^2 (x - t mu_k),
    Var(u_j | x, k) = 1 + s_k^2 - (t s_k^2 - (1 - t))^2 / sigma_k^2        (each coordinate),

and posterior weights w_k(x) = pi_k N(x; t mu_k, sigma_k^2 I) / sum. L* is the mean over draws
(t, x_t) of the exact conditional variance sum_k w_k (||m_k||^2 + d v_k) - ||sum_k w_k m_k||^2,
a Monte Carlo estimate with its standard error. Each data set carries its mixture where one
exists (:meth:`flows.data.Dataset.mixture`, the closed forms of :data:`flows.data.MIXTURES`:
exact for ``normal``, ``8gaussians`` and ``gmm<d>``, 1,000 curve points for the curves plus
noise); :func:`target_mixture` looks it up by name. Other data sets use the empirical
distribution of a large sample (components with s_k = 0, the field of
:class:`flows.optimal.EmpiricalOptimalField`); that minimum is biased low (the empirical
posterior is sharper), and :func:`population_minimum` reports the change between a quarter of
the sample and all of it as its error.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from _runkit import Result

from ..data import CURVE_POINTS, MIXTURES, Dataset, Mixture, generated_dataset
from ..errors import FlowsError, as_generator, check_positive_int

__all__ = ["Estimate", "excess_risk", "population_minimum"]


def target_mixture(name: str, points: int = CURVE_POINTS) -> Mixture | None:
    """The data set ``name`` (default parameters) as a Gaussian mixture, or None
    (:meth:`flows.data.Dataset.mixture` of the generated data set of that name).

    Examples
    --------
    >>> target_mixture("moons").means.shape
    torch.Size([1000, 2])
    >>> target_mixture("checkerboard") is None
    True
    """
    ds = generated_dataset(name)
    return None if ds is None else ds.mixture(points)


def _moments(mix: Mixture, x: torch.Tensor, t: torch.Tensor,
             second: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """u*(x, t) (B, d) and, with ``second``, E[||u||^2 | x_t = x] (B,), for x (B, d), t (B, 1).

    With c_k = (t s_k^2 - (1 - t)) / sigma_k^2, m_k = (1 - c_k t) mu_k + c_k x, so every sum over
    components is a (B, K) matrix product; no (B, K, d) tensor is formed.
    """
    mu, s2 = mix.means, mix.stds.square()
    d = x.shape[1]
    sig2 = ((1 - t) ** 2 + t**2 * s2[None, :]).clamp_min(1e-12)  # (B, K)
    xmu = x @ mu.T  # (B, K)
    mu_sq = mu.square().sum(1)[None, :]
    x_sq = x.square().sum(1, keepdim=True)
    dist2 = (x_sq - 2 * t * xmu + t**2 * mu_sq).clamp_min(0.0)
    w = torch.softmax(mix.weights.log()[None, :] - 0.5 * dist2 / sig2 - 0.5 * d * sig2.log(), 1)
    c = (t * s2[None, :] - (1 - t)) / sig2
    a = 1 - c * t  # m_k = a_k mu_k + c_k x
    mean = (w * a) @ mu + (w * c).sum(1, keepdim=True) * x
    if not second:
        return mean, None
    v = (1 + s2[None, :] - (t * s2[None, :] - (1 - t)) ** 2 / sig2).clamp_min(0.0)
    m_sq = a.square() * mu_sq + 2 * a * c * xmu + c.square() * x_sq
    return mean, (w * (m_sq + d * v)).sum(1)


def optimal_velocity(mix: Mixture, x: torch.Tensor, t: torch.Tensor | float,
                     chunk: int = 4096) -> torch.Tensor:
    """u*(x, t) = E[x1 - x0 | x_t = x] for a mixture target; x (B, d), t scalar or (B, 1).

    Examples
    --------
    >>> mix = target_mixture("normal")
    >>> optimal_velocity(mix, torch.ones(1, 2), 0.5).tolist()  # (2t - 1) x / sigma^2 at t = 1/2
    [[0.0, 0.0]]
    """
    x = x.double()
    t = torch.as_tensor(t, dtype=torch.float64).reshape(-1, 1).expand(x.shape[0], 1)
    out = torch.empty_like(x)
    for i in range(0, x.shape[0], chunk):
        out[i:i + chunk] = _moments(mix, x[i:i + chunk], t[i:i + chunk], False)[0]
    return out


def conditional_variance(mix: Mixture, x: torch.Tensor, t: torch.Tensor,
                         chunk: int = 4096) -> torch.Tensor:
    """E[||u - u*(x, t)||^2 | x_t = x] for a mixture target, x (B, d), t (B, 1); shape (B,)."""
    x = x.double()
    t = t.double().reshape(-1, 1)
    out = torch.empty(x.shape[0], dtype=torch.float64)
    for i in range(0, x.shape[0], chunk):
        mean, second = _moments(mix, x[i:i + chunk], t[i:i + chunk], True)
        out[i:i + chunk] = (second - mean.square().sum(1)).clamp_min(0.0)
    return out


def path_draws(x1: torch.Tensor, seed: int | torch.Generator):
    """(x_t, t, u) of the linear path for targets x1 (B, d): x0 ~ N(0, I), t ~ U(0, 1)."""
    g = as_generator(seed)
    x1 = x1.double()
    x0 = torch.randn(x1.shape, generator=g, dtype=torch.float64)
    t = torch.rand(x1.shape[0], 1, generator=g, dtype=torch.float64)
    return (1 - t) * x0 + t * x1, t, x1 - x0


@dataclass(frozen=True)
class Estimate(Result):
    """A Monte Carlo estimate: value, its standard error and a 95% interval half-width.

    ``error`` adds a known systematic error (e.g. of an empirical minimum), else 0.
    """

    value: float
    se: float
    error: float = 0.0

    @property
    def half_width(self) -> float:
        """1.96 se + error."""
        return 1.96 * self.se + self.error

    def to_dict(self) -> dict:
        """JSON-ready dict with the 95% interval."""
        return asdict(self) | {"ci95": [self.value - self.half_width,
                                        self.value + self.half_width]}


def _mean_se(v: torch.Tensor) -> tuple[float, float]:
    return float(v.mean()), float(v.std() / math.sqrt(v.numel())) if v.numel() > 1 else 0.0


def population_minimum(ds: Dataset, n_mc: int = 40_000, seed: int = 0,
                       n_empirical: int = 4_000) -> Estimate:
    """L* = E Var(x1 - x0 | x_t, t) of the linear path from N(0, I) to ``ds``.

    Mixture data sets (:meth:`flows.data.Dataset.mixture`) give the exact conditional variance
    at ``n_mc`` draws (se from them). Others use the empirical distribution of ``n_empirical``
    points; ``error`` is then ``|L*(n_empirical) - L*(n_empirical / 4)|``.

    Examples
    --------
    >>> from flows.data import load_dataset
    >>> est = population_minimum(load_dataset("normal"), n_mc=20_000)
    >>> abs(est.value - math.pi) < 0.03  # 2 E_t[2 - (2t - 1)^2 / ((1 - t)^2 + t^2)] = pi
    True
    """
    n_mc = check_positive_int("n_mc", n_mc)
    g = as_generator(seed)
    mix = ds.mixture()
    if mix is not None:
        x_t, t, _ = path_draws(ds.sample(n_mc, g), g)
        return Estimate(*_mean_se(conditional_variance(mix, x_t, t)))
    n_emp = check_positive_int("n_empirical", n_empirical)
    pts = ds.sample(n_emp, g).double() if ds.pool is None else ds.pool.double()
    vals = []
    for p in (pts[: max(1, pts.shape[0] // 4)], pts):
        emp = Mixture(p, torch.zeros(p.shape[0], dtype=torch.float64),
                      torch.full((p.shape[0],), 1.0 / p.shape[0], dtype=torch.float64), False)
        x_t, t, _ = path_draws(p[torch.randint(0, p.shape[0], (n_mc,), generator=g)], g)
        vals.append(_mean_se(conditional_variance(emp, x_t, t, chunk=256)))
    return Estimate(vals[1][0], vals[1][1], abs(vals[1][0] - vals[0][0]))


def excess_risk(field, ds: Dataset, n_test: int = 20_000, seed: int = 0) -> Estimate:
    """E_t E_{x_t} ||v(x_t, t) - u*(x_t, t)||^2 on ``n_test`` fresh draws (mixture data sets).

    The field is called as field(x, t) with x (B, d) and t (B, 1) float32. Raises for a data
    set without a mixture form (use the objective minus :func:`population_minimum`).
    """
    mix = ds.mixture()
    if mix is None:
        raise FlowsError(f"data={ds.name!r} has no mixture form; excess_risk needs one of "
                         f"{', '.join(MIXTURES)}")
    g = as_generator(seed)
    x_t, t, _ = path_draws(ds.sample(check_positive_int("n_test", n_test), g), g)
    with torch.no_grad():
        v = field(x_t.float(), t.float()).double()
    return Estimate(*_mean_se((v - optimal_velocity(mix, x_t, t)).square().sum(1)))


def objective(field, x1: torch.Tensor, seed: int | torch.Generator) -> Estimate:
    """The objective E ||v(x_t, t) - (x1 - x0)||^2 on one fresh (t, x0) draw per row of x1."""
    x_t, t, u = path_draws(x1, seed)
    with torch.no_grad():
        v = field(x_t.float(), t.float()).double()
    return Estimate(*_mean_se((v - u).square().sum(1)))
