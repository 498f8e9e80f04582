"""Class-conditional flow matching: labels, guidance and per-class evaluation.

- Labels come from the data set (``labels="data"``: digits and MNIST are labelled 0..9) or a user
  array (a .npy/.csv file of integer labels, one per row of a data file). They travel with the
  data through the train / held-out / floor split (:func:`labelled_splits`).
- Training draws (x1, c) pairs; with probability ``label_dropout`` a label is replaced by the
  null label K, so that one network learns the conditional field v(x, t, c) and the
  unconditional one v(x, t, K).
- Sampling with classifier-free guidance (Ho and Salimans, 2022) at scale w:
  v_w(x, t, c) = v(x, t, K) + w (v(x, t, c) - v(x, t, K)); w = 1 is the conditional field.
- Per-class evaluation compares the samples generated for each class with that class's held-out
  points, beside the floor of the same metric at the same sizes between two disjoint subsets
  of the class's other rows (mean and spread over a few independent pairs, as every floor of
  :mod:`flows.evaluation.floors`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from _runkit import Result, artifact
from _runkit.files import load_npy

from .data import Dataset, Splits, load_digits, load_mnist_pool, make_splits
from .errors import FlowsError, check_positive_int, derive_seed


@dataclass(frozen=True)
class LabelledSplits(Splits):
    """:class:`flows.data.Splits` with the labels of every part (int64 tensors).

    Attributes
    ----------
    train_labels, heldout_labels, floor_labels : torch.Tensor of int64, shapes (n_train,),
        (n_eval,), (n_eval,)
    classes : int
        K: labels lie in 0..K-1; K is the null label.
    """

    train_labels: torch.Tensor
    heldout_labels: torch.Tensor
    floor_labels: torch.Tensor
    classes: int


def _read_labels(spec: str) -> torch.Tensor:
    path = Path(spec)
    if path.suffix not in (".npy", ".csv") or not path.is_file():
        raise FlowsError(f"labels={spec!r} is not allowed; give 'data' or an existing .npy/.csv "
                         "file of integer labels")
    try:
        arr = load_npy(path, "labels") if path.suffix == ".npy" else \
            np.loadtxt(path, delimiter=",", ndmin=1)
    except FlowsError:
        raise
    except (ValueError, OSError) as exc:
        raise FlowsError(f"labels={spec!r} could not be read as numbers ({exc})") from exc
    if arr.ndim > 2 or (arr.ndim == 2 and 1 not in arr.shape) or arr.dtype.kind not in "biuf":
        raise FlowsError(f"labels={spec!r} has shape {arr.shape} and dtype {arr.dtype}; one "
                         "integer per data row is required")
    return torch.from_numpy(np.asarray(arr, dtype=np.float64).reshape(-1))


def load_labels(spec: str, data: str, rows: int) -> torch.Tensor:
    """Labels of a data set: ``"data"`` (the data set's own labels) or a label file.

    Returns an int64 tensor of shape (rows,) with values 0..K-1 (every class present).
    """
    if spec == "data":
        if data not in ("digits", "mnist", "mnist14"):
            raise FlowsError(f"labels='data' needs a labelled data set (digits, mnist, mnist14), "
                             f"got data={data!r}; give labels as a .npy/.csv file of one integer "
                             "per data row")
        labels = load_digits()[1] if data == "digits" else load_mnist_pool(data)[1]
    else:
        raw = _read_labels(spec)
        if not torch.equal(raw, raw.round()) or bool((raw < 0).any()):
            raise FlowsError(f"labels={spec!r} must hold non-negative integers")
        labels = raw.long()
    if labels.shape[0] != rows:
        raise FlowsError(f"labels={spec!r} has {labels.shape[0]} entries but data={data!r} has "
                         f"{rows} rows; give one label per row")
    present = torch.unique(labels)
    if not torch.equal(present, torch.arange(present.shape[0])):
        raise FlowsError(f"labels={spec!r} use the values {present.tolist()[:12]}; they must be "
                         "0..K-1 with every class present")
    return labels


def labelled_splits(ds: Dataset, labels: torch.Tensor, n_train: int, n_eval: int,
                    seed: int) -> LabelledSplits:
    """The split of :func:`flows.data.make_splits` with each row's label carried along."""
    if ds.pool is None:
        raise FlowsError(f"labels need a finite data set (digits or a file); data={ds.name!r} "
                         "is generated")
    joined = Dataset(ds.name, ds.dim + 1, pool=torch.cat([ds.pool, labels[:, None].to(
        ds.pool.dtype)], 1))
    s = make_splits(joined, n_train, n_eval, seed)
    d = ds.dim
    return LabelledSplits(s.train[:, :d], s.heldout[:, :d], s.floor[:, :d],
                          s.train[:, d].long(), s.heldout[:, d].long(), s.floor[:, d].long(),
                          int(labels.max()) + 1)


def drop_labels(c: torch.Tensor, p: float, classes: int, gen: torch.Generator) -> torch.Tensor:
    """Replace each label by the null label K with probability p (label dropout)."""
    if p <= 0:
        return c
    drop = torch.rand(c.shape[0], generator=gen) < p
    return torch.where(drop, torch.full_like(c, classes), c)


class Guided(torch.nn.Module):
    """The guided field v_w(x, t) = v(x, t, K) + w (v(x, t, c) - v(x, t, K)) for fixed labels.

    Parameters
    ----------
    field : callable
        v(x, t, c) of a class-conditional model.
    labels : torch.Tensor of int64, shape (N,)
        The class of each of the N points being integrated.
    classes : int
        K (the null label).
    guidance : float
        w; 1 gives the conditional field, 0 the unconditional one (one evaluation each).
    """

    def __init__(self, field, labels: torch.Tensor, classes: int, guidance: float = 1.0) -> None:
        super().__init__()
        self.field, self.labels, self.classes = field, labels, int(classes)
        self.guidance = float(guidance)
        if not np.isfinite(self.guidance):
            raise FlowsError(f"guidance={guidance!r} is not allowed; it must be finite")

    def forward(self, x: torch.Tensor, t: torch.Tensor | float) -> torch.Tensor:
        """v_w(x, t), x of shape (N, d)."""
        c = self.labels.to(x.device)
        if self.guidance == 1.0:
            return self.field(x, t, c)
        null = torch.full_like(c, self.classes)
        v0 = self.field(x, t, null)
        if self.guidance == 0.0:
            return v0
        return v0 + self.guidance * (self.field(x, t, c) - v0)


def per_class_metric(samples: torch.Tensor, sample_labels: torch.Tensor,
                     splits: LabelledSplits, metric: str, seed: int,
                     floor_pairs: int = 3) -> list[dict]:
    """metric(generated class c, held-out class c) beside its floor, for every class.

    The floor is :func:`flows.evaluation.floors.noise_floor` of class c at the same sizes: the
    metric between two disjoint random subsets of n rows each (n = held-out points of class c) of
    the class's training and floor-split rows, mean and standard deviation over ``floor_pairs``
    independent pairs. Returns one dict per class: class, n, value, floor, floor_std,
    floor_pairs, ratio (value / floor). A class with fewer than 2 held-out or generated points,
    or fewer than 2 n rows for the floor, has None for the numbers.
    """
    from .evaluation.distances import metric_fn
    from .evaluation.floors import noise_floor

    pairs = check_positive_int("floor_pairs", floor_pairs)
    out = []
    for k in range(splits.classes):
        held = splits.heldout[splits.heldout_labels == k]
        gen = samples[sample_labels.to(samples.device) == k].cpu()
        pool = torch.cat([splits.train[splits.train_labels == k],
                          splits.floor[splits.floor_labels == k]])
        n = held.shape[0]
        if n < 2 or gen.shape[0] < 2 or pool.shape[0] < 2 * n:
            out.append({"class": k, "n": n, "value": None, "floor": None, "floor_std": None,
                        "floor_pairs": 0, "ratio": None})
            continue
        f = metric_fn(metric, derive_seed(seed, f"class-metric-{k}") % 2**31)
        value = float(f(gen, held))
        fl = noise_floor(Dataset(f"class {k}", held.shape[1], pool=pool), f, n, n, pairs,
                         derive_seed(seed, f"class-floor-{k}"))
        out.append({"class": k, "n": n, "value": value, "floor": fl.mean,
                    "floor_std": fl.std, "floor_pairs": pairs,
                    "ratio": value / fl.mean if fl.mean else None})
    return out


def class_labels_for(splits: LabelledSplits) -> torch.Tensor:
    """Labels to generate for an evaluation: those of the held-out points (same class sizes)."""
    return splits.heldout_labels.clone()


def balanced_labels(classes: int, per_class: int) -> torch.Tensor:
    """Labels 0, .., 0, 1, .., 1, ..., K-1 (``per_class`` each), shape (K per_class,)."""
    return torch.arange(check_positive_int("classes", classes)).repeat_interleave(
        check_positive_int("per_class", per_class))


def _device_of(field) -> torch.device:
    params = list(getattr(field, "parameters", lambda: [])())
    return params[0].device if params else torch.device("cpu")


def sample_by_class(field, source: Dataset, labels: torch.Tensor, classes: int, seed: int,
                    guidance: float = 1.0, method: str = "midpoint", steps: int = 20):
    """Draw one source point per label (seeded) and integrate the guided field
    (:class:`Guided`) on the field's device; returns :class:`flows.sampling.ode.SampleResult`."""
    from .sampling.ode import integrate

    dev = _device_of(field)
    x0 = source.sample(check_positive_int("n", labels.shape[0]), seed).to(dev)
    return integrate(Guided(field, labels.to(dev), classes, guidance), x0, method=method,
                     steps=steps)


@dataclass(frozen=True)
class ConditionalEvaluation(Result):
    """Per-class and overall distance of a class-conditional field's samples, with floors.

    Attributes
    ----------
    metric : str
        "w2" (d <= 3) or "sliced".
    heldout, floor : float
        metric(all generated, all held-out) and metric(floor sample, held-out).
    n_eval, nfe : int
    solver : str
    sample_steps : int
    guidance : float
    classes : int
    per_class : list of dict
        :func:`per_class_metric` rows (class, n, value, floor, ratio).
    worst_class_ratio : float or None
        The largest per-class value / floor.
    samples, labels : torch.Tensor
        Generated points (n_eval, d) and their labels (n_eval,) (artifacts).
    """

    metric: str
    heldout: float
    floor: float
    n_eval: int
    nfe: int
    solver: str
    sample_steps: int
    guidance: float
    classes: int
    per_class: list
    worst_class_ratio: float | None
    samples: torch.Tensor = artifact(default=None)
    labels: torch.Tensor = artifact(default=None)

    def to_dict(self) -> dict:
        """``{metric}_heldout``, ``{metric}_floor`` and the per-class numbers."""
        return {f"{self.metric}_heldout": self.heldout, f"{self.metric}_floor": self.floor,
                "n_eval": self.n_eval, "nfe": self.nfe, "solver": self.solver,
                "sample_steps": self.sample_steps, "guidance": self.guidance,
                "classes": self.classes, "per_class": self.per_class,
                "worst_class_ratio": self.worst_class_ratio}


def evaluate_conditional(field, splits: LabelledSplits, source: Dataset, seed: int,
                         method: str = "midpoint", steps: int = 20,
                         guidance: float = 1.0) -> ConditionalEvaluation:
    """Per-class and overall quality of a class-conditional field, each beside its floor.

    One sample is generated for every held-out point, with that point's label, so every class
    is compared at its own held-out size. The metric is W2 for d <= 3, else sliced W.
    """
    from .evaluation.distances import evaluate

    labels = splits.heldout_labels
    res = sample_by_class(field, source, labels, splits.classes,
                          derive_seed(seed, "eval-samples"), guidance, method, steps)
    x = res.x.cpu()
    metric = "w2" if splits.heldout.shape[1] <= 3 else "sliced"
    m = evaluate(x, splits.heldout, metric, splits.floor, seed=derive_seed(seed, "sliced") % 2**31)
    per = per_class_metric(x, labels, splits, metric, seed)
    ratios = [r["ratio"] for r in per if r["ratio"] is not None]
    return ConditionalEvaluation(metric, m.value, float(m.floor), x.shape[0], res.nfe, method,
                                 steps, float(guidance), splits.classes, per,
                                 max(ratios) if ratios else None, samples=x, labels=labels)
