"""Every bound and theory check the flows package reports, with the theorem it implements.

:data:`BOUNDS` maps the name under which a number appears in ``metrics.json`` to what it is:
the theorem (or "derived here"), its constants as computed, a citation, and whether the
number is CERTIFIED (nothing in it is sampled, or it is certified given a named estimated
input) or ESTIMATED. ``docs/theory_bounds.md`` writes the derivations out;
:func:`bounds_table` is the JSON form that ``flows experiment risk`` writes beside its numbers.

Examples
--------
>>> BOUNDS["w2_lipschitz_bound"].certified, BOUNDS["w2_bound"].certified
(True, False)
>>> sorted(bounds_table(["gen_bound"])["gen_bound"])
['certified', 'citation', 'constants', 'estimated', 'theorem']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import FlowsError

__all__ = ["BOUNDS", "bounds_table"]

BENTON = ("J. Benton, G. Deligiannidis and A. Doucet (2024), Error bounds for flow matching "
          "methods, Transactions on Machine Learning Research; arXiv:2305.16860")
DU = ("S. S. Du, X. Zhai, B. Poczos and A. Singh (2019), Gradient descent provably optimizes "
      "over-parameterized neural networks, ICLR, Theorem 4.1")
ARORA = ("S. Arora, S. S. Du, W. Hu, Z. Li and R. Wang (2019), Fine-grained analysis of "
         "optimization and generalization for overparameterized two-layer neural networks, "
         "ICML, Theorem 4.1")
GRONWALL = ("Benton, Deligiannidis and Doucet (2024): W2(q_1, p_1) <= eps exp(int_0^1 L_t dt) "
            "for an L_t-Lipschitz field with L2 error eps; sharpened: the one-sided constant "
            "mu_t replaces L_t and W2 <= G eps with "
            "G = (int_0^1 exp(2 int_s^1 mu_r dr) ds)^{1/2} <= exp(int_0^1 mu_t^+ dt)")


@dataclass(frozen=True)
class Bound:
    """What one reported bound is.

    Attributes
    ----------
    theorem : str
        The statement it implements.
    constants : str
        How its constants are computed here.
    citation : str
        Where the theorem comes from ("derived here" with the page of the derivation).
    certified : bool
        True when the number holds without sampling (given ``estimated``, if that is not
        empty); False when it is an estimate.
    estimated : str
        The inputs that are estimated ("" when none).
    """

    theorem: str
    constants: str
    citation: str
    certified: bool
    estimated: str


BOUNDS: dict[str, Bound] = {
    "w2_bound": Bound(
        GRONWALL, "mu_t: the largest lambda_max(sym J_v) over 200 source points' segments "
        "[X_t, Y_t] (5 points each) at both ends of each of 40 midpoint steps; eps^2: the "
        "excess risk, upper end of its 95% interval over 20,000 Monte Carlo draws",
        BENTON, False, "mu_t (sampled pairs) and the excess risk (Monte Carlo)"),
    "w2_bound_trajectory": Bound(
        GRONWALL + ", per pair: E ||X_1 - Y_1||^2 <= E[G_i^2 I_i] = G_traj^2 eps^2",
        "G_i from pair i's own mu along its own segment; I_i = int ||v - u*||^2 along its "
        "exact trajectory (trapezoid, 40 steps); the weighted mean over 200 pairs",
        BENTON, False, "the pairs' factors (200 sampled pairs) and the excess risk"),
    "w2_lipschitz_bound": Bound(
        GRONWALL + ", with mu certified for every x and t from the weights",
        "mu = min of s ||A||_2 ||W_x||_2 (||W||_2 with normalised inputs), the lift bound "
        "2 s lambda_max(sum_r M_r^+) and, for plain inputs, the exact worst-pattern "
        "one-sided constant (d = 2) or its PSD bound; G(mu) = ((e^{2 mu} - 1) / (2 mu))^{1/2}",
        BENTON, True,
        "the excess risk (Monte Carlo, upper 95% end): certified given it"),
    "gen_bound": Bound(
        "derived here: sup over {W : max_r ||w_r - w0_r|| <= beta / sqrt(m)} of the excess "
        "gap <= 2 sqrt(2) d beta (k E[L_j^2] / n)^{1/2} + (61 E[jump^2] / (2 n delta))^{1/2} "
        "with probability 1 - delta (symmetrisation; Maurer's vector contraction; "
        "Talagrand's contraction; Efron-Stein and Chebyshev; a union over 61 radii)",
        "beta = sqrt(m) max_r ||w_r - w0_r|| rounded up to the grid 2^{-10..20} in steps of "
        "sqrt(2); delta = 0.05; the two expectations over 1,000 pairs of fresh population "
        "groups, each at the upper end of its 95% interval",
        "derived here (docs/theory_bounds.md); tools: A. Maurer (2016), A vector-contraction "
        "inequality for Rademacher complexities, ALT; M. Ledoux and M. Talagrand (1991), "
        "Probability in Banach spaces, Theorem 4.12; S. Boucheron, G. Lugosi and P. Massart "
        "(2013), Concentration inequalities, Theorem 3.1 (Efron-Stein)",
        False, "E[L_j^2] and E[jump^2] (Monte Carlo over population groups)"),
    "ntk_check": Bound(
        "not a bound: the kernel-regime prediction R_t = (I - 2 lr H / N)^t R_0, the leading "
        "term of the residual in Arora et al.'s Theorem 4.1, checked over the whole horizon: "
        "max_t max(L_obs / L_NTK, L_NTK / L_obs) <= 1.1 and "
        "max_t ||R_obs - R_NTK|| / ||R_NTK - R_0|| <= 0.1",
        "H the infinite-width kernel on the run's own draws; R_obs from replaying the run",
        ARORA, False, "a check at practical widths; the theorem's constants are not given"),
    "required_width": Bound(
        "m = Omega(N^6 / (lambda_0^4 delta^3)) and eta = O(lambda_0 / N^2) give linear "
        "convergence ||u(k) - y||^2 <= (1 - eta lambda_0 / 2)^k ||u(0) - y||^2",
        "unit constants (the theorem hides them), delta = 0.1, eta = 2 lr / N", DU, False,
        "the order of magnitude only: the constants are unknown"),
}
"""Name in ``metrics.json`` -> :class:`Bound`."""


def bounds_table(names: list[str] | None = None) -> dict[str, dict]:
    """The JSON form of :data:`BOUNDS` (all, or ``names``).

    Returns
    -------
    dict
        name -> {theorem, constants, citation, certified, estimated}.
    """
    names = list(BOUNDS) if names is None else list(names)
    unknown = [n for n in names if n not in BOUNDS]
    if unknown:
        raise FlowsError(f"bounds {unknown!r} are not known; use some of {', '.join(BOUNDS)}")
    return {n: asdict(BOUNDS[n]) for n in names}
