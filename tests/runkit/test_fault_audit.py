"""Every case of the fault audit of issue 45 (``tests/fault_audit.py``) as a test: exit status,
the one line on stderr and the listing of the folder before and after, through ``main(argv)``.

The shared models (a ring, a torus, a flows field, recorded counts and their cells) are built
once for the module; each case then takes a fraction of a second to a few seconds.
"""

import pytest
from fault_audit import CASES, Env


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return Env(tmp_path_factory.mktemp("audit"))


@pytest.mark.parametrize("case", CASES, ids=[f"{c.group}-{c.name}" for c in CASES])
def test_fault_audit_case(env, case):
    case.check(env)


def test_every_group_of_the_issue_has_cases():
    counts = {g: sum(c.group == g for c in CASES) for g in range(1, 10)}
    assert all(counts.values()), counts
    assert len({c.name for c in CASES}) == len(CASES)  # one test a case
