r"""The attractor verdict: each test's evidence, and the rule that combines them.

Two questions get two answers. "Are these cells tuned to a ring (or torus)?" -- held-out
decoding below a third of chance -- decides whether :func:`~.core.fit_activity`'s model is
useful at all. "Is there an attractor?" is a separate judgement, ``True``, ``False`` or
``"inconclusive"``, built from tests of three roles:

- ``gate``: the cells are tuned (``tuning``); without it there is nothing to judge;
- ``necessary``: what any ring or torus population shows, attractor or not (``topology``:
  the activity's Betti numbers); its failure rules an attractor out, its lack of power
  leaves the verdict open;
- ``specific``: what a population driven by its input alone cannot produce -- the bump's
  ``drift`` about the covariate, coherent bump-frame ``fluctuations`` beyond a shared gain,
  and the ring's persistence in sleep (``sleep co-firing``, ``sleep manifold``).

Each test is :class:`Evidence`: a statistic, its threshold, a p-value or interval where one
exists, whether the data had the power to decide, and a status ``"pass"``, ``"fail"`` (a
decision: the test had the power to see the effect and did not) or ``"inconclusive"``.
``"reported"`` tests (the sleep trajectory's step size) are shown and never decide.

Specific tests differ in what their failure means. A bump that follows its covariate closely
(no ``drift``) or keeps its shape (no coherent ``fluctuations``) is what an attractor anchored
by landmarks, or a quiet one, also shows: such a failure speaks against an attractor only when
nothing speaks for one. Sleep tests **veto**: an attractor's manifold is the network's own and
outlives its input, so activity that loses it in sleep contradicts one however the rest falls.

The rule (:func:`combine`): ``False`` when the gate or a necessary test fails, or when at least
one specific test fails and none passes; ``True`` when every necessary test passes, at least
one specific test passes and no veto fails; ``"inconclusive"`` otherwise (a passing test
against a failed veto, an open necessary test, or no test with the power to decide), always
with the reason in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from _runkit import BadInput
from _runkit.results import Result

__all__ = ["Evidence", "Verdict", "combine", "STATUSES", "ROLES"]

STATUSES = ("pass", "fail", "inconclusive")
ROLES = ("gate", "necessary", "specific", "reported")


def _short(x) -> str:
    """A statistic or threshold in a few characters: numbers to 3 digits, short sequences in
    full (Betti numbers), anything longer by its size."""
    if isinstance(x, (float, np.floating)):
        return f"{x:.3g}"
    if isinstance(x, (list, tuple)) and len(x) <= 4:
        return "(" + ", ".join(_short(v) for v in x) + ")"
    if isinstance(x, (list, tuple)):
        return f"({len(x)} values)"
    if isinstance(x, np.ndarray):
        return f"array{x.shape}"
    text = str(x)
    return text if len(text) <= 24 else text[:21] + "..."


@dataclass(frozen=True)
class Evidence(Result):
    """One test of the verdict.

    Attributes
    ----------
    name : str
        The test (``"tuning"``, ``"topology"``, ``"drift"``, ``"fluctuations"``,
        ``"sleep co-firing"``, ...).
    role : str
        ``"gate"``, ``"necessary"``, ``"specific"`` or ``"reported"`` (module docstring).
    status : str
        ``"pass"``, ``"fail"`` or ``"inconclusive"``.
    statistic : float or list
        What was measured.
    threshold : float or list
        What it was compared with (the direction is in ``reason``).
    p_value : float
        Against the test's null (NaN where the test is an interval or a count).
    interval : list of float
        95% interval of the statistic (empty where none).
    power : bool
        Whether the data could have decided: a ``"fail"`` needs it.
    reason : str
        One sentence: what was seen against what.
    details : dict
        Further numbers (JSON-ready).
    veto : bool
        A failure contradicts an attractor whatever else passes (module docstring).
    """

    name: str
    role: str
    status: str
    statistic: object
    threshold: object
    p_value: float = float("nan")
    interval: list = field(default_factory=list)
    power: bool = True
    reason: str = ""
    details: dict = field(default_factory=dict)
    veto: bool = False

    def __post_init__(self):
        if self.status not in STATUSES:
            raise BadInput(f"status={self.status!r}: one of {STATUSES}", param="status")
        if self.role not in ROLES:
            raise BadInput(f"role={self.role!r}: one of {ROLES}", param="role")

    @property
    def passed(self) -> bool:
        """The status is ``"pass"``."""
        return self.status == "pass"

    def __repr__(self) -> str:
        p = "" if math.isnan(self.p_value) else f", p={self.p_value:.3g}"
        return (f"Evidence({self.name}: {self.status}, {_short(self.statistic)} against "
                f"{_short(self.threshold)}{p})")


@dataclass(frozen=True)
class Verdict(Result):
    """Whether the activity is an attractor's.

    Attributes
    ----------
    attractor : bool or str
        ``True``, ``False`` or ``"inconclusive"``.
    reason : str
        Which tests decided it, in words.
    tests : dict
        ``name -> Evidence``.
    """

    attractor: object
    reason: str
    tests: dict

    @property
    def tuned(self) -> bool:
        """The gate passed: the cells are tuned and a model is worth writing."""
        gate = [t for t in self.tests.values() if t.role == "gate"]
        return all(t.passed for t in gate)

    def named(self, status: str, role: str | None = None) -> list:
        """Names of the tests with ``status`` (and ``role``, if given)."""
        return [k for k, t in self.tests.items()
                if t.status == status and (role is None or t.role == role)]

    def to_dict(self) -> dict:
        """JSON-ready: ``attractor``, ``reason``, ``tests`` (each test's fields)."""
        return {"attractor": self.attractor, "reason": self.reason,
                "tests": {k: t.to_dict() for k, t in self.tests.items()}}

    def __repr__(self) -> str:
        return f"Verdict(attractor={self.attractor!r}: {self.reason[:150]})"


def _names(xs) -> str:
    return ", ".join(xs) if xs else "none"


def combine(tests) -> Verdict:
    """The verdict of a list of :class:`Evidence` (rule in the module docstring).

    Parameters
    ----------
    tests : iterable of Evidence

    Returns
    -------
    Verdict

    Examples
    --------
    >>> t = [Evidence("tuning", "gate", "pass", 0.2, 0.5),
    ...      Evidence("topology", "necessary", "pass", [1, 1], [1, 1]),
    ...      Evidence("drift", "specific", "pass", 0.01, 0.0),
    ...      Evidence("fluctuations", "specific", "inconclusive", 0.1, 0.5, power=False)]
    >>> combine(t).attractor
    True
    >>> combine(t[:3] + [Evidence("sleep co-firing", "specific", "fail", 0.1, 0.5, veto=True)]
    ...         ).attractor
    'inconclusive'
    """
    tests = {t.name: t for t in tests}
    v = Verdict(None, "", tests)
    gate_failed = v.named("fail", "gate")
    if gate_failed:
        return Verdict(False, f"not tuned: {_names(gate_failed)} failed, so there is no ring "
                       "or torus to judge", tests)
    necessary_failed = v.named("fail", "necessary")
    if necessary_failed:
        return Verdict(False, f"{_names(necessary_failed)} failed: the activity does not lie "
                       "on the manifold", tests)
    passed, failed = v.named("pass", "specific"), v.named("fail", "specific")
    vetoed = [k for k in failed if tests[k].veto]
    open_necessary = v.named("inconclusive", "necessary")
    if failed and not passed:
        return Verdict(False, f"{_names(failed)} failed and no test specific to an attractor "
                       "passed: the activity is explained by its input", tests)
    if passed and not vetoed and not open_necessary:
        weak = (f"; {_names(failed)} failed, as an anchored or quiet attractor's can"
                if failed else "")
        return Verdict(True, f"{_names(passed)} passed (evidence an input-driven population "
                       f"cannot give), and the topology holds{weak}", tests)
    if passed and vetoed:
        why = f"conflicting evidence: {_names(passed)} passed, {_names(vetoed)} failed"
    elif open_necessary:
        why = (f"{_names(open_necessary)} could not decide, so the manifold itself is open"
               + (f" ({_names(passed)} passed)" if passed else ""))
    else:
        why = ("no test specific to an attractor had the power to decide "
               f"({_names(v.named('inconclusive', 'specific'))})")
    return Verdict("inconclusive", why, tests)
