"""Power of the flows evaluation on 8x8 digits: which test sees which bad sampler.

Each repetition r splits the 1,797 digits at random (seed r) into a training set T (600 rows),
a reference / held-out set R (300 rows) and a pool of fresh rows F, and builds 300 "generated"
points per sampler:

- fresh: 300 rows of F (a perfect sampler; the i.i.d. control);
- drop-one-class: 300 rows of F without class r mod 10;
- shrink 0.8: fresh rows shrunk toward T's mean m: m + 0.8 (x - m);
- copies + noise: 300 rows of T plus N(0, 0.2^2) per pixel (the data lie in [-1, 1]);
- shift 0.05: fresh rows + 0.05 on every pixel.

Tests (p < ``--alpha`` counts as flagged): permutation two-sample tests of the samples against
R (:func:`flows.evaluation.twosample.permutation_test`, ``--permutations`` splits each) for W2,
sliced W, energy distance, ridge Hotelling, k-NN precision and recall (k = 3), the log
variance ratio, the chi-square of k-means bin counts, the chi-square of the stored feature
classifier's predicted classes and the classifier-feature FD; and Meehan et al.'s data-copying
test against T with R held out (:func:`flows.evaluation.copying.data_copying`). The table
gives, per (sampler, test), the fraction of repetitions flagged, and in the last column the
fraction flagged by any test.

    python bench/eval_power.py [--reps 5] [--control-reps 20] [--permutations 499]
                               [--tests w2,sliced,...] [--quick]
"""

from __future__ import annotations

import argparse
import time

import torch

from flows.data import load_digits
from flows.evaluation.copying import data_copying
from flows.evaluation.twosample import permutation_test

TESTS = ("w2", "sliced", "energy", "hotelling", "precision", "recall", "variance", "bins",
         "classes", "fd", "copying")
SAMPLERS = ("fresh", "drop-one-class", "shrink 0.8", "copies + noise", "shift 0.05")


def samplers(rep: int, n: int = 300, n_train: int = 600) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """The samples of every sampler at repetition ``rep``, the training set and the reference."""
    x, labels = load_digits()
    g = torch.Generator().manual_seed(rep)
    perm = torch.randperm(x.shape[0], generator=g)
    train, ref, rest = x[perm[:n_train]], x[perm[n_train:n_train + n]], perm[n_train + n:]
    fresh = x[rest[:n]]
    kept = rest[labels[rest] != rep % 10][:n]
    mean = train.mean(0)
    copies = train[torch.randperm(n_train, generator=g)[:n]]
    out = {"fresh": fresh, "drop-one-class": x[kept], "shrink 0.8": mean + 0.8 * (fresh - mean),
           "copies + noise": copies + 0.2 * torch.randn(copies.shape, generator=g),
           "shift 0.05": fresh + 0.05}
    return out, train, ref


def p_values(samples: torch.Tensor, train: torch.Tensor, ref: torch.Tensor, tests: list[str],
             permutations: int, seed: int) -> dict:
    """p-value of each test for one sampler's samples."""
    out = {t: permutation_test(samples, ref, t, permutations, seed=seed).p_value
           for t in tests if t != "copying"}
    if "copying" in tests:
        out["copying"] = data_copying(samples, train, ref, seed=seed).p_value
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the study and print the table; returns {sampler: {test: flagged fraction}}."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions per defective sampler")
    ap.add_argument("--control-reps", type=int, default=20, dest="control_reps",
                    help="repetitions of the i.i.d. control (fresh digits)")
    ap.add_argument("--permutations", type=int, default=499)
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--tests", default=",".join(TESTS),
                    help="comma-separated tests (W2 costs most: ~30 ms a split at 300 x 300)")
    ap.add_argument("--quick", action="store_true", help="2 repetitions, 49 permutations")
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.control_reps, a.permutations = 2, 2, 49
    torch.set_num_threads(1)
    names = [t for t in a.tests.split(",") if t]
    unknown = set(names) - set(TESTS)
    if unknown:
        ap.error(f"unknown tests {sorted(unknown)}; choose from {', '.join(TESTS)}")
    start = time.time()
    flagged = {s: [] for s in SAMPLERS}
    for rep in range(max(a.reps, a.control_reps)):
        data, train, ref = samplers(rep)
        for s in SAMPLERS:
            if rep < (a.control_reps if s == "fresh" else a.reps):
                p = p_values(data[s], train, ref, names, a.permutations, seed=1000 + rep)
                flagged[s].append({t: v < a.alpha for t, v in p.items()})
    print(f"flagged at p < {a.alpha} (permutations {a.permutations}); digits, n = 300 vs 300, "
          f"{time.time() - start:.0f} s")
    print(f"{'sampler':16s} {'reps':>4s} " + " ".join(f"{t:>9s}" for t in names) + "       any")
    table = {}
    for s in SAMPLERS:
        rows = flagged[s]
        rates = {t: sum(r[t] for r in rows) / len(rows) for t in names}
        rates["any"] = sum(any(r.values()) for r in rows) / len(rows)
        table[s] = rates
        print(f"{s:16s} {len(rows):4d} " + " ".join(f"{rates[t]:9.2f}" for t in names)
              + f" {rates['any']:9.2f}")
    return table


if __name__ == "__main__":
    main()
