"""The classifier-feature Frechet distance: closed form, the cached seeded classifier, and
its power on digits (a dropped class and noise are far above the real-vs-real floor)."""

import numpy as np
import pytest
import torch

from flows import mnist
from flows.data import load_digits
from flows.errors import FlowsError
from flows.evaluation import features
from flows.evaluation.distances import evaluate, metric_fn


def test_frechet_distance_of_gaussians_closed_form():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40_000, 3))
    cov = np.diag([4.0, 1.0, 0.25])
    b = a @ np.sqrt(cov) + np.array([1.0, 0.0, -1.0])
    # ||mu||^2 + sum (sqrt(l_i) - 1)^2 = 2 + 1 + 0 + 0.25
    assert abs(features.frechet_distance(a, b) - 3.25) < 0.05
    assert features.frechet_distance(a, a) < 1e-9
    with pytest.raises(FlowsError, match="feature sets"):
        features.frechet_distance(a[:1], b)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh cache folder for the module's classifiers."""
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(mnist.CACHE_ENV, str(path))
        features.feature_classifier.cache_clear()
        yield path
    features.feature_classifier.cache_clear()


def test_digits_classifier_is_cached_seeded_and_separates(cache):
    tmp_path = cache
    model, acc = features.feature_classifier("digits", 0)
    assert acc > 0.85 and (tmp_path / "classifier-digits-seed0.pt").is_file()
    again, _ = features.train_classifier("digits", 0)  # the same seed trains the same weights
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters(),
                                                  strict=True))
    features.feature_classifier.cache_clear()
    cached, acc2 = features.feature_classifier("digits", 0)
    assert acc2 == acc and torch.equal(cached.head.weight, model.head.weight)

    x, y = load_digits()
    g = torch.Generator().manual_seed(1)
    perm = torch.randperm(x.shape[0], generator=g)
    a, b = x[perm[:400]], x[perm[400:800]]
    fd = metric_fn("fd")
    floor = fd(a, b)
    no_zero = x[perm[400:]][y[perm[400:]] != 0][:400]
    noisy = (b + 0.5 * torch.randn(b.shape, generator=g)).clamp(-1, 1)
    assert fd(a, no_zero) > 2 * floor and fd(a, noisy) > 5 * floor
    with pytest.raises(FlowsError, match="dimension 64, 196, 784"):
        features.classifier_fd(torch.zeros(5, 2), torch.zeros(5, 2))


def test_fd_through_evaluate_has_a_floor(cache):
    from flows.data import load_dataset

    ds = load_dataset("digits")
    res = evaluate(ds.sample(200, 1), ds.sample(200, 2), "fd", dataset=ds, pairs=2)
    assert res.metric == "fd" and res.floor is not None and res.value < 3 * res.floor
