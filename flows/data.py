"""Datasets: seeded 2-D toy distributions, Gaussian mixtures, 8x8 digits and user arrays.

Every generator takes the number of points and a seed (or ``torch.Generator``) and returns a
``(n, d)`` float32 tensor of independent, identically distributed draws: a data set is a
distribution, and two calls with different seeds are two independent samples of it (the noise
floor of a distance is measured between such samples, :mod:`flows.evaluation.floors`). Named
datasets are looked up in :data:`DATASETS`; anything else is treated as a path to a ``.npy``
or ``.csv`` file holding samples by rows.

The 8x8 digits shipped in ``flows/data/digits.npz`` are scikit-learn's ``load_digits`` copy of
the UCI "Optical Recognition of Handwritten Digits" data set (Alpaydin and Kaynak, 1998;
CC BY 4.0): 1,797 images of 64 pixels with values 0..16, stored as ``images`` (uint8, (1797, 64))
and ``labels`` (uint8, (1797,)). ``flows`` scales them to [-1, 1] by ``x / 8 - 1``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .errors import FlowsError, as_generator, check_finite, check_positive_int

Sampler = Callable[[int, torch.Generator], torch.Tensor]

_DIGITS_FILE = Path(__file__).parent / "data" / "digits.npz"


def _uniform(n: int, g: torch.Generator) -> torch.Tensor:
    return torch.rand(n, generator=g, dtype=torch.float64)


def _normal(shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def moons(n: int, seed: int | torch.Generator, noise: float = 0.05) -> torch.Tensor:
    """Two interleaving half circles (scikit-learn's ``make_moons`` shape), drawn i.i.d.

    Each point picks a moon with probability 1/2 and an arc position s ~ U(0, pi); with
    m = (cos s, sin s) on the outer moon and m = (1 - cos s, 1/2 - sin s) on the inner one,
    x = 2 (m + noise * eps) - 1, eps ~ N(0, I). (``make_moons`` places points at evenly spaced
    arc positions; two such "samples" share positions, so their W2 is far below that of two
    independent samples and would flatter every model scored against it.)

    Parameters
    ----------
    n : int
        Number of points.
    seed : int or torch.Generator
        Randomness for the moon, the arc position and the noise.
    noise : float
        Standard deviation of the Gaussian noise before scaling (so 2 * noise after).

    Returns
    -------
    torch.Tensor, shape (n, 2)

    Examples
    --------
    >>> moons(5, seed=0).shape
    torch.Size([5, 2])
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    inner = torch.rand(n, generator=g) < 0.5
    s = math.pi * _uniform(n, g)
    outer = torch.stack([torch.cos(s), torch.sin(s)], 1)
    inner_pts = torch.stack([1 - torch.cos(s), 0.5 - torch.sin(s)], 1)
    x = torch.where(inner[:, None], inner_pts, outer)
    x = x + noise * _normal((n, 2), g)
    return (2 * x - 1).float()


def eight_gaussians(n: int, seed: int | torch.Generator, radius: float = 2.0,
                    std: float = 0.15) -> torch.Tensor:
    """Mixture of 8 equal Gaussians N(c_k, std^2 I), c_k = radius (cos 2 pi k/8, sin 2 pi k/8).

    Returns a tensor of shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    k = torch.randint(0, 8, (n,), generator=g).double()
    angle = 2 * math.pi * k / 8
    centers = radius * torch.stack([torch.cos(angle), torch.sin(angle)], 1)
    return (centers + std * _normal((n, 2), g)).float()


def circles(n: int, seed: int | torch.Generator, factor: float = 0.5,
            noise: float = 0.05, scale: float = 2.0) -> torch.Tensor:
    """Two concentric circles of radii ``scale`` and ``factor * scale``, drawn i.i.d.

    Each point picks a circle with probability 1/2 and a uniform angle; noise is
    N(0, (scale * noise)^2 I). Returns shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    r = torch.where(torch.rand(n, generator=g) < 0.5, 1.0, factor).double()
    a = 2 * math.pi * _uniform(n, g)
    x = torch.stack([r * torch.cos(a), r * torch.sin(a)], 1) + noise * _normal((n, 2), g)
    return (scale * x).float()


def checkerboard(n: int, seed: int | torch.Generator, squares: int = 4,
                 half_width: float = 2.0) -> torch.Tensor:
    """Uniform on the dark squares of a ``squares x squares`` board covering [-w, w]^2.

    Returns shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    side = 2 * half_width / squares
    col = torch.randint(0, squares, (n,), generator=g)
    row = torch.randint(0, squares // 2, (n,), generator=g) * 2 + (col % 2)
    u = _uniform(2 * n, g).reshape(n, 2)
    x = torch.stack([col.double() + u[:, 0], row.double() + u[:, 1]], 1) * side - half_width
    return x.float()


def pinwheel(n: int, seed: int | torch.Generator, arms: int = 5, radial_std: float = 0.3,
             tangential_std: float = 0.1, rate: float = 0.25, scale: float = 2.0) -> torch.Tensor:
    """Pinwheel: arm k is N((1, 0), diag(radial_std^2, tangential_std^2)) rotated by
    2 pi k / arms + rate * exp(r), r the radial coordinate. Returns shape (n, 2)."""
    n = check_positive_int("n", n)
    g = as_generator(seed)
    arm = torch.randint(0, arms, (n,), generator=g).double()
    e = _normal((n, 2), g) * torch.tensor([radial_std, tangential_std], dtype=torch.float64)
    e[:, 0] += 1.0
    ang = 2 * math.pi * arm / arms + rate * torch.exp(e[:, 0])
    c, s = torch.cos(ang), torch.sin(ang)
    x = torch.stack([c * e[:, 0] - s * e[:, 1], s * e[:, 0] + c * e[:, 1]], 1)
    return (scale * x).float()


def swiss_roll(n: int, seed: int | torch.Generator, noise: float = 0.5) -> torch.Tensor:
    """2-D Swiss roll: s = 1.5 pi (1 + 2u), x = (s cos s, s sin s) + N(0, noise^2 I), divided by 5.

    Returns shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    s = 1.5 * math.pi * (1 + 2 * _uniform(n, g))
    x = torch.stack([s * torch.cos(s), s * torch.sin(s)], 1) + noise * _normal((n, 2), g)
    return (x / 5).float()


def spirals(n: int, seed: int | torch.Generator, noise: float = 0.3,
            turns: float = 1.5) -> torch.Tensor:
    """Two interleaved Archimedean spirals r = s, angle s, s = sqrt(u) * 2 pi turns, the second
    rotated by pi (each point picks one with probability 1/2), plus N(0, noise^2 I), divided
    by 3; drawn i.i.d. Returns shape (n, 2)."""
    n = check_positive_int("n", n)
    g = as_generator(seed)
    s = torch.sqrt(_uniform(n, g)) * 2 * math.pi * turns
    sign = torch.where(torch.rand(n, generator=g) < 0.5, 1.0, -1.0).double()
    x = sign[:, None] * torch.stack([-s * torch.cos(s), s * torch.sin(s)], 1)
    return ((x + noise * _normal((n, 2), g)) / 3).float()


def standard_normal(n: int, seed: int | torch.Generator, dim: int = 2) -> torch.Tensor:
    """Samples of N(0, I_dim), shape (n, dim)."""
    n = check_positive_int("n", n)
    return torch.randn(n, check_positive_int("dim", dim), generator=as_generator(seed))


def gaussian_mixture_means(dim: int, components: int = 8, radius: float = 3.0) -> torch.Tensor:
    """Fixed means of the ``gmm<dim>`` datasets: ``components`` points of norm ``radius``.

    The means depend only on (dim, components) so that the dataset is the same for every seed.
    Returns shape (components, dim).
    """
    g = torch.Generator().manual_seed(1000 * dim + components)
    m = torch.randn(components, dim, generator=g, dtype=torch.float64)
    return radius * m / m.norm(dim=1, keepdim=True)


def gaussian_mixture(n: int, seed: int | torch.Generator, dim: int = 2, components: int = 8,
                     radius: float = 3.0, std: float = 0.5) -> torch.Tensor:
    """Equal-weight mixture of N(mu_k, std^2 I_dim), mu_k from :func:`gaussian_mixture_means`.

    Returns shape (n, dim).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    means = gaussian_mixture_means(check_positive_int("dim", dim), components, radius)
    k = torch.randint(0, components, (n,), generator=g)
    return (means[k] + std * _normal((n, dim), g)).float()


def load_digits() -> tuple[torch.Tensor, torch.Tensor]:
    """The 1,797 8x8 digits scaled to [-1, 1] (x / 8 - 1), shape (1797, 64), and labels (1797,)."""
    with np.load(_DIGITS_FILE) as f:
        images = torch.from_numpy(f["images"].astype(np.float32)) / 8.0 - 1.0
        labels = torch.from_numpy(f["labels"].astype(np.int64))
    return images, labels


def _read_rows(p: Path) -> np.ndarray:
    if p.suffix.lower() == ".npy":
        return np.load(p, allow_pickle=False)
    with warnings.catch_warnings():  # an empty file is reported below, not warned about
        warnings.simplefilter("ignore")
        try:
            return np.loadtxt(p, delimiter=",", ndmin=2)
        except ValueError:
            return np.loadtxt(p, delimiter=",", ndmin=2, skiprows=1)


def load_array(path: str | Path, name: str = "data") -> torch.Tensor:
    """Load samples by rows from a ``.npy`` or ``.csv`` file, shape (n, d), float32.

    A CSV may have one header line. Raises :class:`FlowsError` if the file is missing, is not
    2-D, has no rows or holds NaN or infinite values.
    """
    p = Path(path)
    if not p.is_file():
        raise FlowsError(f"{name}={str(path)!r} is neither a known dataset ({', '.join(DATASETS)})"
                         " nor an existing .npy/.csv file")
    suffix = p.suffix.lower()
    if suffix in (".npy", ".csv"):
        try:
            arr = _read_rows(p)
        except (ValueError, OSError, EOFError, MemoryError) as err:
            raise FlowsError(f"{name}={str(path)!r} is not a readable numeric {suffix} file "
                             f"({' '.join(str(err).split())[:120]})") from None
        if arr.dtype.kind not in "biuf":
            raise FlowsError(f"{name}={str(path)!r} holds {arr.dtype} values; only real "
                             "numbers are allowed")
    else:
        raise FlowsError(f"{name}={str(path)!r} has suffix {suffix!r}; allowed are .npy and .csv")
    if arr.ndim != 2:
        raise FlowsError(f"{name}={str(path)!r} has shape {arr.shape}; a 2-D array "
                         "(samples by rows) is required")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise FlowsError(f"{name}={str(path)!r} has shape {arr.shape}; at least one row and "
                         "one column are required")
    x = torch.as_tensor(np.asarray(arr, dtype=np.float32))
    return check_finite(f"{name}={str(path)!r}", x)


@dataclass(frozen=True)
class Dataset:
    """A distribution to learn or to start from.

    Either a generator (``sampler``, infinitely many fresh points) or a finite ``pool`` of rows.

    Attributes
    ----------
    name : str
        Dataset name or file path.
    dim : int
        Dimension d of a sample.
    sampler : callable or None
        ``sampler(n, generator) -> (n, d)`` tensor for generated datasets.
    pool : torch.Tensor or None, shape (N, d)
        All rows of a finite dataset.
    """

    name: str
    dim: int
    sampler: Sampler | None = None
    pool: torch.Tensor | None = None

    @property
    def finite(self) -> bool:
        """True for a finite pool of rows (digits, user arrays)."""
        return self.pool is not None

    def sample(self, n: int, seed: int | torch.Generator) -> torch.Tensor:
        """Draw n points, shape (n, d): fresh draws, or rows of the pool with replacement."""
        n = check_positive_int("n", n)
        g = as_generator(seed)
        if self.pool is not None:
            return self.pool[torch.randint(0, self.pool.shape[0], (n,), generator=g)]
        return self.sampler(n, g)  # type: ignore[misc]


def _gmm_sampler(dim: int) -> Sampler:
    return lambda n, g: gaussian_mixture(n, g, dim=dim)


DATASETS: dict[str, Sampler | None] = {
    "moons": moons,
    "8gaussians": eight_gaussians,
    "circles": circles,
    "checkerboard": checkerboard,
    "pinwheel": pinwheel,
    "swissroll": swiss_roll,
    "spirals": spirals,
    "normal": standard_normal,
    "gmm<d>": None,
    "digits": None,
}
"""Names accepted by :func:`load_dataset`; ``gmm<d>`` means e.g. ``gmm16`` (16-D mixture)."""


def load_dataset(spec: str, name: str = "data") -> Dataset:
    """Resolve a dataset name (see :data:`DATASETS`) or a ``.npy``/``.csv`` path.

    Raises :class:`FlowsError` naming the parameter and the valid names for an unknown name.
    """
    if not isinstance(spec, str) or not spec:
        raise FlowsError(f"{name}={spec!r} is not allowed; give a dataset name or a file path")
    if spec == "digits":
        return Dataset("digits", 64, pool=load_digits()[0])
    if spec.startswith("gmm") and spec[3:].isdigit() and int(spec[3:]) >= 1:
        d = int(spec[3:])
        return Dataset(spec, d, sampler=_gmm_sampler(d))
    if spec in DATASETS and DATASETS[spec] is not None:
        return Dataset(spec, 2, sampler=DATASETS[spec])
    if spec.lower().endswith((".npy", ".csv")) or Path(spec).exists():
        x = load_array(spec, name=name)
        return Dataset(str(spec), x.shape[1], pool=x)
    raise FlowsError(f"{name}={spec!r} is not a known dataset; choose one of "
                     f"{', '.join(DATASETS)} or give a .npy/.csv file")


def source_for(spec: str | None, dim: int, name: str = "source") -> Dataset:
    """The source distribution: N(0, I_dim) for ``None``/``"normal"``, else a dataset of dim d.

    Raises :class:`FlowsError` if the source dimension differs from the target's.
    """
    if spec is None or spec == "normal":
        return Dataset("normal", dim, sampler=lambda n, g: standard_normal(n, g, dim=dim))
    ds = load_dataset(spec, name=name)
    if ds.dim != dim:
        raise FlowsError(f"{name}={spec!r} has dimension {ds.dim} but the data have dimension "
                         f"{dim}; source and target must have the same dimension")
    return ds


@dataclass(frozen=True)
class Splits:
    """Training points, held-out points and an independent floor sample of the same size.

    ``floor`` is a second sample of the true distribution, independent of ``heldout``, with
    ``floor.shape == heldout.shape``; metric(heldout, floor) is the metric's noise floor.
    """

    train: torch.Tensor
    heldout: torch.Tensor
    floor: torch.Tensor


def make_splits(ds: Dataset, n_train: int, n_eval: int, seed: int) -> Splits:
    """Split a dataset into train / held-out / floor samples.

    Generated datasets: three independent draws of sizes (n_train, n_eval, n_eval).
    Finite datasets: a seeded permutation; 20% (at most ``n_eval`` rows) are held out, the rest
    trains; the floor sample is a random subset of the training rows of the held-out size (both
    are independent samples of the same distribution). ``n_train`` caps the training rows.
    """
    n_train = check_positive_int("n_train", n_train)
    n_eval = check_positive_int("n_eval", n_eval)
    g = as_generator(seed)
    if ds.pool is None:
        return Splits(ds.sample(n_train, g), ds.sample(n_eval, g), ds.sample(n_eval, g))
    n = ds.pool.shape[0]
    n_held = min(n_eval, max(1, n // 5))
    if n - n_held < 1:
        raise FlowsError(f"data={ds.name!r} has {n} rows; at least 2 are needed for a split")
    perm = torch.randperm(n, generator=g)
    held, train = ds.pool[perm[:n_held]], ds.pool[perm[n_held:]][:n_train]
    floor = train[torch.randperm(train.shape[0], generator=g)[: min(n_held, train.shape[0])]]
    return Splits(train, held[: floor.shape[0]], floor)
