"""The three generators side by side on one network's noisy states, with the no-attractor control.

Every method draws as many states as the held-out set holds, at the same number of flow-field
evaluations (``2 steps``, midpoint); the relaxed method adds the network's own evaluations, which
are reported apart. The control trains the ambient flow on the shuffled states (each neuron
permuted independently, :func:`~neurodyn.generative.states.shuffled_states`) and reports the
Betti numbers of what it generates: a ring or torus there would mean the method invents
topology, and its rate W2 over the floor shows the W2 can tell a wrong population from the
data's. Whether the generated activity is an attractor population is one judgement of (a)'s
samples as generated, against the data's own verdict (:mod:`.verdict`): (b) and (c) are shaped
by the network's manifold and are reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, Result, check_int

from ..network import HopfieldNetwork
from .methods import generate_ambient, generate_riemannian, relax_states
from .metrics import ATTRACTOR_BETTI, GeneratedMetrics, judge_states, state_betti
from .states import PopulationStates, population_states, shuffled_states
from .verdict import DataVerdict, KeptVerdict, keeps_attractor

__all__ = ["GenerationComparison", "compare_generators", "equal_time", "METHODS"]

METHODS = ("ambient", "riemannian", "relaxed")


@dataclass(frozen=True)
class GenerationComparison(Result):
    """Metrics per method, and the control.

    Attributes
    ----------
    methods : dict
        ``{"ambient" | "riemannian" | "relaxed": GeneratedMetrics}``.
    cost : dict
        Per method: ``nfe`` (flow-field evaluations per sample), ``network_evaluations``,
        ``seconds`` and ``cpu_seconds`` (training and sampling, wall and this process's CPU).
    energy_rise : float
        Largest relative energy rise along the relaxations (descent holds below 1e-9).
    control_betti : tuple of int
        Betti numbers of ambient samples of a flow trained on shuffled states.
    control_rate_w2_ratio : float
        Their rate W2 over its floor.
    held, train : int
        States held out and trained on.
    held_betti : tuple of int
        Betti numbers of the held-out states (the judge's rule).
    verdict : KeptVerdict
        Whether (a)'s samples as generated are an attractor population (:mod:`.verdict`).
    """

    methods: dict
    cost: dict
    energy_rise: float
    control_betti: tuple
    control_rate_w2_ratio: float
    held: int
    train: int
    held_betti: tuple
    verdict: KeptVerdict


def compare_generators(network: HopfieldNetwork, states: PopulationStates | None = None,
                       held: int = 400, steps: int = 5, train_steps: int = 4500,
                       relax: float = 4.0, seed: int = 0,
                       samples: dict | None = None,
                       data: DataVerdict | None = None) -> GenerationComparison:
    """Run (a) ambient, (b) Riemannian and (c) relaxed generation, judge each, and say whether
    (a)'s samples as generated are an attractor population.

    Parameters
    ----------
    network : HopfieldNetwork
        The fitted network (its manifold defines distances and decoding).
    states : PopulationStates or None
        The data (None: :func:`population_states` of ``network`` with its defaults).
    held : int
        States held out for judging; the rest train (at least ``2 held`` of them).
    steps : int
        Midpoint steps of every flow's sampler (``2 steps`` evaluations).
    train_steps : int
        Training steps of each ambient flow (the Riemannian flow takes half). The coordinate
        distribution of the ambient samples, which relaxation (c) inherits (on the ring it
        moves the decoded coordinate by about 0.06 rad RMS and lowers the W2 slightly),
        converges slowly with training and not with evaluations: intrinsic W2 over its floor
        1.91 / 1.21 / 1.15 at 1,500 steps and 1.41 / 1.07 / 0.78 at 4,500 on three ring seeds,
        the same at 10 and 100 evaluations; hence 4,500 by default.
    relax : float
        Relaxation time (tau) of method (c); the distance to the manifold falls like
        ``exp(-kappa t)``, so ``4 / kappa`` brings it below 2% of where it started.
    seed : int
    samples : dict or None
        Filled with the generated rates per method when given (for figures).
    data : DataVerdict or None
        The data's own attractor verdict (:func:`~.verdict.data_verdict` of the model folder
        recorded states came from, or :func:`~.verdict.fitted_verdict` of their counts). None:
        the network's own states (finite ``noise``) are an attractor's; recorded ones (``noise``
        nan) have an unknown verdict, so nothing generated from them is kept.

    Returns
    -------
    GenerationComparison
    """
    states = population_states(network, seed=seed) if states is None else states
    held = check_int("held", held, lo=2)
    if len(states) < 3 * held:
        raise BadInput(f"states: {len(states)} states; held={held} needs at least {3 * held}",
                       param="states")
    test, train = states.subset(torch.arange(held)), states.subset(torch.arange(held, len(states)))
    a = generate_ambient(train, held, steps, train_steps, seed=seed)
    gen = {"ambient": a,
           "riemannian": generate_riemannian(network, train, held, steps, train_steps // 2,
                                             seed=seed),
           "relaxed": relax_states(network, a, relax)}
    judged: dict[str, GeneratedMetrics] = {
        k: judge_states(network, g.rates, test, train, seed=seed) for k, g in gen.items()}
    control = generate_ambient(shuffled_states(train, seed), held, steps, train_steps, seed=seed)
    ctrl = judge_states(network, control.rates, test, train, seed=seed)
    held_betti = state_betti(test.rates, seed=seed)
    verdict = keeps_attractor(judged, held_betti, ATTRACTOR_BETTI[network.geometry.dim],
                              _own_verdict(states) if data is None else data)
    if samples is not None:
        samples.update({k: g.rates for k, g in gen.items()}, held=test.rates, control=control.rates)
    cost = {k: {"nfe": g.nfe, "network_evaluations": g.network_evaluations,
                "seconds": g.seconds, "cpu_seconds": g.cpu_seconds} for k, g in gen.items()}
    return GenerationComparison(judged, cost, gen["relaxed"].energy_rise, ctrl.betti,
                                ctrl.rate_w2_ratio, held, len(train), held_betti, verdict)


def _own_verdict(states: PopulationStates) -> DataVerdict:
    """The data verdict when none is given: the network's own states (finite noise) are an
    attractor's; recorded ones (noise nan) are unknown."""
    if math.isnan(states.noise):
        return DataVerdict("unknown", "recorded states were given without the data's own "
                           "verdict (data=)", "none")
    return DataVerdict.network()


def equal_time(network: HopfieldNetwork, states: PopulationStates,
               comparison: GenerationComparison, held: int = 400, steps: int = 5,
               train_steps: int = 4500, seed: int = 0) -> dict:
    """(a) and (b) again, each trained for as many steps as fit in the CPU time (c) took in
    ``comparison`` (its ambient training plus the relaxation), at the same ``2 steps`` flow
    evaluations: the three methods at equal cost. The steps are scaled by the measured CPU
    time per step (a second time if the first rescaled run misses the budget by more than 25%,
    as fixed costs can make it), so the match is approximate: the ``cpu_seconds`` returned say
    how close.

    Parameters
    ----------
    network : HopfieldNetwork
    states : PopulationStates
        The states ``comparison`` was computed from.
    comparison : GenerationComparison
        From :func:`compare_generators` with the same ``held``, ``steps``, ``train_steps``,
        ``seed``.
    held, steps, train_steps : int
    seed : int

    Returns
    -------
    dict
        ``{"ambient" | "riemannian": {"train_steps", "cpu_seconds", "nfe", "metrics"}}``;
        ``metrics`` a :class:`GeneratedMetrics` dict.
    """
    held = check_int("held", held, lo=2)
    test, train = states.subset(torch.arange(held)), states.subset(torch.arange(held, len(states)))
    budget = comparison.cost["relaxed"]["cpu_seconds"]
    out = {}
    for name, k in (("ambient", train_steps), ("riemannian", max(1, train_steps // 2))):
        spent = comparison.cost[name]["cpu_seconds"]
        for attempt in range(2):  # again if fixed costs made the first guess miss by 25%
            if attempt and abs(spent / budget - 1) <= 0.25:
                break
            k = max(1, int(round(k * budget / max(spent, 1e-9))))
            g = (generate_ambient(train, held, steps, k, seed=seed) if name == "ambient" else
                 generate_riemannian(network, train, held, steps, k, seed=seed))
            spent = g.cpu_seconds
        out[name] = {"train_steps": k, "cpu_seconds": spent, "nfe": g.nfe,
                     "metrics": judge_states(network, g.rates, test, train, seed=seed).to_dict()}
    return out
