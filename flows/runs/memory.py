"""Memory estimates of flows runs, checked before anything is allocated.

Each estimate adds the largest buffers of one kind of work (float32 tensors of 4 bytes, the
float64 cost matrices of the exact OT distances of 8 bytes) and names the parameter behind the
largest term, so that :func:`_runkit.check_memory` can say which one to reduce. The estimates
are lower bounds of the peak (constant factors for temporaries are included, allocator overhead
is not); they exist to refuse sizes that cannot fit, not to predict usage.
"""

from __future__ import annotations

from _runkit import check_memory

__all__ = ["training_bytes", "sampling_bytes", "distance_bytes", "theory_sweep_bytes",
           "floor_pair_bytes", "check_terms"]

F32, F64 = 4, 8


def check_terms(terms: dict[str, float], limit: float | None = None) -> int:
    """Refuse (``BadInput``) when the sum of ``terms`` exceeds the memory available.

    The message names the parameter whose term is largest.

    >>> check_terms({"n": 1e3, "width": 1e3})
    2000
    >>> check_terms({"n": 4e12, "width": 8.0}, limit=2**30)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: n is too large: the run would need about 3.6 TiB of memory, ...
    """
    name = max(terms, key=lambda k: terms[k])
    return check_memory(name, float(sum(terms.values())), limit=limit)


def sampling_bytes(n: int, dim: int, width: int, steps: int) -> dict[str, float]:
    """Terms of pushing ``n`` points of dimension ``dim`` through a width-``width`` field.

    >>> sampling_bytes(10, 2, 8, 20)["n"]  # 10 * (6 * 2 + 3 * 8) * 4
    1440.0
    """
    return {"n": float(n) * (6 * dim + 3 * width) * F32,
            "steps": float(steps + 1) * 2 * F32}


def distance_bytes(n: int, n_reference: int, dim: int) -> float:
    """Bytes of an exact OT distance between ``n`` and ``n_reference`` points (cost matrix,
    float64 copies, the plan).

    >>> distance_bytes(100, 100, 2)
    243200.0
    """
    return float(n) * float(n_reference) * 3 * F64 + (n + n_reference) * dim * F64


def floor_pair_bytes(pairs: int, n: int, n_reference: int, dim: int) -> float:
    """Bytes of the ``pairs`` pairs of true samples a noise floor holds at once (the float32
    rows and about 512 bytes of tensor objects per pair).

    >>> floor_pair_bytes(10, 100, 100, 2)  # 10 * ((100 + 100) * 2 * 4 + 512)
    21120.0
    """
    return float(pairs) * ((float(n) + float(n_reference)) * dim * F32 + 512.0)


def training_bytes(cfg, dim: int, n_rows: int | None = None) -> dict[str, float]:
    """Terms of one :func:`flows.training.loop.train` run with its evaluation.

    Parameters
    ----------
    cfg : TrainConfig
        A resolved config.
    dim : int
        Data dimension.
    n_rows : int, optional
        Rows of a finite dataset (``n_train`` is capped by it).

    Returns
    -------
    dict
        Bytes per parameter: ``width`` (weights, gradients, optimizer, activations; named
        ``data`` or ``fourier`` when the input dimension is what makes them large),
        ``n_train`` (data pool or fixed objective), ``batch`` (couplings), ``n_eval``
        (held-out, floor and generated samples with their distance), ``steps`` (loss history).
    """
    p = dim + 2 + 2 * int(cfg.fourier)
    m = float(cfg.width)
    n_train = float(cfg.n_train if n_rows is None else min(cfg.n_train, n_rows))
    theory = cfg.regime == "theory"
    rows = n_train * cfg.k_draws if theory else float(cfg.batch)
    weights = m * (p + dim) * F32 * (3 if theory else 6) + (rows + cfg.n_eval) * m * 3 * F32
    # the weights grow with the width, the data dimension and the Fourier features: name the
    # largest of the three
    sizes = {"width": m, "data": float(dim), "fourier": 2.0 * int(cfg.fourier)}
    terms = {
        max(sizes, key=lambda k: sizes[k]): weights,
        "n_train": n_train * dim * F32 * 2 + (rows * (p + dim) * F32 if theory else 0.0),
        "batch": (float(cfg.batch) ** 2 * 3 * F64 if cfg.coupling != "independent" else 0.0)
        + float(cfg.batch) * (p + 3 * dim) * F32 * 3,
        "n_eval": float(cfg.n_eval) * 3 * dim * F32
        + distance_bytes(cfg.n_eval, cfg.n_eval, dim) * 2,
        "steps": float(cfg.steps) * 3 * F32,
    }
    if dim >= max(m, n_train, cfg.n_eval, cfg.batch):  # the data dimension drives every term
        terms = {"data": sum(terms.values())}
    return terms


def theory_sweep_bytes(n: int, k: int, width: int, dim: int = 2, n_eval: int = 1000,
                       kernel: bool = False) -> dict[str, float]:
    """Terms of one theory-regime run of a sweep (``kernel``: with the (n k)^2 kernel H).

    >>> t = theory_sweep_bytes(256, 4, 1024, kernel=True)
    >>> t["n"] > t["width"]
    True
    """
    rows = float(n) * k
    p = dim + 2
    activations = rows * width * 3 * F32  # charged to the larger of the two factors
    return {"width": float(width) * (p + dim) * F32 * 3 + float(n_eval) * width * 3 * F32
            + (activations if width >= rows else 0.0),
            "n": rows * (p + dim) * F32 + (rows**2 * 3 * F64 if kernel else 0.0)
            + (activations if width < rows else 0.0),
            "n_eval": distance_bytes(n_eval, n_eval, dim) * 2}
