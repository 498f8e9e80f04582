"""Power of the flows evaluation on 8x8 digits: which test sees which bad sampler.

Each repetition r splits the 1,797 digits at random (seed r) into a training set T (600 rows),
a reference / held-out set R (300 rows) and a pool of fresh rows F, and builds 300 "generated"
points per sampler:

- fresh: 300 rows of F (a perfect sampler; the i.i.d. control);
- drop-one-class: 300 rows of F without class r mod 10;
- two classes: 300 rows drawn (with repeats) from F's rows of classes r and r + 1 mod 10;
- flips: fresh rows mirrored left to right;
- 10% noise: 270 fresh rows and 30 images of independent uniform pixels on [-1, 1];
- blur: fresh rows blurred by the 3 x 3 binomial kernel [1 2 1]^T [1 2 1] / 16 (edges
  repeated);
- copies: 300 rows of T (found only against the training set: ``copying``, ``memorization``);
- shrink 0.8: fresh rows shrunk toward T's mean m: m + 0.8 (x - m);
- copies + noise: 300 rows of T plus N(0, 0.2^2) per pixel (the data lie in [-1, 1]);
- shift 0.05: fresh rows + 0.05 on every pixel.

Tests (p < ``--alpha`` counts as flagged): permutation two-sample tests of the samples against
R (:func:`flows.evaluation.twosample.permutation_test`, ``--permutations`` splits each) for W2,
sliced W, energy distance, ridge Hotelling, k-NN precision and recall (k = 3), the log
variance ratio, the chi-square of k-means bin counts, the chi-square of the stored feature
classifier's predicted classes and the classifier-feature FD; and Meehan et al.'s data-copying
test against T with R held out (:func:`flows.evaluation.copying.data_copying`); and ``all``,
the one verdict of ``flows eval --metric all --train T --reference R``
(:func:`flows.evaluation.verdict.evaluate_all`: the whole family, ``--all-permutations``
shared splits, Holm at family-wise ``--alpha``), flagged when the verdict is "fail". The table
gives, per (sampler, test), the fraction of repetitions flagged, and with single tests in the
last column the fraction flagged by any of them at ``--alpha`` without correction.

    python bench/eval_power.py [--reps 5] [--control-reps 20] [--permutations 499]
                               [--tests all,w2,sliced,...] [--quick]

The default runs ``all`` alone (about 20-40 s a verdict on one core; 120 verdicts).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as nnf

from flows.data import load_digits
from flows.evaluation.copying import data_copying
from flows.evaluation.twosample import permutation_test
from flows.evaluation.verdict import ALPHA, PERMUTATIONS, evaluate_all

TESTS = ("all", "w2", "sliced", "energy", "hotelling", "precision", "recall", "variance", "bins",
         "classes", "fd", "copying")
SAMPLERS = ("fresh", "drop-one-class", "two classes", "flips", "10% noise", "blur", "copies",
            "shrink 0.8", "copies + noise", "shift 0.05")


def blur(x: torch.Tensor) -> torch.Tensor:
    """8 x 8 images (rows of x) blurred by the 3 x 3 binomial kernel, edges repeated."""
    k = torch.tensor([1.0, 2.0, 1.0])
    kernel = (k[:, None] * k[None, :] / 16).reshape(1, 1, 3, 3)
    img = nnf.pad(x.reshape(-1, 1, 8, 8), (1, 1, 1, 1), mode="replicate")
    return nnf.conv2d(img, kernel).reshape(x.shape)


def samplers(rep: int, n: int = 300, n_train: int = 600) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """The samples of every sampler at repetition ``rep``, the training set and the reference."""
    x, labels = load_digits()
    g = torch.Generator().manual_seed(rep)
    perm = torch.randperm(x.shape[0], generator=g)
    train, ref, rest = x[perm[:n_train]], x[perm[n_train:n_train + n]], perm[n_train + n:]
    fresh = x[rest[:n]]
    kept = rest[labels[rest] != rep % 10][:n]
    pair = rest[(labels[rest] == rep % 10) | (labels[rest] == (rep + 1) % 10)]
    two = x[pair[torch.randint(0, pair.numel(), (n,), generator=g)]]
    noisy = fresh.clone()
    noisy[: n // 10] = 2 * torch.rand(n // 10, x.shape[1], generator=g) - 1
    mean = train.mean(0)
    copies = train[torch.randperm(n_train, generator=g)[:n]]
    out = {"fresh": fresh, "drop-one-class": x[kept], "two classes": two,
           "flips": fresh.reshape(-1, 8, 8).flip(2).reshape(fresh.shape), "10% noise": noisy,
           "blur": blur(fresh), "copies": copies, "shrink 0.8": mean + 0.8 * (fresh - mean),
           "copies + noise": copies + 0.2 * torch.randn(copies.shape, generator=g),
           "shift 0.05": fresh + 0.05}
    return out, train, ref


def p_values(samples: torch.Tensor, train: torch.Tensor, ref: torch.Tensor, tests: list[str],
             permutations: int, seed: int, all_permutations: int = PERMUTATIONS,
             alpha: float = ALPHA) -> dict:
    """p-value of each test for one sampler's samples; for ``all`` 0.0 when the verdict is
    "fail" at ``alpha`` and 1.0 when it is "pass"."""
    out = {t: permutation_test(samples, ref, t, permutations, seed=seed).p_value
           for t in tests if t not in ("copying", "all")}
    if "copying" in tests:
        out["copying"] = data_copying(samples, train, ref, seed=seed).p_value
    if "all" in tests:
        v = evaluate_all(samples, ref, train, alpha, all_permutations, seed=seed)
        out["all"] = 0.0 if v.verdict == "fail" else 1.0
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the study and print the table; returns {sampler: {test: flagged fraction}}."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions per defective sampler")
    ap.add_argument("--control-reps", type=int, default=20, dest="control_reps",
                    help="repetitions of the i.i.d. control (fresh digits)")
    ap.add_argument("--permutations", type=int, default=499)
    ap.add_argument("--all-permutations", type=int, default=PERMUTATIONS,
                    dest="all_permutations", help="shared splits of the 'all' verdict")
    ap.add_argument("--alpha", type=float, default=ALPHA)
    ap.add_argument("--tests", default="all",
                    help=f"comma-separated among {','.join(TESTS)} (W2 costs most: ~30-80 ms "
                         "a split at 300 x 300)")
    ap.add_argument("--samplers", default=",".join(SAMPLERS),
                    help="comma-separated samplers (default: all of them)")
    ap.add_argument("--quick", action="store_true",
                    help="2 repetitions, 49 permutations (1099 for 'all')")
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.control_reps, a.permutations, a.all_permutations = 2, 2, 49, 1099
    torch.set_num_threads(1)
    names = [t for t in a.tests.split(",") if t]
    chosen = [s for s in a.samplers.split(",") if s]
    unknown = (set(names) - set(TESTS)) | (set(chosen) - set(SAMPLERS))
    if unknown:
        ap.error(f"unknown tests or samplers {sorted(unknown)}; choose from {', '.join(TESTS)} "
                 f"and {', '.join(SAMPLERS)}")
    start = time.time()
    flagged = {s: [] for s in chosen}
    for rep in range(max(a.reps, a.control_reps)):
        data, train, ref = samplers(rep)
        for s in chosen:
            if rep < (a.control_reps if s == "fresh" else a.reps):
                p = p_values(data[s], train, ref, names, a.permutations, 1000 + rep,
                             a.all_permutations, a.alpha)
                flagged[s].append({t: v < a.alpha for t, v in p.items()})
    print(f"flagged at p < {a.alpha} (permutations {a.permutations}; 'all': "
          f"{a.all_permutations}, Holm at family-wise {a.alpha}); digits, n = 300 vs 300, "
          f"{time.time() - start:.0f} s")
    single = [t for t in names if t != "all"]  # "any" is over the single tests
    cols = names + (["any"] if single else [])
    print(f"{'sampler':16s} {'reps':>4s} " + " ".join(f"{t:>9s}" for t in cols))
    table = {}
    for s in chosen:
        rows = flagged[s]
        rates = {t: sum(r[t] for r in rows) / len(rows) for t in names}
        if single:
            rates["any"] = sum(any(r[t] for t in single) for r in rows) / len(rows)
        table[s] = rates
        print(f"{s:16s} {len(rows):4d} " + " ".join(f"{rates[t]:9.2f}" for t in cols))
    return table


if __name__ == "__main__":
    main()
