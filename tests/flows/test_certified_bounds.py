"""The certified Lipschitz constant and the certified W2 bound: exact where the worst pattern is
reachable, never below a sampled Jacobian, never below the measured W2 or the estimated bound;
and every reported bound names its theorem and whether it is certified."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from flows.data import load_dataset
from flows.field import FieldSpec, TwoLayerReLUField
from flows.theory.bounds import BOUNDS, bounds_table
from flows.theory.excess import Estimate, population_minimum
from flows.theory.genbound import GeneralizationBound
from flows.theory.sweeps import risk_point
from flows.theory.wbound import (
    WassersteinBound,
    _psd_bound,
    certified_lipschitz,
    certified_w2_bound,
    jacobian,
    log_groenwall_constant,
    one_sided_pattern_max_2d,
)
from flows.training.loop import TrainConfig

DOCS = Path(__file__).resolve().parents[2] / "docs" / "theory_bounds.md"


def _sampled(field, points=4000, scale=3.0, seed=0):
    """Largest lambda_max(sym J) and ||J|| over random points and four times."""
    x = scale * torch.randn(points, field.spec.dim, generator=torch.Generator().manual_seed(seed))
    mu, lip = -math.inf, 0.0
    for t in (0.0, 0.3, 0.7, 1.0):
        j = jacobian(field, x, t)
        mu = max(mu, float(torch.linalg.eigvalsh(0.5 * (j + j.transpose(1, 2)))[:, -1].max()))
        lip = max(lip, float(torch.linalg.matrix_norm(j, ord=2).max()))
    return mu, lip


def test_one_sided_pattern_max_is_exact_in_two_dimensions():
    rng = np.random.default_rng(0)
    theta = np.linspace(0, np.pi, 100_001)
    u = np.stack([np.cos(theta), np.sin(theta)], 1)
    for m in (1, 3, 17, 60):
        a, w = rng.normal(size=(m, 2)), rng.normal(size=(m, 2))
        grid = np.maximum((u @ a.T) * (u @ w.T), 0).sum(1).max()
        exact = one_sided_pattern_max_2d(a, w)
        # a dense grid reaches the maximum from below, to its spacing
        assert grid - 1e-9 <= exact <= grid + 1e-6 * max(1.0, grid)
        assert exact <= _psd_bound(a, w) + 1e-9  # the general-d bound is looser
    # closed forms: one neuron a = w gives ||a||^2; opposite signs are never active
    a = np.array([[3.0, 4.0]])
    assert one_sided_pattern_max_2d(a, a) == pytest.approx(25.0)
    assert one_sided_pattern_max_2d(a, -a) == 0.0


@pytest.mark.parametrize("spec", [FieldSpec(2, 64, "theory", True),
                                  FieldSpec(2, 64, "practice", False, fourier=2),
                                  FieldSpec(3, 32, "practice", False),
                                  FieldSpec(2, 256, "theory", False)])
def test_certificate_is_above_every_sampled_jacobian(spec):
    field = TwoLayerReLUField(spec, seed=4)
    cert = certified_lipschitz(field)
    mu, lip = _sampled(field)
    assert cert.certified and cert.normalized == spec.normalize
    assert mu <= cert.mu + 1e-5 and lip <= cert.lipschitz + 1e-5
    assert cert.mu <= cert.lipschitz <= cert.product + 1e-12
    # ... and above the sampled constants by a margin that grows with the width: the
    # worst activation pattern is not where the field lives
    assert cert.lipschitz > lip


def test_certificate_is_attained_where_every_pattern_is_reachable():
    """Two neurons in the plane (plain inputs): two lines cut the plane into 4 cells, one per
    pattern, so sup_x lambda_max(sym J) is the worst pattern's value exactly."""
    field = TwoLayerReLUField(FieldSpec(2, 2, "practice", False), seed=0)
    with torch.no_grad():
        field.W.copy_(torch.tensor([[1.0, 0.2, 0.0, 0.1], [-0.3, 1.0, 0.0, -0.2]]))
        field.A.copy_(torch.tensor([[1.5, 0.5], [-0.4, 2.0]]))
    cert = certified_lipschitz(field)
    g = torch.linspace(-3, 3, 61)
    x = torch.cartesian_prod(g, g)
    j = jacobian(field, x, 0.5)
    sampled = float(torch.linalg.eigvalsh(0.5 * (j + j.transpose(1, 2)))[:, -1].max())
    assert sampled == pytest.approx(cert.one_sided, rel=1e-6)
    # rank-one aligned weights, every neuron active near 0: the product is attained
    aligned = TwoLayerReLUField(FieldSpec(2, 8, "practice", False), seed=0)
    with torch.no_grad():
        aligned.W.copy_(torch.tensor([[1.0, 0.0, 0.0, 5.0]]).repeat(8, 1))
        aligned.A.copy_(torch.tensor([[2.0, 0.0]]).repeat(8, 1))
    c = certified_lipschitz(aligned)
    at_zero = float(torch.linalg.matrix_norm(jacobian(aligned, torch.zeros(1, 2), 0.5), 2))
    assert c.product == pytest.approx(at_zero) and c.lipschitz == pytest.approx(at_zero)
    assert c.mu == pytest.approx(at_zero)  # symmetric J: the one-sided constant is its norm


def test_certified_w2_bound_closed_forms():
    field = TwoLayerReLUField(FieldSpec(2, 16, "theory", True), seed=0)
    with torch.no_grad():
        field.W.zero_()  # v = 0: mu = 0, G = 1
    b = certified_w2_bound(field, Estimate(0.25, 0.0))
    assert b.certified and b.mu == 0.0 and b.factor == 1.0 and b.bound == pytest.approx(0.5)
    big = TwoLayerReLUField(FieldSpec(2, 4096, "theory", True), seed=0)
    with torch.no_grad():
        big.W.mul_(100.0)  # mu ~ 10^4: G overflows a float, its log10 does not
    h = certified_w2_bound(big, Estimate(1.0, 0.0))
    assert h.bound == math.inf and math.isfinite(h.log10_bound) and h.log10_bound > 300
    assert h.log10_bound == pytest.approx(log_groenwall_constant(h.mu) / math.log(10))


def _checks(data, width, n, seed, steps=100):
    cfg = TrainConfig(data=data, regime="theory", n_train=n, k_draws=2, width=width,
                      steps=steps, seed=seed, n_eval=300)
    lstar = population_minimum(load_dataset(data), n_mc=4000, seed=0)
    p = risk_point(cfg, lstar, n_test=3000, n_samples=300, bound_steps=10, pairs=50,
                   floor_pairs=2, gen_groups=200)
    return p, p.samples


def _assert_certified(p, s):
    assert s.w2_lipschitz_bound_certified and not s.w2_bound_certified
    assert not s.w2_bound_trajectory_certified and not p.gen_bound_certified
    assert s.w2_lipschitz_bound >= s.w2 and s.w2_lipschitz_bound_holds
    # the certified constant bounds every sampled one, so the certified bound is the larger
    assert s.mu_max <= s.w2_lipschitz_mu + 1e-5
    assert s.lipschitz_max <= s.w2_lipschitz_constant + 1e-5
    assert s.w2_lipschitz_bound >= s.w2_bound and s.w2_lipschitz_bound >= s.w2_coupling
    assert s.w2_lipschitz_bound_vacuous == (s.w2_lipschitz_bound >= s.w2_source)
    assert s.w2_lipschitz_bound_vs_source == pytest.approx(s.w2_lipschitz_bound / s.w2_source)


def test_certified_bound_holds_on_a_run():
    p, s = _checks("moons", 32, 16, 1, steps=50)
    _assert_certified(p, s)


@pytest.mark.slow
@pytest.mark.parametrize("data,width,n", [("moons", 64, 16), ("moons", 256, 64),
                                          ("8gaussians", 128, 32), ("spirals", 256, 64)])
def test_certified_bound_holds_on_every_run(data, width, n):
    for seed in (1, 2, 3):
        p, s = _checks(data, width, n, seed, steps=200)
        _assert_certified(p, s)
        print(f"{data} m={width} n={n} seed={seed}: w2 {s.w2:.3f} source {s.w2_source:.3f} "
              f"certified 10^{s.w2_lipschitz_bound_log10:.2f} (x{s.w2_lipschitz_bound_ratio:.3g}"
              f" the measured W2, x{s.w2_lipschitz_bound_vs_source:.3g} the source's) mu "
              f"{s.w2_lipschitz_mu:.2f} sampled {s.mu_max:.2f}; estimated {s.w2_bound:.3f} "
              f"(x{s.w2_bound_vs_source:.3g} the source's)")


def test_every_bound_names_its_theorem_and_whether_it_is_certified():
    text = DOCS.read_text()
    for name, b in BOUNDS.items():
        assert b.theorem and b.citation and b.constants, name
        assert f"`{name}`" in text, name
    # the results carry the same verdict as the table
    assert WassersteinBound.__dataclass_fields__["certified"].default is False
    assert GeneralizationBound.__dataclass_fields__["certified"].default is False
    assert BOUNDS["w2_lipschitz_bound"].certified and not BOUNDS["w2_bound"].certified
    assert not BOUNDS["gen_bound"].certified and not BOUNDS["ntk_check"].certified
    for cite in ("Benton", "Du, Zhai", "Arora", "Maurer", "Talagrand", "Efron-Stein"):
        assert re.search(cite, text), cite
    with pytest.raises(ValueError, match="not known"):
        bounds_table(["no_such_bound"])
