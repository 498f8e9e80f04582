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


#: the real recording beside the repository (``../shared/data``), or ``$NEURODYN_ADN``
ADN = Path(__import__("os").environ.get(
    "NEURODYN_ADN", Path(__file__).resolve().parents[2] / "shared" / "data" /
    "adn_hd_wake_sws.npz"))


@pytest.fixture(scope="session")
def adn_path():
    """The real ADn recording's path; the test is skipped where it is not."""
    if not ADN.is_file():
        pytest.skip(f"the real recording is not at {ADN}")
    return ADN
