"""Drift statistics with intervals, landmark cues, anchoring and cue conflict."""

import math

import numpy as np
import pytest
import torch
from drift_theory import null_vector_theory

from neurodyn.analysis.bump_motion import diffusion
from neurodyn.analysis.drift import (
    diffusion_estimate,
    diffusion_tensor_theory,
    error_growth,
    integration_horizon,
)
from neurodyn.dynamics.simulation import simulate
from neurodyn.fitting.core import FitConfig, fit
from neurodyn.spatial.anchoring import cue_conflict, followed_fraction_theory, landmark_anchoring
from neurodyn.spatial.cues import Landmark, cue_current, pull_rate


@pytest.fixture(scope="module")
def ring64():
    return fit(FitConfig(geometry="ring", n=64, seed=0)).network


def _brownian(d, runs, steps, dt, seed, dim=1):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.normal(0, math.sqrt(2 * d * dt), (steps, runs, dim)), axis=0)


def test_estimate_covers_truth_and_rejects_a_wrong_value():
    t = np.arange(2001) * 0.1
    psi = _brownian(0.02, 64, 2001, 0.1, 3)
    est = diffusion_estimate(psi, t, lags=(1, 2, 4, 8), seed=0)
    assert est.contains(0.02) and abs(est.D / 0.02 - 1) < 0.1
    assert not est.contains(0.03) and not est.contains(0.014)
    # decoding jitter adds a constant to every lag: absorbed by the intercept
    jit = psi + np.random.default_rng(9).normal(0, 0.3, psi.shape)
    with_c = diffusion_estimate(jit, t, lags=(1, 2, 4, 8), seed=0)
    origin = diffusion_estimate(jit, t, lags=(1, 2, 4, 8), seed=0, intercept=False)
    assert with_c.contains(0.02) and with_c.intercept == pytest.approx(0.18, rel=0.1)
    assert not origin.contains(0.02)


def test_estimate_is_wrap_invariant_and_torus_tensor():
    t = np.arange(1001) * 0.2
    psi = _brownian(0.05, 32, 1001, 0.2, 4, dim=2)
    a = diffusion_estimate(psi, t, lags=(1, 2, 4), seed=0)
    b = diffusion_estimate(np.mod(psi, 2 * np.pi), t, lags=(1, 2, 4), seed=0)
    assert a.D == pytest.approx(b.D, rel=1e-9)
    assert abs(a.tensor[0][1]) < 0.1 * a.D


def test_tensor_theory_matches_ring_closed_form(ring64):
    # on a ring D = sigma^2 |l|^2 / (2 (l.t)^2), l = phi'(u*) t, t = du*/dpsi
    psi = torch.zeros(1, dtype=torch.float64)
    u, t = ring64.manifold.u_star(psi), ring64.manifold.tangent(psi, 0).reshape(-1)
    left = ring64.activation.derivative(u).reshape(-1) * t
    closed = float(0.1**2 * left.dot(left) / (2 * left.dot(t) ** 2))
    assert diffusion_tensor_theory(ring64, 0.1)[0, 0] == pytest.approx(closed, rel=1e-12)


def test_theory_is_the_projection_on_the_jacobian_null_vectors(ring64):
    """The closed form is the exact finite-N linear theory: the same number from the null
    vectors of the 64 x 64 Jacobian, not from the tangent formula; the decoder's gradient is
    parallel to the left null vector (no first-order decoding jitter); and the orthogonal
    projection (right null vector only), a plausible wrong theory, is 30% off."""
    d, left, grad, tang = null_vector_theory(ring64, 0.1)
    assert diffusion_tensor_theory(ring64, 0.1)[0, 0] == pytest.approx(d[0, 0], rel=1e-8)
    cos = abs(left[0] @ grad[0]) / (np.linalg.norm(left[0]) * np.linalg.norm(grad[0]))
    assert cos == pytest.approx(1.0, abs=1e-10)
    orthogonal = 0.1**2 / (2 * tang[0] @ tang[0])
    assert abs(orthogonal / d[0, 0] - 1) > 0.3


def test_ring_diffusion_interval_contains_theory(ring64):
    m = diffusion(ring64, noise=0.1, runs=64, duration=200.0, dt=0.05, seed=2).to_dict()
    assert m["contains_theory"] and abs(m["ratio"] - 1) < 0.1, m
    assert m["D_low"] < m["D"] < m["D_high"]


def test_error_growth_and_horizon_on_brownian_motion():
    t = np.arange(4001) * 0.05
    e = _brownian(0.01, 400, 4001, 0.05, 5)[..., 0]
    g = error_growth(e, t, d_trace=0.01)
    se = 1 / math.sqrt(2 * 400)  # relative standard error of an RMS over 400 Gaussian runs
    assert abs(g.ratio_final() - 1) < 4 * se
    width = (g.high[-1] - g.low[-1]) / g.rms[-1]
    assert width == pytest.approx(2 * 1.96 * se, rel=0.3)
    h = integration_horizon(e, t, threshold=0.2, d_trace=0.01, speed=2.0)
    # an error sampled every 0.05 crosses later than the continuous one: the corrected theory
    assert h.crossed == 1.0 and h.low <= h.theory_time_sampled <= h.high, h
    assert h.theory_time_sampled > 1.1 * h.theory_time
    assert h.mean_distance == pytest.approx(2 * h.mean_time)
    never = integration_horizon(e, t, threshold=100.0)
    assert never.crossed == 0 and math.isnan(never.mean_time)


def test_pull_rate_matches_a_deterministic_relaxation(ring64):
    """A cue at a small offset pulls the phase back at the predicted rate; no cue, no pull."""
    assert float(pull_rate(ring64, 0.2)[0, 0]) == pytest.approx(0.2 / 4.0, rel=1e-6)
    u0 = ring64.manifold.u_star(torch.tensor([[0.1]], dtype=torch.float64))
    miss = []
    for a in (0.02, 0.08):
        k = float(pull_rate(ring64, a)[0, 0])
        # rk4 at 0.2 tau: the misses agree with 0.1 tau to 1e-9, at half the field evaluations
        cur = cue_current(ring64, Landmark(a), np.zeros(1), 0.2)
        tr = simulate(ring64, u0, 25.0, 0.2, current=cur, save_every=25)
        # after the bump's own relaxation (~tau), the offset decays as exp(-k t)
        rate = math.log(float(tr.decoded[1, 0, 0]) / float(tr.decoded[-1, 0, 0])) / 20.0
        miss.append(rate / k - 1)
    # the linear theory is exact as A -> 0: the miss is first order in A
    assert abs(miss[0]) < 0.01 and miss[1] / miss[0] == pytest.approx(4.0, rel=0.25), miss
    none = simulate(ring64, u0, 20.0, 0.2, current=cue_current(ring64, Landmark(0.0),
                                                                 np.zeros(1), 0.2))
    assert float(none.decoded[-1, 0, 0]) == pytest.approx(0.1, abs=1e-6)


def test_landmark_schedule_and_rotation():
    lm = Landmark(1.0, windows=((0.0, 5.0),), rotation=0.5, rotate_at=2.0)
    assert lm.on(1.0) and not lm.on(6.0)
    assert lm.offset(1.0, 1)[0] == 0 and lm.offset(3.0, 1)[0] == 0.5
    with pytest.raises(ValueError, match="strength"):
        Landmark(-1.0)
    with pytest.raises(ValueError, match="windows"):
        Landmark(1.0, windows=((3.0, 1.0),))


def test_anchoring_bounds_the_error_that_otherwise_diffuses(ring64):
    # Euler-Maruyama at 0.2 tau (the normal modes relax at 1/tau; the phase's diffusion does
    # not depend on the step to first order, neurodyn.analysis.drift)
    r = landmark_anchoring(ring64, noise=0.3, strength=0.2, duration=200.0, runs=16, dt=0.2,
                           velocity=None, save_every=25, seed=1)
    m = r.metrics
    # anchored: RMS near sqrt(D / k); the free run's error grows past it
    assert m["rms_cue_late_mean"] == pytest.approx(r.bound, rel=0.35), m
    assert m["rms_free_final"] > 2.5 * m["rms_cue_final"], m
    assert m["free_ratio_low"] <= 1.0 <= m["free_ratio_high"], m


def test_cue_conflict_follows_the_phase_equation(ring64):
    c = cue_conflict(ring64, strengths=(0.02, 0.2, 2.0), window=20.0, runs=4, noise=0.02)
    assert np.all(np.diff(c.followed) > 0)
    assert c.followed[0] < 0.2 and c.followed[-1] > 0.95
    assert np.allclose(c.followed[:2], c.theory[:2], atol=0.05)
    assert followed_fraction_theory(0.0, 1.0, 10.0) == 0.0
