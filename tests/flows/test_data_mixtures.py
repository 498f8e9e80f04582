"""Every named dataset with a closed form carries the mixture of its own generator."""

import pytest
import torch

from flows.data import DATASETS, MIXTURES, Mixture, generated_dataset, load_dataset, source_for
from flows.errors import FlowsError
from flows.theory.excess import excess_risk, target_mixture

WITH_FORM = [("gmm3" if k == "gmm<d>" else k) for k in MIXTURES]


def _draw(mix: Mixture, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    k = torch.multinomial(mix.weights, n, replacement=True, generator=g)
    noise = torch.randn(n, mix.means.shape[1], generator=g, dtype=torch.float64)
    return mix.means[k] + mix.stds[k, None] * noise


@pytest.mark.parametrize("name", WITH_FORM)
def test_mixture_has_the_moments_of_the_generator(name):
    ds = load_dataset(name)
    mix = ds.mixture()
    assert torch.allclose(mix.weights.sum(), torch.ones((), dtype=torch.float64))
    x, y = ds.sample(40_000, 1).double(), _draw(mix, 40_000, 2)
    scale = float(x.var(0).sum().sqrt())
    assert (x.mean(0) - y.mean(0)).norm() < 0.03 * scale
    assert (x.T.cov() - y.T.cov()).norm() < 0.05 * scale**2


def test_mixture_only_where_registered():
    for name, sampler in DATASETS.items():
        if name == "mnist14-gmm":  # sampled from its own fitted mixture (the MNIST cache)
            continue
        ds = generated_dataset(name)
        assert (ds is not None) == (sampler is not None)
        if ds is not None:
            assert (ds.mixture() is not None) == (name in MIXTURES)
    assert generated_dataset("gmm0") is None and generated_dataset("x.npy") is None
    assert target_mixture("digits") is None and load_dataset("digits").mixture() is None


def test_mixture_follows_dimension_and_points():
    assert source_for(None, 5).mixture().means.shape == (1, 5)
    assert load_dataset("gmm7").mixture().means.shape == (8, 7)
    curve = load_dataset("spirals").mixture(101)
    assert curve.means.shape == (100, 2) and not curve.exact


def test_excess_risk_names_the_datasets_with_a_form():
    with pytest.raises(FlowsError, match="normal, 8gaussians, gmm<d>, moons, circles, swissroll"):
        excess_risk(lambda x, t: x, load_dataset("checkerboard"), 10)
