"""Rate maps, autocorrelograms and grid scores against maps whose answer is known."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from scipy.ndimage import gaussian_filter

from neurodyn.plotting.ratemaps import plot_autocorrelogram, plot_rate_maps
from neurodyn.spatial.agent import Box, generate_trajectory
from neurodyn.spatial.gridscores import GridScore, fraction_above, grid_scores, gridness
from neurodyn.spatial.phases import grid_pattern
from neurodyn.spatial.ratemaps import RateMaps, autocorrelogram, rate_maps


def grid_map(
    bins: int,
    spacing: float = 0.5,
    orientation: float = 0.0,
    lattice: str = "hex",
    offset: tuple[float, float] = (0.0, 0.0),
    size: float = 1.0,
) -> np.ndarray:
    """Rectified ideal grid pattern sampled at the bin centres, shape (bins, bins) [iy, ix]."""
    centres = (np.arange(bins) + 0.5) / bins * size
    xy = np.stack(np.meshgrid(centres, centres), axis=-1)
    return np.maximum(grid_pattern(xy, spacing, orientation, lattice, np.asarray(offset)), 0.0)


def angle_mod(a: float, period: float) -> float:
    """Distance between angles modulo a period."""
    d = (a % period + period) % period
    return min(d, period - d)


# --------------------------------------------------------------------------------------------------
# rate maps


def test_rate_maps_match_a_direct_average():
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 1, size=(3000, 2))
    rates = rng.normal(size=(3000, 3))
    rm = rate_maps(pos, rates, Box(1.0), bins=5)
    assert rm.maps.shape == (3, 5, 5)
    np.testing.assert_allclose(rm.x_edges, np.linspace(0, 1, 6))
    ix = np.minimum((pos[:, 0] * 5).astype(int), 4)
    iy = np.minimum((pos[:, 1] * 5).astype(int), 4)
    for i in range(5):
        for j in range(5):
            sel = (iy == i) & (ix == j)
            assert rm.occupancy[i, j] == sel.sum()
            np.testing.assert_allclose(rm.maps[:, i, j], rates[sel].mean(axis=0), rtol=1e-12)
    assert rm.occupancy.sum() == 3000
    assert rm.bin_size == pytest.approx(0.2)


def test_rate_maps_recover_a_known_tuning():
    traj = generate_trajectory(600.0, dt=0.02, box=Box(1.0), seed=2)
    x, y = traj.position.T
    tuning = np.stack([np.exp(-((x - 0.3) ** 2 + (y - 0.7) ** 2) / (2 * 0.15**2)), x * y], axis=1)
    rm = rate_maps(traj.position, tuning, traj.box, bins=20)
    centres = (np.arange(20) + 0.5) / 20
    cx, cy = np.meshgrid(centres, centres)
    truth = np.stack([np.exp(-((cx - 0.3) ** 2 + (cy - 0.7) ** 2) / (2 * 0.15**2)), cx * cy])
    visited = rm.occupancy > 0
    err = np.abs(rm.maps - truth)[:, visited]
    # a bin average differs from the value at the bin centre by at most the steepest slope times
    # the half-diagonal of a bin: 0.15 for the place field (slope e^-1/2 / 0.15 per m), 0.05 for x y
    assert err[0].max() < 0.15 and err[1].max() < 0.05
    assert err.mean() < 0.01
    assert np.corrcoef(rm.maps[0][visited], truth[0][visited])[0, 1] > 0.995
    # the peak of the place field lands in the right bin (row = y, column = x)
    iy, ix = np.unravel_index(np.nanargmax(rm.maps[0]), (20, 20))
    assert abs(centres[ix] - 0.3) <= 0.05 and abs(centres[iy] - 0.7) <= 0.05


def test_unvisited_bins_are_nan_even_when_smoothed():
    rng = np.random.default_rng(1)
    pos = np.column_stack([rng.uniform(0, 0.5, 5000), rng.uniform(0, 1, 5000)])
    rates = np.full((5000, 2), 4.0)
    for smoothing in (None, 1.5):
        rm = rate_maps(pos, rates, Box(1.0), bins=10, smoothing=smoothing)
        assert np.all(np.isnan(rm.maps[:, :, 5:]))
        assert np.all(rm.occupancy[:, 5:] == 0)
        # normalised smoothing keeps a constant rate constant, also at walls and gaps
        np.testing.assert_allclose(rm.maps[:, :, :5], 4.0, rtol=1e-12)


def test_smoothing_is_a_normalised_gaussian():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 1, size=(20000, 2))
    rates = (pos[:, :1] > 0.5).astype(float)
    raw = rate_maps(pos, rates, bins=20)
    smooth = rate_maps(pos, rates, bins=20, smoothing=2.0)
    sums = gaussian_filter(raw.maps[0] * raw.occupancy, 2.0, mode="constant")
    occ = gaussian_filter(raw.occupancy, 2.0, mode="constant")
    np.testing.assert_allclose(smooth.maps[0], sums / occ, rtol=1e-10)
    np.testing.assert_array_equal(smooth.occupancy, raw.occupancy)


def test_bin_size_is_equivalent_to_bins():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 2, size=(1000, 2))
    rates = rng.normal(size=(1000, 4))
    a = rate_maps(pos, rates, Box(2.0), bins=8)
    b = rate_maps(pos, rates, Box(2.0), bin_size=0.25)
    np.testing.assert_array_equal(a.maps, b.maps)
    with pytest.raises(ValueError, match="bin_size"):
        rate_maps(pos, rates, Box(2.0), bin_size=0.3)


@pytest.mark.parametrize(
    ("positions", "rates", "kwargs", "match"),
    [
        (np.zeros((10, 3)), np.zeros((10, 2)), {}, r"positions must have shape \(steps, 2\)"),
        (np.zeros((10, 2)), np.zeros(10), {}, r"rates must have shape \(steps, cells\)"),
        (np.zeros((10, 2)), np.zeros((9, 2)), {}, "rates must have as many steps"),
        (np.full((10, 2), 1.5), np.zeros((10, 2)), {}, r"inside the box.*index 0"),
        (np.zeros((10, 2)), np.full((10, 2), np.nan), {}, "rates must be finite"),
        (np.zeros((10, 2)), np.zeros((10, 2)), {"bins": 0}, "bins"),
        (np.zeros((10, 2)), np.zeros((10, 2)), {"smoothing": -1.0}, "smoothing"),
    ],
)
def test_rate_maps_reject_bad_input(positions, rates, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rate_maps(positions, rates, **kwargs)


# --------------------------------------------------------------------------------------------------
# autocorrelogram


def _direct_autocorr(m: np.ndarray, dy: int, dx: int) -> float:
    """Pearson correlation of m[p] and m[p + (dy, dx)] over pairs where both are finite."""
    ny, nx = m.shape
    a, b = [], []
    for i in range(ny):
        for j in range(nx):
            k, l = i + dy, j + dx
            if 0 <= k < ny and 0 <= l < nx and np.isfinite(m[i, j]) and np.isfinite(m[k, l]):
                a.append(m[i, j])
                b.append(m[k, l])
    return float(np.corrcoef(a, b)[0, 1])


def test_autocorrelogram_is_the_pearson_correlation_over_valid_pairs():
    rng = np.random.default_rng(4)
    m = gaussian_filter(rng.random((12, 15)), 1.0)
    m[rng.random(m.shape) < 0.15] = np.nan
    ac = autocorrelogram(m, min_overlap=20)
    assert ac.shape == (23, 29)
    for dy, dx in [(0, 0), (1, 0), (0, 3), (-2, 5), (4, -6), (7, 2), (-5, -9)]:
        assert ac[11 + dy, 14 + dx] == pytest.approx(_direct_autocorr(m, dy, dx), abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_autocorrelogram_centre_and_point_symmetry(seed: int):
    rng = np.random.default_rng(seed)
    m = rng.gamma(2.0, size=(20, 20))
    m[rng.random(m.shape) < 0.1] = np.nan
    ac = autocorrelogram(m)
    assert ac[19, 19] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(ac, ac[::-1, ::-1], atol=1e-10, equal_nan=True)
    np.testing.assert_array_equal(np.isnan(ac), np.isnan(ac[::-1, ::-1]))
    assert np.nanmax(np.abs(ac)) <= 1.0
    # lags with too little overlap are undefined: the far corners overlap by one bin
    assert np.isnan(ac[0, 0]) and np.isnan(ac[-1, -1])


def test_autocorrelogram_batched_and_degenerate():
    maps = np.stack([grid_map(20), grid_map(20, lattice="square")])
    batched = autocorrelogram(maps)
    assert batched.shape == (2, 39, 39)
    np.testing.assert_allclose(batched[1], autocorrelogram(maps[1]), atol=1e-12, equal_nan=True)
    assert np.all(np.isnan(autocorrelogram(np.full((10, 10), 3.0))))
    with pytest.raises(ValueError, match="rate_map"):
        autocorrelogram(np.zeros(10))
    with pytest.raises(ValueError, match="min_overlap"):
        autocorrelogram(np.zeros((5, 5)), min_overlap=0)


# --------------------------------------------------------------------------------------------------
# grid scores of synthetic maps


@pytest.mark.parametrize("bins", [20, 30, 40])
@pytest.mark.parametrize("orientation_deg", [0.0, 10.0, 25.0, 45.0])
def test_perfect_hex_map(bins: int, orientation_deg: float):
    theta = math.radians(orientation_deg)
    g = gridness(grid_map(bins, 0.5, theta), bin_size=1.0 / bins)
    # measured: classic 1.30-1.40, mean within 0.01 of it
    assert g.classic > 0.8
    assert g.mean > 0.8
    assert g.score_90 < 0.0
    assert abs(g.spacing - 0.5) < 0.05
    # nearest peaks of the pattern lie at theta + 30 deg (mod 60 deg)
    expected = theta + math.pi / 6
    assert angle_mod(g.orientation - expected, math.pi / 3) < math.radians(5)
    assert 0 <= g.orientation < math.pi / 3


@pytest.mark.parametrize("spacing", [0.3, 0.7])
def test_hex_spacing_is_measured(spacing: float):
    g = gridness(grid_map(30, spacing, 0.2), bin_size=1 / 30)
    assert g.classic > 0.8
    assert abs(g.spacing - spacing) < 0.1 * spacing


@pytest.mark.parametrize("bins", [20, 40])
def test_square_map_is_not_hexagonal(bins: int):
    g = gridness(grid_map(bins, 0.5, 0.1, lattice="square"), bin_size=1 / bins)
    # measured: classic ~ -1.27, score_90 ~ 1.25
    assert g.classic < 0.3
    assert g.score_90 > 0.8
    assert abs(g.spacing - 0.5) < 0.05


def test_white_noise_scores_near_zero():
    rng = np.random.default_rng(10)
    maps = rng.random((60, 20, 20))
    scores = grid_scores(maps, bin_size=0.05)
    for name in ("classic", "mean", "score_90"):
        values = getattr(scores, name)
        assert np.all(np.isfinite(values))
        assert abs(np.median(values)) < 0.2
        assert np.percentile(values, 90) < 0.3
    # smoothed noise has few independent blobs and a wider null distribution, but no hex bias
    smooth = np.stack([gaussian_filter(m, 1.5) for m in maps])
    classic = grid_scores(smooth, bin_size=0.05).classic
    assert abs(np.median(classic)) < 0.2
    assert fraction_above(classic, 0.8) <= 0.05


def test_scores_invariant_to_rotation_and_shift():
    rng = np.random.default_rng(5)
    scores = []
    for _ in range(8):
        theta = rng.uniform(0, np.pi / 3)
        offset = tuple(rng.uniform(0, 2 * np.pi, 2))
        scores.append(gridness(grid_map(30, 0.5, theta, offset=offset), bin_size=1 / 30))
    classic = np.array([g.classic for g in scores])
    spacing = np.array([g.spacing for g in scores])
    assert classic.max() - classic.min() < 0.15
    assert spacing.max() - spacing.min() < 0.03


def test_gridness_from_map_or_autocorrelogram():
    m = grid_map(25, 0.45, 0.3)
    from_map = gridness(m, bin_size=0.04)
    from_ac = gridness(autocorr=autocorrelogram(m), bin_size=0.04)
    assert from_map == from_ac
    assert isinstance(from_map, GridScore)
    assert set(from_map.correlations) == {30, 45, 60, 90, 120, 135, 150}
    # classic is exactly its definition at the annulus that produced it
    r = from_map.correlations
    assert from_map.classic == pytest.approx(min(r[60], r[120]) - max(r[30], r[90], r[150]))
    assert 0 < from_map.inner_radius < from_map.outer_radius
    # spacing scales with the bin size
    assert gridness(m, bin_size=1.0).spacing == pytest.approx(from_map.spacing / 0.04)


def test_gridness_degenerate_and_bad_input():
    g = gridness(np.full((20, 20), 2.0))
    assert math.isnan(g.classic) and math.isnan(g.spacing)
    with pytest.raises(ValueError, match="exactly one of rate_map and autocorr"):
        gridness()
    with pytest.raises(ValueError, match="exactly one of rate_map and autocorr"):
        gridness(np.zeros((5, 5)), autocorr=np.zeros((9, 9)))
    with pytest.raises(ValueError, match="autocorr"):
        gridness(autocorr=np.zeros((10, 10)))
    with pytest.raises(ValueError, match="rate_map"):
        gridness(np.zeros((10, 12)))
    with pytest.raises(ValueError, match="bin_size"):
        gridness(grid_map(20), bin_size=0.0)


def test_grid_scores_agree_with_gridness_and_fraction_above():
    maps = np.stack([grid_map(20, 0.5, 0.1), grid_map(20, 0.5, 0.1, "square"),
                     np.full((20, 20), 1.0)])
    rm = RateMaps(maps=maps, x_edges=np.linspace(0, 1, 21), y_edges=np.linspace(0, 1, 21),
                  occupancy=np.ones((20, 20)))
    scores = grid_scores(rm)
    for c in range(2):
        g = gridness(maps[c], bin_size=0.05)
        assert scores.classic[c] == g.classic
        assert scores.score_90[c] == g.score_90
        assert scores.spacing[c] == g.spacing
    assert math.isnan(scores.classic[2])
    assert fraction_above(scores.classic, 0.8) == pytest.approx(1 / 3)
    assert fraction_above(np.array([0.8, 0.79, np.nan, 1.2]), 0.8) == 0.5
    with pytest.raises(ValueError, match="scores"):
        fraction_above(np.zeros((2, 2)), 0.5)
    with pytest.raises(ValueError, match="maps"):
        grid_scores(np.zeros((20, 20)))


# --------------------------------------------------------------------------------------------------
# grid cells read out along a simulated trajectory


@pytest.fixture(scope="module")
def exploration():
    return generate_trajectory(600.0, dt=0.02, box=Box(1.0), seed=11)


def _population(traj, lattice: str, cells: int = 64, orientation: float = 0.3) -> RateMaps:
    offsets = np.random.default_rng(12).uniform(0, 2 * np.pi, size=(cells, 2))
    rates = np.maximum(grid_pattern(traj.position, 0.5, orientation, lattice, offsets), 0.0)
    return rate_maps(traj.position, rates, traj.box, bins=20)


def test_hex_cells_along_a_simulated_trajectory(exploration):
    scores = grid_scores(_population(exploration, "hex"))
    # measured: classic 1.25-1.33 for all 64 cells, spacing 0.50 m
    assert fraction_above(scores.classic, 0.8) >= 0.9
    assert np.median(scores.classic) > 1.0
    np.testing.assert_allclose(np.median(scores.spacing), 0.5, rtol=0.1)
    expected = 0.3 + math.pi / 6
    assert angle_mod(float(np.median(scores.orientation)) - expected, math.pi / 3) < math.radians(5)


def test_square_cells_along_a_simulated_trajectory(exploration):
    scores = grid_scores(_population(exploration, "square"))
    # measured: classic ~ -1.2, score_90 ~ 1.05
    assert np.all(scores.classic < 0.3)
    assert np.all(scores.score_90 > 0.8)


# --------------------------------------------------------------------------------------------------
# plotting


def test_plot_rate_maps(exploration):
    rm = _population(exploration, "hex", cells=10)
    maps = rm.maps.copy()
    maps[:, 0, 0] = np.nan
    rm = RateMaps(maps=maps, x_edges=rm.x_edges, y_edges=rm.y_edges, occupancy=rm.occupancy)
    before = plt.get_fignums()
    fig = plot_rate_maps(rm, cells=[0, 3, 5], ncols=2)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before
    images = [ax.images[0] for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(images) == 3
    assert images[0].get_cmap().name.startswith("viridis")
    # unvisited (NaN) bins are an opaque grey that is no colour of the rate scale, and the
    # title gives their share of the box
    bad = np.array(images[0].get_cmap().get_bad())
    scale = images[0].get_cmap()(np.linspace(0, 1, 256))
    assert bad[3] == 1.0 and np.allclose(bad[:3], bad[0]) and np.abs(scale - bad).max() > 0.2
    assert np.abs(scale - bad).sum(axis=1).min() > 0.2
    share = 100 * np.mean(~np.isfinite(maps[0]))
    assert f"grey: bins never visited ({share:.0f}% of the box)" in fig.texts[0].get_text()
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert "mean rate (a.u.)" in labels and "y (m)" in labels  # the colour bar says its unit
    assert any(ax.get_xlabel() == "x (m)" for ax in fig.axes)
    with pytest.raises(ValueError, match="cells"):
        plot_rate_maps(rm, cells=[10])


def test_plot_autocorrelogram():
    m = grid_map(20)
    ac = autocorrelogram(m)
    score = gridness(autocorr=ac, bin_size=0.05)
    before = plt.get_fignums()
    fig = plot_autocorrelogram(ac, bin_size=0.05, score=score)
    assert plt.get_fignums() == before
    ax = fig.axes[0]
    assert ax.get_xlabel() == "lag x (m)"
    assert "gridness" in ax.get_title()
    assert len(ax.patches) == 2
    fig2 = Figure()
    assert plot_autocorrelogram(ac, ax=fig2.add_subplot()) is fig2


def test_docstring_examples_run():
    import doctest

    import neurodyn.spatial.ratemaps

    result = doctest.testmod(neurodyn.spatial.ratemaps, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
