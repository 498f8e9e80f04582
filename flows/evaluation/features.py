"""A classifier-feature Frechet distance for image data (the FID recipe with a small
classifier the library trains itself).

For images of a known data set, identified by their dimension (64: ``digits``, 196:
``mnist14``, 784: ``mnist``), a two-hidden-layer ReLU classifier d -> 256 -> 128 -> 10 is
trained on that data set's training split (MNIST: the 50,000 training images; digits: a
seeded 80% of the rows) with Adam (lr 1e-3, batch 256, :data:`EPOCHS` epochs), every random
choice drawn from ``seed``. Its weights and its accuracy on held-out images (MNIST: the
validation split; digits: the other 20%) are cached in :func:`flows.mnist.cache_dir` as
``classifier-<data>-seed<seed>.pt`` and reused.

The features of an image are the 128 activations of the second hidden layer. Between two
sets of images with feature means mu_1, mu_2 and covariances S_1, S_2,

    FD = ||mu_1 - mu_2||^2 + tr S_1 + tr S_2 - 2 tr (S_1^{1/2} S_2 S_1^{1/2})^{1/2},

the 2-Wasserstein distance squared between the Gaussians of those moments. It is biased
upward at finite sizes (estimated covariances), so, like every distance here, it means
something only beside its noise floor: the FD between two real samples of the same sizes.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from torch import nn

from _runkit.files import atomic_torch_save, safe_torch_load

from ..data import load_digits, load_mnist_pool
from ..errors import FlowsError, check_seed, derive_seed
from ..mnist import cache_dir, load_mnist

#: image dimension -> the data set whose classifier gives the features
FEATURE_DATA = {64: "digits", 196: "mnist14", 784: "mnist"}
EPOCHS = 5
HIDDEN = (256, 128)
CLASSES = 10
FORMAT = "flows-classifier-1"


class Classifier(nn.Module):
    """d -> 256 -> 128 -> 10 ReLU classifier; :meth:`features` are the 128 activations.

    Parameters
    ----------
    dim : int
        Image dimension d.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, HIDDEN[0]), nn.ReLU(),
                                  nn.Linear(HIDDEN[0], HIDDEN[1]), nn.ReLU())
        self.head = nn.Linear(HIDDEN[1], CLASSES)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Second-hidden-layer activations, (n, d) -> (n, 128)."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class logits, (n, d) -> (n, 10)."""
        return self.head(self.body(x))


def _labelled(data: str, seed: int) -> tuple[torch.Tensor, ...]:
    """(train x, train y, held-out x, held-out y) of the classifier of ``data``."""
    if data == "digits":
        x, y = load_digits()
        perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(
            derive_seed(seed, "classifier-split")))
        cut = int(0.8 * x.shape[0])
        return x[perm[:cut]], y[perm[:cut]], x[perm[cut:]], y[perm[cut:]]
    x, y = load_mnist_pool(data)
    xv, yv = load_mnist("valid", 14 if data == "mnist14" else 28, what=f"data={data!r}")
    return x, y, torch.from_numpy(xv), torch.from_numpy(yv)


def train_classifier(data: str, seed: int = 0) -> tuple[Classifier, float]:
    """Train the feature classifier of ``data`` (``digits``, ``mnist14`` or ``mnist``).

    Returns
    -------
    (Classifier, float)
        The trained model (eval mode) and its accuracy on the held-out images.
    """
    if data not in FEATURE_DATA.values():
        raise FlowsError(f"data={data!r} has no feature classifier; use one of "
                         f"{', '.join(FEATURE_DATA.values())}")
    x, y, xv, yv = _labelled(data, check_seed("seed", seed))
    g = torch.Generator().manual_seed(derive_seed(seed, f"classifier-{data}"))
    model = Classifier(x.shape[1])
    with torch.no_grad():  # torch's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), seeded
        for lin in (m for m in model.modules() if isinstance(m, nn.Linear)):
            for p in (lin.weight, lin.bias):
                p.copy_((2 * torch.rand(p.shape, generator=g) - 1) / lin.in_features**0.5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(EPOCHS):
        perm = torch.randperm(x.shape[0], generator=g)
        for i in range(0, x.shape[0], 256):
            idx = perm[i:i + 256]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        acc = float((model(xv).argmax(1) == yv).double().mean())
    return model, acc


@functools.lru_cache(maxsize=6)
def feature_classifier(data: str, seed: int = 0) -> tuple[Classifier, float]:
    """The cached feature classifier of ``data`` and its held-out accuracy: read from
    ``classifier-<data>-seed<seed>.pt`` in :func:`flows.mnist.cache_dir`, else trained
    (:func:`train_classifier`) and written there."""
    path = cache_dir() / f"classifier-{data}-seed{check_seed('seed', seed)}.pt"
    if path.is_file():
        try:  # checked as every file the library wrote: its sha256, no code run
            blob = safe_torch_load(path, what="feature classifier cache")
            if blob.get("format") == FORMAT:
                model = Classifier(blob["dim"])
                model.load_state_dict(blob["weights"])
                return model.eval(), float(blob["accuracy"])
        except (OSError, RuntimeError, KeyError, AttributeError, ValueError):
            pass  # a damaged or older cache (BadInput is a ValueError) is trained again
    model, acc = train_classifier(data, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_torch_save({"format": FORMAT, "dim": model.body[0].in_features, "accuracy": acc,
                       "weights": model.state_dict()}, path)
    return model, acc


def image_features(x: torch.Tensor | np.ndarray, seed: int = 0) -> np.ndarray:
    """Classifier features of images x (n, d), d in :data:`FEATURE_DATA`; returns (n, 128)
    float64."""
    t = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    if t.ndim != 2 or t.shape[1] not in FEATURE_DATA:
        raise FlowsError(f"the classifier FD needs images of dimension "
                         f"{', '.join(map(str, FEATURE_DATA))} (digits, mnist14, mnist); got "
                         f"shape {tuple(t.shape)}")
    model, _ = feature_classifier(FEATURE_DATA[t.shape[1]], seed)
    with torch.no_grad():
        return model.features(t).double().numpy()


def _sqrtm_psd(s: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh(s)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


def frechet_distance(f1: np.ndarray, f2: np.ndarray) -> float:
    """FD between the Gaussians with the means and covariances of two feature sets.

    Parameters
    ----------
    f1, f2 : numpy.ndarray, shapes (n, k) and (n', k), n, n' >= 2

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.standard_normal((20000, 2))
    >>> abs(frechet_distance(a, 2 * a + 1) - 4) < 0.05  # ||(1, 1)||^2 + 2 (2 - 1)^2
    True
    """
    if f1.ndim != 2 or f2.ndim != 2 or f1.shape[1] != f2.shape[1] or min(len(f1), len(f2)) < 2:
        raise FlowsError(f"feature sets of shapes {f1.shape} and {f2.shape}; (n, k) and (n', k) "
                         "with n, n' >= 2 are required")
    mu = f1.mean(0) - f2.mean(0)
    s1, s2 = np.cov(f1, rowvar=False), np.cov(f2, rowvar=False)
    h = _sqrtm_psd(s1)
    cross = np.sqrt(np.clip(np.linalg.eigvalsh(h @ s2 @ h), 0, None)).sum()
    return float(max(mu @ mu + np.trace(s1) + np.trace(s2) - 2 * cross, 0.0))


def classifier_fd(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray,
                  seed: int = 0) -> float:
    """Classifier-feature Frechet distance between image sets x (n, d) and y (n', d).

    The classifier is that of the data set of dimension d (:data:`FEATURE_DATA`), trained
    once with ``seed`` and cached (:func:`feature_classifier`); ``flows eval --metric fd``
    uses seed 0 whatever its ``--seed``, so that every evaluation measures with the same
    classifier.

    Returns
    -------
    float
    """
    return frechet_distance(image_features(x, seed), image_features(y, seed))
