"""Shared fixtures: one fitted ring network for the whole session (a few seconds)."""

import sys
from pathlib import Path

import pytest
import torch

# the helper modules beside this file (user models, hooks, sweep cells) import by their plain names
sys.path.insert(0, str(Path(__file__).resolve().parent))

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def ring_fit():
    from neurodyn.fitting.core import FitConfig, fit

    return fit(FitConfig(n=128, seed=0))


@pytest.fixture(scope="session")
def ring_net(ring_fit):
    return ring_fit.network
