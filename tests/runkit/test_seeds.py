"""Seeds: one check and one derivation for both packages, 63 bits wide, old streams kept."""

import random
import zlib

import numpy as np
import pytest

from _runkit import BadInput
from _runkit.seeds import SEED_MAX, check_seed, child_seeds, derive_seed, seed_sequence
from _runkit.sweep import cell_seed

REFUSED = [True, False, 1.0, 2.5, "3", None, -1, 2**63, 2**64, np.float64(1.0)]


def _old_derive_seed(seed: int, tag: str) -> int:
    """The derivation used before seeds were 63 bits wide (it masked the seed to 32 bits)."""
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, zlib.crc32(tag.encode())])
    words = state.generate_state(2, dtype=np.uint32)
    return int(words[0]) | (int(words[1] & 0x7FFFFFFF) << 32)


def _old_child_seeds(seed: int, count: int) -> list[int]:
    return [int(c.generate_state(1, dtype=np.uint32)[0])
            for c in np.random.SeedSequence(seed).spawn(count)]


def test_seeds_below_2_32_keep_their_streams():
    rng = random.Random(0)
    seeds = [0, 1, 7, 2**31, 2**32 - 1] + [rng.randrange(2**32) for _ in range(50)]
    for s in seeds:
        for tag in ("init", "objective", "splits", "ot-warm-start-0"):
            assert derive_seed(s, tag) == _old_derive_seed(s, tag)
        assert child_seeds(s, 4) == _old_child_seeds(s, 4)
    assert derive_seed(0, "init") == 5356707271184172020
    assert child_seeds(0, 2) == [3757552657, 673228719]


@pytest.mark.parametrize("high", [2**32, 2**40, 2**62, SEED_MAX - 2**32 + 1])
def test_seeds_that_differ_above_32_bits_give_different_streams(high):
    for low in (0, 1, 12345):
        assert derive_seed(low, "init") != derive_seed(low + high, "init")
        assert child_seeds(low, 3) != child_seeds(low + high, 3)
        assert cell_seed(low, {"n": 1}) != cell_seed(low + high, {"n": 1})
        a = seed_sequence(low).generate_state(4)
        assert not np.array_equal(a, seed_sequence(low + high).generate_state(4))


def test_same_seed_same_stream_and_range():
    for s in (0, 2**32, SEED_MAX):
        assert derive_seed(s, "x") == derive_seed(np.int64(s) if s < 2**63 else s, "x")
        assert 0 <= derive_seed(s, "x") <= SEED_MAX
        assert child_seeds(s, 3) == child_seeds(s, 3)
    assert child_seeds(5, 0) == []


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_bad_seeds_are_refused_naming_the_parameter(bad):
    with pytest.raises(BadInput, match=r"^base_seed="):
        check_seed("base_seed", bad)
    with pytest.raises(BadInput, match=r"^seed="):
        derive_seed(bad, "init")
    with pytest.raises(BadInput, match=r"^seed="):
        child_seeds(bad, 2)
    with pytest.raises(BadInput, match=r"^seed="):
        cell_seed(bad, {"n": 1})


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_configs_and_generators_refuse_bad_seeds(bad):
    from flows.errors import as_generator
    from flows.training.config import TrainConfig
    from neurodyn.fitting.config import FitConfig

    with pytest.raises(BadInput, match=r"^seed="):
        TrainConfig(seed=bad)
    with pytest.raises(BadInput, match=r"^seed="):
        FitConfig(seed=bad)
    with pytest.raises(BadInput, match=r"^gen="):
        as_generator(bad, name="gen")


def test_configs_take_seeds_above_2_32():
    from flows.errors import as_generator
    from flows.training.config import TrainConfig
    from neurodyn.fitting.config import FitConfig

    assert TrainConfig(seed=2**32).seed == 2**32
    assert FitConfig(seed=SEED_MAX).seed == SEED_MAX
    assert as_generator(SEED_MAX).initial_seed() == SEED_MAX


def test_training_runs_of_seeds_0_and_2_32_differ_and_repeat():
    import torch

    from flows.training.config import TrainConfig
    from flows.training.loop import train

    def weights(seed):
        cfg = TrainConfig(data="moons", steps=3, width=16, batch=32, n_eval=64, seed=seed)
        return torch.cat([p.detach().flatten() for p in train(cfg).field.parameters()])

    first = weights(0)
    assert torch.equal(first, weights(0))
    assert not torch.equal(first, weights(2**32))


@pytest.mark.parametrize("bad", [True, 1.5, -1, 2**64], ids=repr)
def test_neurodyn_entry_points_refuse_bad_seeds(bad, ring_net):
    from neurodyn.dynamics.heterogeneity import Heterogeneity
    from neurodyn.dynamics.perturbations import perturbed_states
    from neurodyn.dynamics.simulation import simulate

    u0 = perturbed_states(ring_net.manifold, count=1, kind="noise", strength=0.1, seed=0)
    with pytest.raises(BadInput, match=r"^seed="):
        perturbed_states(ring_net.manifold, count=1, kind="noise", strength=0.1, seed=bad)
    with pytest.raises(BadInput, match=r"^seed="):
        simulate(ring_net, u0, 1.0, 0.1, noise=0.1, seed=bad)
    with pytest.raises(BadInput, match=r"^seed="):
        Heterogeneity(gain_sd=0.1, threshold_sd=0.1, weight_sd=0.1, seed=bad)
