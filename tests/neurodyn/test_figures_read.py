"""Figures a reviewer reads: the energy descent is measured against the manifold's energy (not
a run's own last value, which falls to 0 by construction), small errors get a log axis, and
colour bars carry units."""

import numpy as np
import pytest
import torch

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


def test_activity_is_centred_on_the_bump_and_marks_the_seam(ring):
    """The bump of run 2 (of 3), parked near the seam, is drawn in the middle row, the seam
    where neuron 0 is drawn, and the title names the run. Control: the uncentred rates put
    the bump's peak at an edge."""
    from neurodyn.plotting import plot_activity

    psi = torch.tensor([[1.0], [3.0], [6.1]], dtype=torch.float64)
    u0 = ring.manifold.u_star(psi)
    run = nd.simulate(ring, u0, duration=1.0, dt=0.1)
    fig = plot_activity(run, run=2)
    ax = fig.axes[0]
    rows = ax.collections[0].get_array().reshape(32, -1)  # (neurons, times), drawn order
    assert int(np.argmax(rows[:, -1])) in (15, 16, 17)  # the middle
    assert int(np.argmax(run.r[-1, 2].numpy())) in (0, 1, 30, 31)  # the control: at an edge
    drawn = np.linspace(-np.pi, np.pi, 33)[:-1]  # the rows' angles relative to the bump
    neuron0 = [j for j in range(32) if np.allclose(rows[j], run.r[:, 2, 0].numpy())]
    assert len(neuron0) == 1 and np.isclose(ax.lines[0].get_ydata()[0], drawn[neuron0[0]])
    assert "run 2 of 3" in ax.get_title()


def test_fit_loss_names_its_steps_and_shows_what_fell():
    from neurodyn.plotting import plot_loss

    fit = nd.fit(nd.FitConfig(n=32, steps=3, batch=4), progress=False)
    ax = plot_loss(fit.history, family="seal", unfitted=fit.unfitted).axes[0]
    assert ax.get_xlabel() == "sampled batches in the least-squares solve"
    assert ax.get_title().startswith("fit of the seal energy")
    solid = {ln.get_label(): ln.get_ydata() for ln in ax.lines if ln.get_linestyle() == "-"}
    dashed = {ln.get_label(): ln.get_ydata()[0] for ln in ax.lines
              if ln.get_linestyle() == "--"}
    assert set(solid) == {"linear", "field", "energy"} and len(dashed) == 3
    for term, losses in solid.items():  # each term fell from its unfitted level
        assert dashed[f"{term}, unfitted (θ = 0)"] > 1e3 * losses[-1]
    mlp = plot_loss({"field": [1.0, 0.5]}, family="mlp").axes[0]
    assert mlp.get_xlabel().startswith("Adam step")
