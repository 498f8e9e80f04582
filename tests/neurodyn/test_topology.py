"""Betti numbers of point clouds and of bump activity with known topology."""

import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from neurodyn.analysis.topology import (
    Homology,
    TopologyDependencyError,
    betti_numbers,
    long_bar_thresholds,
    persistent_homology,
)
from neurodyn.plotting.topology import plot_barcode, plot_persistence_diagram

pytest.importorskip("ripser")


def noisy_circle(n: int, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    a = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[np.cos(a), np.sin(a), np.zeros(n)]
    return X + noise * rng.normal(size=X.shape)


def flat_torus(n: int, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    a, b = rng.uniform(0, 2 * np.pi, (2, n))
    X = np.c_[np.cos(a), np.sin(a), np.cos(b), np.sin(b)]
    return X + noise * rng.normal(size=X.shape)


def sphere(n: int, rng: np.random.Generator, noise: float = 0.03) -> np.ndarray:
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X + noise * rng.normal(size=X.shape)


def ring_activity(
    samples: int, n: int, rng: np.random.Generator, kappa: float = 4.0, noise: float = 0.03
) -> np.ndarray:
    """Rates r_j = exp(kappa (cos(theta_j - psi) - 1)) of n neurons, psi uniform on the ring."""
    theta = 2 * np.pi * np.arange(n) / n
    psi = rng.uniform(0, 2 * np.pi, samples)
    rates = np.exp(kappa * (np.cos(theta[None, :] - psi[:, None]) - 1))
    return rates + noise * rng.normal(size=rates.shape)


def torus_activity(
    samples: int,
    side: int,
    rng: np.random.Generator,
    kappa: float = 3.0,
    noise: float = 0.03,
    hexagonal: bool = False,
) -> np.ndarray:
    """Periodic bump on a side x side sheet, centred at (psi1, psi2) uniform on the torus.

    Square: p = cos(d1) + cos(d2); hexagonal: p = cos(d1) + cos(d2) + cos(d1 - d2), the three
    fundamental modes (1,0), (0,1), (1,-1). Rates exp(kappa (p - p_max) / terms).
    """
    t = 2 * np.pi * np.arange(side) / side
    t1, t2 = (g.ravel() for g in np.meshgrid(t, t, indexing="ij"))
    psi1, psi2 = rng.uniform(0, 2 * np.pi, (2, samples))
    d1 = t1[None, :] - psi1[:, None]
    d2 = t2[None, :] - psi2[:, None]
    p = np.cos(d1) + np.cos(d2)
    terms = 2
    if hexagonal:
        p = p + np.cos(d1 - d2)
        terms = 3
    rates = np.exp(kappa * (p - terms) / terms)
    return rates + noise * rng.normal(size=rates.shape)


def two_clusters(n: int, rng: np.random.Generator) -> np.ndarray:
    half = n // 2
    return np.r_[0.3 * rng.normal(size=(half, 3)), 0.3 * rng.normal(size=(n - half, 3)) + 6.0]


# ----------------------------------------------------------------------------------------------
# point clouds with known topology


def test_noisy_circle_is_a_circle():
    h = persistent_homology(noisy_circle(600, np.random.default_rng(0)))
    assert betti_numbers(h) == (1, 1, 0)
    assert h.maxdim == 2 and len(h.landmarks) == 250
    # the loop persists from the sampling scale to ~sqrt(3) times the radius
    assert 1.4 < h.lifetimes(1)[0] < 1.8


def test_torus_in_r4_has_two_loops_and_a_cavity():
    h = persistent_homology(flat_torus(2000, np.random.default_rng(1)), max_points=200)
    assert betti_numbers(h) == (1, 2, 1)


def test_sphere_has_a_cavity_and_no_loop():
    h = persistent_homology(sphere(1500, np.random.default_rng(2)), max_points=200)
    assert betti_numbers(h) == (1, 0, 1)


def test_two_clusters_have_two_components():
    h = persistent_homology(two_clusters(400, np.random.default_rng(3)), maxdim=1)
    assert betti_numbers(h) == (2, 0)


# ----------------------------------------------------------------------------------------------
# bump activity: the statistics real network activity is judged with


def test_ring_bump_activity_is_a_circle():
    X = ring_activity(1500, 64, np.random.default_rng(4))
    assert betti_numbers(persistent_homology(X)) == (1, 1, 0)


def test_small_torus_bump_activity_is_a_torus():
    X = torus_activity(1200, 16, np.random.default_rng(5))
    h = persistent_homology(X, max_points=150)
    assert h.pca_components == 10
    assert betti_numbers(h) == (1, 2, 1)


@pytest.mark.parametrize("hexagonal", [pytest.param(False, marks=pytest.mark.slow), True])
def test_full_size_torus_activity_defaults(hexagonal):
    """A few thousand samples of a 32 x 32 sheet, default settings."""
    X = torus_activity(3000, 32, np.random.default_rng(6), kappa=5.0, hexagonal=hexagonal)
    h = persistent_homology(X)
    assert betti_numbers(h) == (1, 2, 1)


@pytest.mark.slow
@pytest.mark.parametrize(("kappa", "noise"), [(1.0, 0.0), (8.0, 0.1)])
def test_full_size_ring_activity_defaults(kappa, noise):
    X = ring_activity(3000, 128, np.random.default_rng(7), kappa=kappa, noise=noise)
    assert betti_numbers(persistent_homology(X)) == (1, 1, 0)


@pytest.mark.slow
def test_projection_separates_noise_from_features():
    """Noise over 1024 neurons makes the H0 sampling bars nearly as long as half the diameter
    (the default threshold's anchor); projecting on the leading principal components removes it.
    """
    X = torus_activity(3000, 32, np.random.default_rng(8), kappa=5.0, noise=0.05)
    projected = persistent_homology(X)
    raw = persistent_homology(X, pca_components=None)
    assert raw.pca_components is None

    def h0_margin(h: Homology) -> float:
        return (h.diameter / 2 - h.lifetimes(0)[1]) / h.diameter

    assert betti_numbers(projected) == (1, 2, 1)
    assert h0_margin(projected) > 0.2
    assert h0_margin(raw) < h0_margin(projected) - 0.1


# ----------------------------------------------------------------------------------------------
# contracts


def test_same_seed_same_diagrams_and_distance_matrix_input_agrees():
    X = noisy_circle(300, np.random.default_rng(9))
    a = persistent_homology(X, maxdim=1, max_points=80, seed=3)
    b = persistent_homology(X, maxdim=1, max_points=80, seed=3)
    for da, db in zip(a.diagrams, b.diagrams, strict=True):
        np.testing.assert_array_equal(da, db)
    D = np.linalg.norm(X[:, None] - X[None], axis=-1)
    c = persistent_homology(D, maxdim=1, max_points=80, seed=3, distance_matrix=True)
    assert c.metric == "precomputed"
    np.testing.assert_array_equal(a.landmarks, c.landmarks)
    np.testing.assert_allclose(a.diagrams[1], c.diagrams[1], atol=1e-5)


def test_thresholds_are_parameters():
    h = persistent_homology(noisy_circle(400, np.random.default_rng(10)), max_points=120)
    taus = long_bar_thresholds(h)
    assert len(taus) == 3 and all(0 < t < h.diameter / 2 for t in taus)
    assert betti_numbers(h, threshold=taus) == betti_numbers(h) == h.betti()
    # a threshold longer than every bar leaves only the component that never dies
    assert betti_numbers(h, threshold=h.diameter) == (1, 0, 0)
    # threshold 0 counts every bar
    assert betti_numbers(h, threshold=0.0) == tuple(len(d) for d in h.diagrams)
    with pytest.raises(ValueError, match="threshold has 2 values"):
        betti_numbers(h, threshold=[0.1, 0.2])
    with pytest.raises(ValueError, match="threshold=-1"):
        betti_numbers(h, threshold=-1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"maxdim": 4}, "maxdim=4"),
        ({"coeff": 4}, "coeff=4"),
        ({"max_points": 1}, "max_points=1"),
        ({"pca_components": 0}, "pca_components=0"),
        ({"distance_matrix": True}, "square"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        persistent_homology(np.zeros((10, 3)), **kwargs)


def test_bad_arrays():
    with pytest.raises(ValueError, match="2-D"):
        persistent_homology(np.zeros(5))
    with pytest.raises(ValueError, match="at least 2"):
        persistent_homology(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="not a distance matrix"):
        persistent_homology(-np.ones((4, 4)), distance_matrix=True)


def test_missing_ripser_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ripser", None)
    with pytest.raises(TopologyDependencyError, match=r"pip install neurodyn-flows\[topology\]"):
        persistent_homology(np.random.default_rng(0).normal(size=(20, 2)))
    assert issubclass(TopologyDependencyError, ImportError)


def test_plots():
    h = persistent_homology(noisy_circle(300, np.random.default_rng(11)), max_points=100)
    fig = plot_barcode(h)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    assert fig.axes[-1].get_xlabel().startswith("filtration scale")
    assert fig.axes[1].get_ylabel() == "H1 (β1 = 1)"
    colours = {ax.lines[0].get_color() for ax in fig.axes[1:]}
    assert len(colours) == 2  # one colour per dimension

    fig2 = plot_persistence_diagram(h)
    ax = fig2.axes[0]
    assert ax.get_xlabel().startswith("birth") and ax.get_ylabel().startswith("death")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["H0", "H1", "H2"]

    shared = Figure().add_subplot()
    assert plot_barcode(h, ax=shared, threshold=False) is shared.get_figure()


def test_homology_lifetimes_reject_bad_dimension():
    h = Homology((np.array([[0.0, np.inf]]),), 1.0, 0.0, np.arange(1), 1)
    assert h.lifetimes(0)[0] == np.inf
    with pytest.raises(ValueError, match="dim=1"):
        h.lifetimes(1)


def test_docstring_examples_run():
    import doctest

    import neurodyn.analysis.topology

    result = doctest.testmod(neurodyn.analysis.topology, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
