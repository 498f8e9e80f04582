"""PCA, Isomap and subsampling of point clouds with known geometry."""

import numpy as np
import pytest
from matplotlib.figure import Figure
from scipy.stats import spearmanr

from neurodyn.analysis.embedding import Embedding, isomap, pca, subsample
from neurodyn.plotting.embedding import plot_embedding_2d, plot_embedding_3d


def _ring_in_rn(
    n: int, dim: int, seed: int, noise: float = 0.0, even: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """A unit circle embedded by a random isometry into R^dim, with its angle."""
    rng = np.random.default_rng(seed)
    t = 2 * np.pi * np.arange(n) / n if even else rng.uniform(0, 2 * np.pi, n)
    basis, _ = np.linalg.qr(rng.normal(size=(dim, 2)))
    X = np.c_[np.cos(t), np.sin(t)] @ basis.T + 3.0
    return X + noise * rng.normal(size=X.shape), t


def _swiss_roll(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1 + 2 * rng.uniform(size=n))
    h = 21 * rng.uniform(size=n)
    return np.c_[t * np.cos(t), h, t * np.sin(t)], t


def test_pca_of_linear_circle_finds_two_components():
    X, _ = _ring_in_rn(400, 50, seed=0, even=True)
    emb = pca(X, n_components=3)
    assert emb.coords.shape == (400, 3)
    assert emb.components.shape == (3, 50)
    assert emb.explained_variance_ratio[:2].sum() > 0.999999
    assert emb.explained_variance_ratio[2] < 1e-10
    np.testing.assert_allclose(emb.components @ emb.components.T, np.eye(3), atol=1e-10)
    radius = np.linalg.norm(emb.coords[:, :2], axis=1)
    np.testing.assert_allclose(radius, 1.0, atol=1e-8)
    np.testing.assert_allclose(emb.transform(X), emb.coords, atol=1e-10)


def test_pca_matches_reference_implementation():
    sklearn_decomposition = pytest.importorskip("sklearn.decomposition")
    X = np.random.default_rng(3).normal(size=(80, 7)) @ np.diag([5, 4, 3, 2, 1, 0.5, 0.1])
    emb = pca(X, n_components=4)
    ref = sklearn_decomposition.PCA(n_components=4).fit(X)
    np.testing.assert_allclose(emb.explained_variance_ratio, ref.explained_variance_ratio_)
    # components agree up to sign
    np.testing.assert_allclose(np.abs(emb.components @ ref.components_.T), np.eye(4), atol=1e-8)


def test_isomap_of_ring_recovers_a_circle():
    X, _ = _ring_in_rn(500, 30, seed=1, noise=0.01)
    emb = isomap(X, n_components=2, n_neighbors=8)
    assert emb.method == "isomap" and emb.components is None
    radius = np.linalg.norm(emb.coords - emb.coords.mean(axis=0), axis=1)
    assert radius.std() / radius.mean() < 0.1


def test_isomap_unrolls_swiss_roll():
    X, t = _swiss_roll(1200, seed=2)
    emb = isomap(X, n_components=2, n_neighbors=8)
    rho = abs(spearmanr(emb.coords[:, 0], t).statistic)
    assert rho > 0.9
    # PCA cannot: its first coordinate mixes the turns of the roll.
    assert abs(spearmanr(pca(X, 2).coords[:, 0], t).statistic) < rho


def test_isomap_matches_reference_implementation():
    sklearn_manifold = pytest.importorskip("sklearn.manifold")
    X, _ = _swiss_roll(300, seed=6)
    emb = isomap(X, n_components=2, n_neighbors=8)
    ref = sklearn_manifold.Isomap(n_neighbors=8, n_components=2).fit_transform(X)
    np.testing.assert_allclose(np.abs(emb.coords), np.abs(ref), rtol=1e-6, atol=1e-6)


def test_isomap_disconnected_graph_names_n_neighbors():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(30, 3)), rng.normal(size=(30, 3)) + 100.0]
    with pytest.raises(ValueError, match=r"n_neighbors=5.*increase n_neighbors"):
        isomap(X, n_neighbors=5)


@pytest.mark.parametrize(
    ("fn", "X", "kwargs", "match"),
    [
        (pca, np.zeros(10), {}, "2-D array"),
        (pca, np.zeros((1, 4)), {}, "at least 2"),
        (pca, np.ones((5, 3)), {"n_components": 4}, "n_components=4"),
        (pca, np.full((5, 3), np.nan), {}, "non-finite"),
        (isomap, np.zeros((2, 3)), {}, "at least 3"),
        (isomap, np.zeros((10, 3, 2)), {}, "2-D array"),
        (isomap, np.random.default_rng(0).normal(size=(10, 3)), {"n_neighbors": 10}, "1..9"),
        (isomap, np.random.default_rng(0).normal(size=(10, 3)), {"n_components": 0}, "1..9"),
    ],
)
def test_bad_inputs_raise_with_the_parameter_named(fn, X, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fn(X, **kwargs)


def test_subsample_is_deterministic_and_covers():
    X, _ = _ring_in_rn(2000, 5, seed=4)
    a = subsample(X, 50, seed=7)
    b = subsample(X, 50, seed=7)
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) == 50
    # farthest-point landmarks on a unit circle are nearly evenly spaced: gaps <= ~2x the ideal
    ang = np.sort(np.arctan2(*pca(X, 2).transform(X[a]).T[::-1]))
    gaps = np.diff(np.r_[ang, ang[0] + 2 * np.pi])
    assert gaps.max() < 2.5 * (2 * np.pi / 50)
    r = subsample(X, 50, seed=7, method="random")
    np.testing.assert_array_equal(
        r, subsample(X, 50, seed=np.random.default_rng(7), method="random")
    )
    assert len(np.unique(r)) == 50
    np.testing.assert_array_equal(subsample(X[:10], 50, seed=0), np.arange(10))
    with pytest.raises(ValueError, match="method='grid'"):
        subsample(X, 5, method="grid")
    with pytest.raises(ValueError, match="max_points=0"):
        subsample(X, 0)


def test_plots_label_axes_and_colour_bars():
    X, t = _ring_in_rn(200, 10, seed=5, noise=0.01)
    emb = pca(X, 3)
    fig = plot_embedding_3d(emb, color=t, color_label="bump angle (rad)")
    assert isinstance(fig, Figure)
    ax3 = fig.axes[0]
    assert ax3.get_xlabel().startswith("PC1 (") and "%" in ax3.get_xlabel()
    assert ax3.get_zlabel().startswith("PC3 (")
    assert fig.axes[1].get_ylabel() == "bump angle (rad)"  # the colour bar
    assert ax3.collections[0].get_cmap().name == "twilight"

    fig2 = plot_embedding_2d(
        isomap(X, 2, 8), color=np.arange(200.0), cyclic=False, color_label="time (s)"
    )
    ax = fig2.axes[0]
    assert ax.get_xlabel().startswith("Isomap 1 (")
    assert ax.collections[0].get_cmap().name == "viridis"
    assert fig2.axes[1].get_ylabel() == "time (s)"

    fig3 = Figure()
    ax_given = fig3.add_subplot()
    assert plot_embedding_2d(emb, ax=ax_given) is fig3
    with pytest.raises(ValueError, match="color has 3 values"):
        plot_embedding_2d(emb, color=[1, 2, 3])
    with pytest.raises(ValueError, match="at least 3"):
        plot_embedding_3d(
            Embedding(emb.coords[:, :2], emb.explained_variance_ratio[:2], None, emb.mean)
        )


def test_docstring_examples_run():
    import doctest

    import neurodyn.analysis.embedding

    result = doctest.testmod(neurodyn.analysis.embedding, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
