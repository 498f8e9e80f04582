"""Figures a reviewer reads: the energy descent is measured against the manifold's energy (not
a run's own last value, which falls to 0 by construction), small errors get a log axis, and
colour bars carry units."""

import numpy as np
import pytest

import neurodyn as nd
from neurodyn.plotting import manifold_energy, plot_energy


@pytest.fixture(scope="module")
def ring():
    return nd.fit(nd.FitConfig(n=32, steps=2, batch=4), progress=False).network


def test_energy_descent_is_the_gap_to_the_manifold(ring):
    u0 = nd.perturbed_states(ring.manifold, count=3, kind="lesion", strength=0.4, seed=0)
    short = nd.simulate(ring, u0, duration=2.0, dt=0.1)  # not yet back on the ring
    e_star = manifold_energy(ring)
    assert float(short.energy.min()) > e_star
    fig = plot_energy(short, reference=e_star)
    ax = fig.axes[0]
    y = np.array([line.get_ydata() for line in ax.lines[:3]])
    assert ax.get_yscale() == "log"
    # the last point is the run's real distance to E*, well above round-off (the old plot,
    # E(t) - E(t_end), read 1e-16 there for every run)
    assert np.allclose(y[:, -1], short.energy[-1].numpy() - e_star)
    assert y[:, -1].min() > 1e-6
    plain = plot_energy(short)  # without the manifold's energy: E(t) itself, linear
    assert plain.axes[0].get_yscale() == "linear"
    assert np.allclose(plain.axes[0].lines[0].get_ydata(), short.energy[:, 0].numpy())
