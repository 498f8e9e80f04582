"""Shared fixtures: one fitted ring network for the whole session (a few seconds)."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def ring_fit():
    from neurodyn.fitting import FitConfig, fit

    return fit(FitConfig(n=128, seed=0))


@pytest.fixture(scope="session")
def ring_net(ring_fit):
    return ring_fit.network
