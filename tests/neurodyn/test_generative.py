"""Generative models of population activity judged on the attractor (ring)."""

from __future__ import annotations

import pytest
import torch

from neurodyn import FitConfig, fit
from neurodyn.generative import (
    compare_generators,
    generate_riemannian,
    judge_states,
    population_states,
    shuffled_states,
)


@pytest.fixture(scope="module")
def ring():
    net = fit(FitConfig(n=48), progress=False).network
    return net, population_states(net, 600, noise=0.2, runs=20, seed=1)


def test_states_carry_their_coordinate_and_noise(ring):
    net, s = ring
    assert s.rates.shape == (600, 48) and s.phases.shape == (600, 1)
    assert 0 < float(s.distance.median()) < 0.2  # noisy, near the ring
    quiet = population_states(net, 40, noise=0.01, runs=4, seed=1)
    assert float(quiet.distance.median()) < float(s.distance.median()) / 5


def test_riemannian_states_keep_the_data_noise_and_the_ring(ring):
    net, s = ring
    held, train = s.subset(torch.arange(120)), s.subset(torch.arange(120, 600))
    gen = generate_riemannian(net, train, 120, steps=5, train_steps=200, seed=0)
    m = judge_states(net, gen.rates, held, train, maxdim=1)
    assert gen.nfe == 10
    assert 0.7 < m.distance_ratio < 1.5 and m.betti == (1, 1)
    # the control: the same judge on states with the joint structure shuffled away
    shuffled = shuffled_states(train, seed=0)
    c = judge_states(net, shuffled.rates[:120], held, train, maxdim=1)
    assert c.distance_ratio > 3 and c.betti != (1, 1)


@pytest.mark.slow
def test_three_generators_on_the_128_ring():
    net = fit(FitConfig(n=128), progress=False).network
    res = compare_generators(net, population_states(net, 2000, seed=0), held=400, seed=0)
    b, c = res.methods["riemannian"], res.methods["relaxed"]
    for m in (b, c):
        assert m.distance_ratio <= 1.5 and m.betti == (1, 1, 0)
    assert b.w2_ratio <= 1.2
    assert res.energy_rise < 1e-9 and res.control_betti[:2] != (1, 1)


def test_equal_time_table_puts_the_methods_side_by_side(ring):
    from neurodyn.generative import equal_time
    from neurodyn.plotting.generative import method_rows, plot_method_table

    net, s = ring
    small = s.subset(torch.arange(360))
    res = compare_generators(net, small, held=120, steps=5, train_steps=40, seed=0)
    eq = equal_time(net, small, res, held=120, steps=5, train_steps=40, seed=0)
    assert set(eq) == {"ambient", "riemannian"}
    assert all(e["nfe"] == 10 and e["train_steps"] >= 1 for e in eq.values())
    rows = method_rows(res.to_dict(), eq)
    assert [r["budget"] for r in rows] == ["equal NFE"] * 3 + ["equal CPU time"] * 2
    assert rows[2]["network_evaluations"] == 160 and rows[0]["network_evaluations"] == 0
    assert len(plot_method_table(rows).axes[0].tables[0].get_celld()) == 10 * 6


def test_barcodes_figure_shows_the_judges_betti_numbers(ring):
    """The demo's barcode figure draws the homology the judge counts: held-out states are a ring
    ((1, 1) to dimension 1), the shuffled control is not, and each panel's title says so."""
    from neurodyn.generative import state_homology
    from neurodyn.plotting.generative import plot_generated_barcodes

    net, s = ring
    held, train = s.subset(torch.arange(150)), s.subset(torch.arange(150, 600))
    hom = {"held": state_homology(held.rates, maxdim=1, seed=0),
           "control": state_homology(shuffled_states(train, seed=0).rates[:150], 1, seed=0)}
    assert judge_states(net, held.rates, held, train, maxdim=1).betti == (1, 1)
    titles = [ax.get_title() for ax in plot_generated_barcodes(hom, (1, 1)).axes]
    assert titles[0].endswith("Betti (1, 1)")
    assert "Betti (1, 1)" not in titles[1] and titles[1].endswith("not the attractor's")
