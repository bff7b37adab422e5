import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.capabilities.envelope import LedgerPolicy
from frostline.contract.identity import Identity, digest
from frostline.contract.ledger import OccurrenceLedger, RepeatAction, resolve
from frostline.contract.records import SlotRecord


def committed(site, path, occ, payload):
    return SlotRecord("r", site, path, occ, "echo", digest(payload), payload, {}, 1)


@pytest.mark.parametrize(("policy", "side_effecting", "action"), [
    ("off", True, RepeatAction.ALLOW), ("off", False, RepeatAction.ALLOW),
    ("warn", True, RepeatAction.WARN), ("warn", False, RepeatAction.WARN),
    ("deny", True, RepeatAction.DENY), ("deny", False, RepeatAction.DENY),
    ("auto", True, RepeatAction.DENY), ("auto", False, RepeatAction.WARN),
])
def test_policy_resolution(policy, side_effecting, action):
    assert resolve(policy, side_effecting=side_effecting) is action


def test_repeat_is_same_site_and_path_same_digest_at_another_occurrence():
    ledger = OccurrenceLedger([committed("s/#0", (), 0, {"p": 1}), committed("s/#0", (), 1, {"p": 1}),
                               committed("s/#0", (2,), 0, {"p": 9})])
    h = digest({"p": 1})
    rep = ledger.check(Identity("s/#0", (), 2), "echo", h, policy="auto", side_effecting=True)
    assert rep is not None and rep.committed == (0, 1) and rep.action is RepeatAction.DENY
    assert rep.to_dict()["committed_occurrences"] == [0, 1]
    # another path, another site, another payload: no repeat
    assert ledger.check(Identity("s/#0", (1,), 0), "echo", h, policy="warn", side_effecting=True) is None
    assert ledger.check(Identity("s/#1", (), 0), "echo", h, policy="warn", side_effecting=True) is None
    assert ledger.check(Identity("s/#0", (), 2), "echo", digest({"p": 2}), policy="warn",
                        side_effecting=True) is None
    # policy off checks nothing
    assert ledger.check(Identity("s/#0", (), 2), "echo", h, policy=LedgerPolicy.OFF,
                        side_effecting=True) is None


def test_the_identity_itself_is_not_its_own_repeat():
    ledger = OccurrenceLedger([committed("s/#0", (), 0, {"p": 1})])
    assert ledger.committed(Identity("s/#0", (), 0), digest({"p": 1})) == ()


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2)), max_size=30), st.integers(0, 8),
       st.integers(0, 2))
def test_ledger_reports_exactly_the_other_occurrences_with_that_digest(commits, occ, value):
    ledger = OccurrenceLedger()
    for o, v in commits:
        ledger.add(Identity("s/#0", (), o), digest({"v": v}))
    expected = sorted({o for o, v in commits if v == value and o != occ})
    assert list(ledger.committed(Identity("s/#0", (), occ), digest({"v": value}))) == expected
