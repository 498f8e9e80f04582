"""The exact assignment behind the "ot" coupling: the permutation sigma minimizing
sum_i ||x_i - y_sigma(i)||^2 of two equal-size point clouds.

A compiled auction with an exact sparse finish (:mod:`~flows.assignment.auction`, needs numba)
and its warm start from the prices of earlier batches (:mod:`~flows.assignment.warmstart`);
:func:`flows.coupling.ot_permutation` chooses between it, POT's network simplex and scipy.
Names are imported on first use.
"""

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "auction": ("available", "auction_assignment", "squared_euclidean_assignment",
                "assignment_and_prices"),
    "warmstart": ("PriceMap",),
})
