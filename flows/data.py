"""Datasets: seeded 2-D toy distributions, Gaussian mixtures, 8x8 digits, MNIST, user arrays.

Every generator takes the number of points and a seed (or ``torch.Generator``) and returns a
``(n, d)`` float32 tensor of independent, identically distributed draws: a data set is a
distribution, and two calls with different seeds are two independent samples of it (the noise
floor of a distance is measured between such samples, :mod:`flows.evaluation.floors`). Named
datasets are looked up in :data:`DATASETS`; anything else is treated as a path to a ``.npy``
or ``.csv`` file holding samples by rows.

A named dataset with a closed form (:data:`MIXTURES`) carries it as a Gaussian mixture
sum_k pi_k N(mu_k, s_k^2 I) (:meth:`Dataset.mixture`): exactly for ``normal``, ``8gaussians`` and
``gmm<d>``; for ``moons``, ``circles``, ``swissroll`` and ``spirals`` (a curve plus isotropic
Gaussian noise) the noise Gaussians centred at ``points`` curve points at equal quantiles of the
curve parameter (spacing far below the noise scale). Each closed form stands beside its generator
and shares its curve; :mod:`flows.theory.excess` reads it from the dataset.

The 8x8 digits shipped in ``flows/data/digits.npz`` are scikit-learn's ``load_digits`` copy of
the UCI "Optical Recognition of Handwritten Digits" data set (Alpaydin and Kaynak, 1998;
CC BY 4.0): 1,797 images of 64 pixels with values 0..16, stored as ``images`` (uint8, (1797, 64))
and ``labels`` (uint8, (1797,)). ``flows`` scales them to [-1, 1] by ``x / 8 - 1``.

MNIST (:mod:`flows.mnist`, cached at set-up by ``make mnist``): ``mnist`` (28 x 28, 784-D) and
``mnist14`` (2 x 2 mean pooled, 196-D) are the 50,000 training images scaled to [-1, 1);
``mnist14-gmm`` is the isotropic Gaussian mixture fitted to the 14 x 14 images (10 components
per class), a generated data set with an exact closed form, so that the excess risk, the
bounds and the risk sweep run in image dimension. Without the cache these names are refused
with one line naming ``make mnist``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from _runkit.files import load_npy
from _runkit.results import Result

from .errors import FlowsError, as_generator, check_finite, check_positive_int

Sampler = Callable[[int, torch.Generator], torch.Tensor]
MixtureForm = Callable[[int, int], "Mixture"]
"""``form(dim, points) -> Mixture``: a dataset of dimension ``dim`` as a Gaussian mixture (curves
with ``points`` components)."""

CURVE_POINTS = 1000

_DIGITS_FILE = Path(__file__).parent / "data" / "digits.npz"


def _uniform(n: int, g: torch.Generator) -> torch.Tensor:
    return torch.rand(n, generator=g, dtype=torch.float64)


def _normal(shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=torch.float64)


@dataclass(frozen=True)
class Mixture:
    """sum_k pi_k N(mu_k, s_k^2 I): means (K, d), stds (K,), weights (K,) summing to 1.

    ``exact`` is False where the mixture approximates a curve plus noise.
    """

    means: torch.Tensor
    stds: torch.Tensor
    weights: torch.Tensor
    exact: bool = True


def _isotropic(means: torch.Tensor, std: float, exact: bool = True) -> Mixture:
    """Equal-weight mixture of N(mu_k, std^2 I) at the rows of ``means`` (float64)."""
    k = means.shape[0]
    return Mixture(means.double(), torch.full((k,), float(std), dtype=torch.float64),
                   torch.full((k,), 1.0 / k, dtype=torch.float64), exact=exact)


def _quantiles(points: int) -> torch.Tensor:
    """``points // 2`` equal quantiles in (0, 1) of a curve parameter, float64."""
    half = points // 2
    return (torch.arange(half, dtype=torch.float64) + 0.5) / half


def _moon_arcs(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The outer and inner moon at arc positions s (n,), each (n, 2), before scaling."""
    outer = torch.stack([torch.cos(s), torch.sin(s)], 1)
    return outer, torch.stack([1 - torch.cos(s), 0.5 - torch.sin(s)], 1)


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
    outer, inner_pts = _moon_arcs(math.pi * _uniform(n, g))
    x = torch.where(inner[:, None], inner_pts, outer)
    x = x + noise * _normal((n, 2), g)
    return (2 * x - 1).float()


def _moons_mixture(dim: int, points: int) -> Mixture:
    """:func:`moons` (noise 0.05): N(., 0.1^2 I) at ``points`` arc positions, half per moon."""
    outer, inner = _moon_arcs(math.pi * _quantiles(points))
    return _isotropic(2 * torch.cat([outer, inner]) - 1, 2 * 0.05, exact=False)


def _octagon(k: torch.Tensor, radius: float) -> torch.Tensor:
    """Points radius (cos 2 pi k/8, sin 2 pi k/8) for float64 k (n,), shape (n, 2)."""
    angle = 2 * math.pi * k / 8
    return radius * torch.stack([torch.cos(angle), torch.sin(angle)], 1)


def eight_gaussians(n: int, seed: int | torch.Generator, radius: float = 2.0,
                    std: float = 0.15) -> torch.Tensor:
    """Mixture of 8 equal Gaussians N(c_k, std^2 I), c_k = radius (cos 2 pi k/8, sin 2 pi k/8).

    Returns a tensor of shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    centers = _octagon(torch.randint(0, 8, (n,), generator=g).double(), radius)
    return (centers + std * _normal((n, 2), g)).float()


def _eight_gaussians_mixture(dim: int, points: int) -> Mixture:
    """:func:`eight_gaussians` (radius 2, std 0.15), exactly."""
    return _isotropic(_octagon(torch.arange(8, dtype=torch.float64), 2.0), 0.15)


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


def _circles_mixture(dim: int, points: int) -> Mixture:
    """:func:`circles` (factor 0.5, noise 0.05, scale 2): N(., 0.1^2 I) at ``points`` angles."""
    a = 2 * math.pi * _quantiles(points)
    ring = torch.stack([torch.cos(a), torch.sin(a)], 1)
    return _isotropic(2.0 * torch.cat([ring, 0.5 * ring]), 2.0 * 0.05, exact=False)


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


def _roll(u: torch.Tensor) -> torch.Tensor:
    """The Swiss roll curve (s cos s, s sin s), s = 1.5 pi (1 + 2u), for u (n,); shape (n, 2)."""
    s = 1.5 * math.pi * (1 + 2 * u)
    return torch.stack([s * torch.cos(s), s * torch.sin(s)], 1)


def swiss_roll(n: int, seed: int | torch.Generator, noise: float = 0.5) -> torch.Tensor:
    """2-D Swiss roll: s = 1.5 pi (1 + 2u), x = (s cos s, s sin s) + N(0, noise^2 I), divided by 5.

    Returns shape (n, 2).
    """
    n = check_positive_int("n", n)
    g = as_generator(seed)
    x = _roll(_uniform(n, g)) + noise * _normal((n, 2), g)
    return (x / 5).float()


def _swiss_roll_mixture(dim: int, points: int) -> Mixture:
    """:func:`swiss_roll` (noise 0.5): N(., 0.1^2 I) at ``points`` curve points."""
    q = _quantiles(points)
    return _isotropic(_roll(torch.cat([q, q])) / 5, 0.1, exact=False)


def _spiral_arm(u: torch.Tensor, turns: float) -> torch.Tensor:
    """The arm (-s cos s, s sin s), s = sqrt(u) 2 pi turns, for u (n,); shape (n, 2)."""
    s = torch.sqrt(u) * 2 * math.pi * turns
    return torch.stack([-s * torch.cos(s), s * torch.sin(s)], 1)


def spirals(n: int, seed: int | torch.Generator, noise: float = 0.3,
            turns: float = 1.5) -> torch.Tensor:
    """Two interleaved Archimedean spirals r = s, angle s, s = sqrt(u) * 2 pi turns, the second
    rotated by pi (each point picks one with probability 1/2), plus N(0, noise^2 I), divided
    by 3; drawn i.i.d. Returns shape (n, 2)."""
    n = check_positive_int("n", n)
    g = as_generator(seed)
    arm = _spiral_arm(_uniform(n, g), turns)
    sign = torch.where(torch.rand(n, generator=g) < 0.5, 1.0, -1.0).double()
    x = sign[:, None] * arm
    return ((x + noise * _normal((n, 2), g)) / 3).float()


def _spirals_mixture(dim: int, points: int) -> Mixture:
    """:func:`spirals` (noise 0.3, turns 1.5): N(., 0.1^2 I) at ``points`` curve points."""
    arm = _spiral_arm(_quantiles(points), 1.5)
    return _isotropic(torch.cat([arm, -arm]) / 3, 0.1, exact=False)


def standard_normal(n: int, seed: int | torch.Generator, dim: int = 2) -> torch.Tensor:
    """Samples of N(0, I_dim), shape (n, dim)."""
    n = check_positive_int("n", n)
    return torch.randn(n, check_positive_int("dim", dim), generator=as_generator(seed))


def _normal_mixture(dim: int, points: int) -> Mixture:
    """:func:`standard_normal`: the single component N(0, I_dim)."""
    return Mixture(torch.zeros(1, dim, dtype=torch.float64), torch.ones(1, dtype=torch.float64),
                   torch.ones(1, dtype=torch.float64))


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


def _gmm_mixture(dim: int, points: int) -> Mixture:
    """:func:`gaussian_mixture` (8 components, radius 3, std 0.5), exactly."""
    return _isotropic(gaussian_mixture_means(dim, 8, 3.0), 0.5)


def load_digits() -> tuple[torch.Tensor, torch.Tensor]:
    """The 1,797 8x8 digits scaled to [-1, 1] (x / 8 - 1), shape (1797, 64), and labels (1797,)."""
    with np.load(_DIGITS_FILE) as f:
        images = torch.from_numpy(f["images"].astype(np.float32)) / 8.0 - 1.0
        labels = torch.from_numpy(f["labels"].astype(np.int64))
    return images, labels


def _read_rows(p: Path, name: str) -> np.ndarray:
    if p.suffix.lower() == ".npy":
        return load_npy(p, name)  # size, checksum, no pickles: BadInput naming the file
    with warnings.catch_warnings():  # an empty file is reported below, not warned about
        warnings.simplefilter("ignore")
        return np.loadtxt(p, delimiter=",", ndmin=2, encoding="utf-8-sig",
                          skiprows=int(_has_header(p)))


def _has_header(p: Path) -> bool:
    """Whether a CSV's first line is a header: none of its fields is a number (a byte-order
    mark is ignored). A first row with one mistyped number is data, and its error is reported,
    not dropped as a header."""
    with open(p, encoding="utf-8-sig", errors="replace") as f:
        first = f.readline()
    fields = [v.strip() for v in first.split(",")]
    if not any(fields):
        return False

    def number(v: str) -> bool:
        try:
            float(v)
        except ValueError:
            return False
        return True

    return not any(number(v) for v in fields)


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
            arr = _read_rows(p, name)
        except FlowsError:
            raise
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
    return as_float32(f"{name}={str(path)!r}", arr)


def as_float32(name: str, arr: np.ndarray) -> torch.Tensor:
    """``arr`` as a float32 tensor, refused (:class:`FlowsError` naming ``name`` and the first
    offending row) where a value is NaN or infinite, or finite but beyond float32's range
    (it would become infinite in the conversion).

    >>> as_float32("data", np.array([[1.0], [1e39]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: data holds 1e+39 in row 1, beyond float32's range ...
    """
    x = np.asarray(arr)
    check_finite(name, torch.as_tensor(x))
    big = np.abs(x) > np.finfo(np.float32).max if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    if big.any():
        row = int(np.flatnonzero(big.reshape(x.shape[0], -1).any(axis=1))[0])
        value = x.reshape(x.shape[0], -1)[row][big.reshape(x.shape[0], -1)[row]][0]
        raise FlowsError(f"{name} holds {value:.3g} in row {row}, beyond float32's range "
                         f"(|x| <= {float(np.finfo(np.float32).max):.2g}) that flows computes "
                         "in; rescale the data")
    return torch.as_tensor(x.astype(np.float32))


@dataclass(frozen=True)
class Dataset(Result):
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
    closed_form : callable or None
        ``closed_form(dim, points) -> Mixture`` for a named dataset of :data:`MIXTURES`.
    held_out : callable or None
        ``held_out() -> (validation, test)``, rows never in ``pool`` (MNIST's validation and
        test images): a metric against validation images has the floor of the same metric
        between test and validation images (:func:`flows.evaluation.floors.floor_pairs`).
    """

    name: str
    dim: int
    sampler: Sampler | None = None
    pool: torch.Tensor | None = None
    closed_form: MixtureForm | None = None
    held_out: Callable[[], tuple[torch.Tensor, torch.Tensor]] | None = None

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

    def mixture(self, points: int = CURVE_POINTS) -> Mixture | None:
        """The distribution as a Gaussian mixture (a curve by ``points`` components), or None.

        Examples
        --------
        >>> load_dataset("moons").mixture().means.shape
        torch.Size([1000, 2])
        >>> load_dataset("checkerboard").mixture() is None
        True
        """
        return None if self.closed_form is None else self.closed_form(self.dim, points)


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
    "mnist": None,
    "mnist14": None,
    "mnist14-gmm": None,
}
"""Names accepted by :func:`load_dataset`; ``gmm<d>`` means e.g. ``gmm16`` (16-D mixture)."""

MIXTURES: dict[str, MixtureForm] = {
    "normal": _normal_mixture,
    "8gaussians": _eight_gaussians_mixture,
    "gmm<d>": _gmm_mixture,
    "moons": _moons_mixture,
    "circles": _circles_mixture,
    "swissroll": _swiss_roll_mixture,
    "spirals": _spirals_mixture,
    "mnist14-gmm": lambda dim, points: mnist14_mixture(),
}
"""The named datasets with a closed form as a Gaussian mixture (:meth:`Dataset.mixture`)."""


def mnist14_mixture() -> Mixture:
    """The ``mnist14-gmm`` mixture (exact: it is that data set), float64, from the MNIST cache
    (:func:`flows.mnist.mixture_arrays`)."""
    from .mnist import mixture_arrays

    m = mixture_arrays()
    return Mixture(*(torch.from_numpy(m[k]).double() for k in ("means", "stds", "weights")))


def _mixture_sampler(mix: Mixture) -> Sampler:
    """Draws of a mixture: a component by its weight, then mu_k + s_k N(0, I); float32."""
    def sample(n: int, g: torch.Generator) -> torch.Tensor:
        k = torch.multinomial(mix.weights, n, replacement=True, generator=g)
        noise = _normal((n, mix.means.shape[1]), g)
        return (mix.means[k] + mix.stds[k, None] * noise).float()

    return sample


def load_mnist_pool(spec: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The 50,000 training images of ``mnist`` (784-D) or ``mnist14`` (196-D) in [-1, 1),
    float32 (n, d), and their labels int64 (n,); :class:`FlowsError` naming ``make mnist``
    when the cache is absent."""
    from .mnist import load_mnist

    if spec not in ("mnist", "mnist14"):
        raise FlowsError(f"data={spec!r} is not an MNIST data set; use 'mnist' or 'mnist14'")
    x, y = load_mnist("train", 14 if spec == "mnist14" else 28, what=f"data={spec!r}")
    return torch.from_numpy(x), torch.from_numpy(y)


def load_mnist_held_out(spec: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The 10,000 validation and the 10,000 test images of ``mnist`` or ``mnist14``, never in
    its training pool, as float32 tensors (n, d) in [-1, 1)."""
    from .mnist import load_mnist

    if spec not in ("mnist", "mnist14"):
        raise FlowsError(f"data={spec!r} is not an MNIST data set; use 'mnist' or 'mnist14'")
    side = 14 if spec == "mnist14" else 28
    return tuple(torch.from_numpy(load_mnist(split, side, what=f"data={spec!r}")[0])
                 for split in ("valid", "test"))  # type: ignore[return-value]


def generated_dataset(spec: str) -> Dataset | None:
    """The generated dataset named ``spec`` (``moons``, ``gmm16``, ...), or None for any other
    string (``digits``, a file path, an unknown name).

    Examples
    --------
    >>> generated_dataset("gmm3").dim, generated_dataset("digits")
    (3, None)
    """
    if not isinstance(spec, str):
        return None
    if spec == "mnist14-gmm":
        mix = mnist14_mixture()
        return Dataset(spec, mix.means.shape[1], sampler=_mixture_sampler(mix),
                       closed_form=MIXTURES[spec])
    if spec.startswith("gmm") and spec[3:].isdigit() and int(spec[3:]) >= 1:
        d = int(spec[3:])
        return Dataset(spec, d, sampler=_gmm_sampler(d), closed_form=MIXTURES["gmm<d>"])
    if DATASETS.get(spec) is not None:
        return Dataset(spec, 2, sampler=DATASETS[spec], closed_form=MIXTURES.get(spec))
    return None


def load_dataset(spec: str, name: str = "data") -> Dataset:
    """Resolve a dataset name (see :data:`DATASETS`) or a ``.npy``/``.csv`` path.

    Raises :class:`FlowsError` naming the parameter and the valid names for an unknown name.
    """
    if not isinstance(spec, str) or not spec:
        raise FlowsError(f"{name}={spec!r} is not allowed; give a dataset name or a file path")
    if spec == "digits":
        return Dataset("digits", 64, pool=load_digits()[0])
    if spec in ("mnist", "mnist14"):
        pool = load_mnist_pool(spec)[0]
        return Dataset(spec, pool.shape[1], pool=pool,
                       held_out=functools.partial(load_mnist_held_out, spec))
    ds = generated_dataset(spec)
    if ds is not None:
        return ds
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
        return Dataset("normal", dim, sampler=lambda n, g: standard_normal(n, g, dim=dim),
                       closed_form=MIXTURES["normal"])
    ds = load_dataset(spec, name=name)
    if ds.dim != dim:
        raise FlowsError(f"{name}={spec!r} has dimension {ds.dim} but the data have dimension "
                         f"{dim}; source and target must have the same dimension")
    return ds


@dataclass(frozen=True)
class Splits(Result):
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
