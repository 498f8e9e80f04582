"""Agent trajectories in a box and the physical-to-lattice phase conventions."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from _runkit import BadInput
from neurodyn.plotting.agent import plot_trajectory
from neurodyn.spatial.agent import Box, Trajectory, generate_trajectory
from neurodyn.spatial.phases import (
    grid_pattern,
    phase_to_position_delta,
    phase_track_to_positions,
    phase_velocity,
    position_to_phase,
    wave_vectors,
)
from neurodyn.spatial.positions import load_positions

# --------------------------------------------------------------------------------------------------
# Box


def test_box_validates_size():
    assert Box().size == 1.0
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="size"):
            Box(bad)
    with pytest.raises(BadInput, match="size"):
        Box("1")  # type: ignore[arg-type]


def test_box_contains_is_closed():
    box = Box(2.0)
    pts = np.array([[0.0, 0.0], [2.0, 2.0], [1.0, 2.0001], [-1e-9, 1.0], [1.5, 0.5]])
    np.testing.assert_array_equal(box.contains(pts), [True, True, False, False, True])
    with pytest.raises(ValueError, match="positions"):
        box.contains(np.zeros((4, 3)))


# --------------------------------------------------------------------------------------------------
# generated trajectories


@pytest.fixture(scope="module")
def ten_minutes() -> Trajectory:
    return generate_trajectory(600.0, dt=0.02, box=Box(1.0), seed=0)


def test_trajectory_shapes_and_time(ten_minutes: Trajectory):
    traj = ten_minutes
    assert traj.steps == 30_000
    assert traj.t.shape == (30_000,)
    assert traj.position.shape == traj.velocity.shape == (30_000, 2)
    np.testing.assert_allclose(np.diff(traj.t), 0.02, rtol=1e-9)
    assert traj.t[0] == 0.0


def test_trajectory_stays_in_box(ten_minutes: Trajectory):
    assert ten_minutes.box.contains(ten_minutes.position).all()


def test_velocity_convention_is_forward_difference(ten_minutes: Trajectory):
    traj = ten_minutes
    step = traj.position[1:] - traj.position[:-1]
    np.testing.assert_allclose(step, traj.velocity[:-1] * traj.dt, atol=1e-14)
    # integrating the velocities reproduces the track
    integrated = traj.position[0] + np.cumsum(traj.velocity[:-1] * traj.dt, axis=0)
    np.testing.assert_allclose(integrated, traj.position[1:], atol=1e-10)
    # the last velocity is the step actually taken after the last sample: it stays in the box
    assert traj.box.contains(traj.position[-1] + traj.velocity[-1] * traj.dt)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ten_minutes_cover_the_box(seed: int):
    traj = generate_trajectory(600.0, dt=0.02, box=Box(1.0), seed=seed)
    counts, _, _ = np.histogram2d(*traj.position.T, bins=20, range=[[0, 1], [0, 1]])
    assert np.mean(counts > 0) >= 0.95


def test_speed_statistics(ten_minutes: Trajectory):
    speed = ten_minutes.speed
    assert np.all(speed >= 0)
    # Rayleigh speed of mean 0.16 m/s (slowed near walls): mean and spread near the target
    assert 0.13 < speed.mean() < 0.17
    assert 0.06 < speed.std() < 0.10
    # coherence: the speed one step apart is strongly correlated, 5 s apart nearly independent
    s = speed - speed.mean()
    lag1 = np.dot(s[:-1], s[1:]) / np.dot(s, s)
    lag250 = np.dot(s[:-250], s[250:]) / np.dot(s, s)
    assert lag1 > 0.9
    assert abs(lag250) < 0.15


def test_rotational_velocity_statistics():
    # in a huge box walls never act: the turning rate is the OU process alone
    traj = generate_trajectory(
        300.0, dt=0.01, box=Box(1000.0), seed=5, start=np.array([500.0, 500.0])
    )
    heading = np.unwrap(np.arctan2(traj.velocity[:, 1], traj.velocity[:, 0]))
    omega = np.diff(heading) / traj.dt
    assert abs(omega.std() - 2 * math.pi / 3) < 0.15 * (2 * math.pi / 3)
    assert abs(omega.mean()) < 0.2


def test_walls_are_avoided_for_long_steps():
    # steps longer than the wall distance fall back on reflection; still always inside
    traj = generate_trajectory(200.0, dt=0.5, box=Box(0.5), seed=3, speed_mean=0.4,
                               wall_distance=0.05)
    assert traj.box.contains(traj.position).all()


def test_trajectory_reproducible_and_seeded():
    a = generate_trajectory(10.0, seed=7)
    b = generate_trajectory(10.0, seed=7)
    c = generate_trajectory(10.0, seed=8)
    np.testing.assert_array_equal(a.position, b.position)
    assert not np.allclose(a.position, c.position)
    d = generate_trajectory(10.0, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a.position, d.position)


def test_trajectory_start_and_box():
    traj = generate_trajectory(5.0, dt=0.01, box=Box(2.0), seed=1, start=np.array([1.5, 0.25]))
    np.testing.assert_array_equal(traj.position[0], [1.5, 0.25])
    assert traj.box.size == 2.0
    assert traj.box.contains(traj.position).all()


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"duration": 0.0}, ValueError, "duration"),
        ({"duration": 10.0, "dt": -0.1}, ValueError, "dt"),
        ({"duration": 0.01, "dt": 0.02}, ValueError, "2 steps"),
        ({"duration": 10.0, "speed_mean": 0.0}, ValueError, "speed_mean"),
        ({"duration": 10.0, "rotation_sd": -1.0}, ValueError, "rotation_sd"),
        ({"duration": 10.0, "wall_distance": 0.6}, ValueError, "wall_distance"),
        ({"duration": 10.0, "start": np.array([1.2, 0.5])}, ValueError, "start"),
        ({"duration": 10.0, "start": np.array([0.5])}, ValueError, "start"),
        ({"duration": 10.0, "seed": 1.5}, TypeError, "seed"),
        ({"duration": 10.0, "box": 1.0}, TypeError, "box"),
    ],
)
def test_generate_trajectory_rejects_bad_input(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        generate_trajectory(**kwargs)


# --------------------------------------------------------------------------------------------------
# user positions


def _walk(steps: int = 200) -> np.ndarray:
    t = np.arange(steps) * 0.05
    return np.stack([0.5 + 0.3 * np.cos(t), 0.5 + 0.3 * np.sin(t)], axis=1)


def test_load_positions_from_array_and_files(tmp_path):
    pos = _walk()
    traj = load_positions(pos, dt=0.05)
    np.testing.assert_array_equal(traj.position, pos)
    np.testing.assert_allclose(traj.velocity[:-1] * 0.05, np.diff(pos, axis=0), atol=1e-15)
    np.testing.assert_array_equal(traj.velocity[-1], traj.velocity[-2])
    np.testing.assert_allclose(traj.t, np.arange(200) * 0.05)

    np.save(tmp_path / "pos.npy", pos)
    from_npy = load_positions(tmp_path / "pos.npy", 0.05, Box(1.0))
    np.testing.assert_array_equal(from_npy.position, pos)

    times = 3.0 + np.arange(200) * 0.05
    np.savez(tmp_path / "track.npz", position=pos, t=times)
    from_npz = load_positions(str(tmp_path / "track.npz"))
    assert from_npz.dt == pytest.approx(0.05)
    np.testing.assert_array_equal(from_npz.t, times)


@pytest.mark.parametrize(
    ("positions", "kwargs", "match"),
    [
        (np.zeros((10, 3)), {"dt": 0.1}, r"positions must have shape \(steps, 2\)"),
        (np.zeros(10), {"dt": 0.1}, r"positions must have shape \(steps, 2\)"),
        (np.full((1, 2), 0.5), {"dt": 0.1}, "at least 2 steps"),
        (np.array([[0.5, 0.5], [np.nan, 0.5]]), {"dt": 0.1}, r"finite.*index \[1, 0\]"),
        (np.array([[0.5, 0.5], [0.5, 1.3], [0.2, 0.2]]), {"dt": 0.1},
         r"inside the box.*\[0.5, 1.3\] at index 1"),
        (np.full((3, 2), 0.5), {"dt": 0.0}, "dt"),
        (np.full((3, 2), 0.5), {}, "dt must be given"),
        (np.full((3, 2), 0.5), {"times": np.array([0.0, 0.2, 0.1])}, "strictly increasing"),
        (np.full((3, 2), 0.5), {"times": np.array([0.0, 0.1, 0.3])}, "uniformly spaced"),
        (np.full((3, 2), 0.5), {"times": np.array([0.0, 0.1])}, r"times must have shape \(3,\)"),
        (np.full((3, 2), 0.5), {"dt": 0.2, "times": np.array([0.0, 0.1, 0.2])}, "dt must equal"),
    ],
)
def test_load_positions_rejects_bad_input(positions, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_positions(positions, **kwargs)


def test_load_positions_rejects_unknown_file_type(tmp_path):
    path = tmp_path / "pos.csv"
    path.write_text("0.5,0.5\n")
    with pytest.raises(ValueError, match=r"\.npy or \.npz"):
        load_positions(path, dt=0.1)


# --------------------------------------------------------------------------------------------------
# lattice phases


def test_wave_vectors_hex_and_square():
    k = wave_vectors(0.5, orientation=0.2, lattice="hex")
    norm = 4 * np.pi / (np.sqrt(3) * 0.5)
    np.testing.assert_allclose(np.linalg.norm(k, axis=1), norm)
    angles = np.arctan2(k[:, 1], k[:, 0])
    np.testing.assert_allclose(angles, [0.2, 0.2 + np.pi / 3, 0.2 - np.pi / 3])
    np.testing.assert_allclose(k[2], k[0] - k[1])

    ks = wave_vectors(0.4, orientation=0.1, lattice="square")
    np.testing.assert_allclose(np.linalg.norm(ks, axis=1), 2 * np.pi / 0.4)
    np.testing.assert_allclose(np.arctan2(ks[:, 1], ks[:, 0]), [0.1, 0.1 + np.pi / 2])


@pytest.mark.parametrize("lattice", ["hex", "square"])
def test_phase_velocity_is_the_time_derivative_of_the_phase(lattice, ten_minutes: Trajectory):
    traj = ten_minutes
    psi = position_to_phase(traj.position, 0.5, 0.3, lattice)
    dpsi = phase_velocity(traj.velocity, 0.5, 0.3, lattice) * traj.dt
    np.testing.assert_allclose(np.diff(psi, axis=0), dpsi[:-1], atol=1e-10)


def test_phase_velocity_closed_form():
    v = np.array([[0.1, 0.0], [0.0, 0.2]])
    kn = 4 * np.pi / (np.sqrt(3) * 0.5)
    expected = np.array([[0.1 * kn, 0.1 * kn * 0.5], [0.0, 0.2 * kn * np.sqrt(3) / 2]])
    np.testing.assert_allclose(phase_velocity(v, 0.5), expected, atol=1e-12)
    np.testing.assert_allclose(
        phase_velocity(v, 0.5, lattice="square"), 2 * np.pi / 0.5 * v, atol=1e-12
    )


@pytest.mark.parametrize("lattice", ["hex", "square"])
def test_phase_to_position_delta_inverts_the_phase_map(lattice):
    x = np.random.default_rng(0).normal(size=(7, 3, 2))
    psi = position_to_phase(x, 0.37, -0.4, lattice)
    np.testing.assert_allclose(phase_to_position_delta(psi, 0.37, -0.4, lattice), x, atol=1e-12)


@pytest.mark.parametrize("lattice", ["hex", "square"])
def test_phase_track_unwraps_to_the_true_track(lattice, ten_minutes: Trajectory):
    traj = ten_minutes
    wrapped = np.mod(position_to_phase(traj.position, 0.5, 0.1, lattice), 2 * np.pi)
    track = phase_track_to_positions(wrapped, traj.position[0], 0.5, 0.1, lattice)
    np.testing.assert_allclose(track, traj.position, atol=1e-9)


def test_phase_track_batched_and_validated():
    rng = np.random.default_rng(1)
    pos = np.cumsum(rng.normal(scale=0.005, size=(100, 3, 2)), axis=0)
    wrapped = np.angle(np.exp(1j * position_to_phase(pos, 0.5)))
    np.testing.assert_allclose(phase_track_to_positions(wrapped, pos[0], 0.5), pos, atol=1e-10)
    with pytest.raises(ValueError, match="start"):
        phase_track_to_positions(wrapped, np.zeros(2), 0.5)


def test_grid_pattern_peaks_on_the_stated_lattice():
    s, theta = 0.5, 0.25
    # hex: nearest peaks at distance s, angles theta + 30 deg + n * 60 deg, value 3
    for n in range(6):
        ang = theta + np.pi / 6 + n * np.pi / 3
        peak = s * np.array([np.cos(ang), np.sin(ang)])
        assert grid_pattern(peak, s, theta, "hex") == pytest.approx(3.0)
    off_peak = s * np.array([np.cos(theta), np.sin(theta)])
    assert grid_pattern(off_peak, s, theta, "hex") < 0
    # square: peaks at distance s along theta and theta + 90 deg, value 2
    for ang in (theta, theta + np.pi / 2):
        peak = s * np.array([np.cos(ang), np.sin(ang)])
        assert grid_pattern(peak, s, theta, "square") == pytest.approx(2.0)
    # a cell's phase offset moves its peak to where psi equals the offset
    offsets = np.array([[1.0, 2.0], [0.5, -0.3]])
    x = phase_to_position_delta(offsets, s, theta)
    values = grid_pattern(x, s, theta, "hex", offsets)
    np.testing.assert_allclose(np.diag(values), 3.0)


@pytest.mark.parametrize("func", [position_to_phase, phase_velocity, phase_to_position_delta])
def test_phase_functions_validate(func):
    v = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"lattice must be one of \['hex', 'square'\].*'tri'"):
        func(v, 0.5, 0.0, "tri")
    with pytest.raises(ValueError, match="spacing"):
        func(v, 0.0)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 2\)"):
        func(np.zeros((4, 3)), 0.5)


# --------------------------------------------------------------------------------------------------
# plotting


def test_plot_trajectory_builds_a_figure_without_pyplot_state(ten_minutes: Trajectory):
    before = plt.get_fignums()
    fig = plot_trajectory(ten_minutes, decoded=ten_minutes.position + 0.01)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before
    ax = fig.axes[0]
    assert ax.get_xlabel() == "x (m)" and ax.get_ylabel() == "y (m)"
    assert ax.get_aspect() == 1.0
    assert len(ax.lines) >= 2

    fig2 = Figure()
    ax2 = fig2.add_subplot()
    assert plot_trajectory(ten_minutes, ax=ax2) is fig2
    with pytest.raises(ValueError, match="decoded"):
        plot_trajectory(ten_minutes, decoded=np.zeros((3, 2)))


def test_docstring_examples_run():
    import doctest

    import neurodyn.spatial.agent

    result = doctest.testmod(neurodyn.spatial.agent, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
